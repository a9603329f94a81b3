package extractor

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
)

// deleteDocument makes the deletion at seq own the document, unless a later event owns
// it, then retires every chunk of every version before it (finish). The stages after
// the chunker do the rest: the grapher removes the chunks' contributions (entities and
// relationships left without a mention disappear, the others lose what the document
// said), reruns community detection and the entity records follow; the summarizer
// rewrites the reports of the communities that changed. An id never indexed gets a
// deleted record and nothing else: an older version still on its way then finds
// itself superseded. fromDrop is set when a corpus drop at seq deletes the document.
func (s *Service) deleteDocument(ctx context.Context, corpus string, seq uint64, docID string, fromDrop bool) error {
	for {
		rec, rev, err := pipeline.LoadDocument(ctx, s.state, corpus, docID)
		if err != nil {
			return err
		}
		if rev != 0 && rec.Seq > seq {
			return nil // a later publication or deletion owns the document
		}
		if rev != 0 && rec.Seq == seq {
			break // our own claim (a redelivery, or a drop going over it again)
		}
		if !fromDrop {
			dropped, err := s.droppedSince(ctx, corpus, seq)
			if err != nil || dropped {
				return err // the drop after this deletion deletes the document anyway
			}
		}
		next := pipeline.DocumentRecord{ID: docID, Seq: seq, Deleted: true, State: pipeline.StateDeleting,
			Retire: rec.Superseded(pipeline.ChunkSet{})}
		if len(next.Retire) == 0 {
			next.State = pipeline.StateDeleted
		}
		_, err = pipeline.StoreDocument(ctx, s.state, corpus, next, rev)
		if errors.Is(err, bus.ErrConflict) {
			continue
		}
		if err != nil {
			return err
		}
		if !rec.Known() {
			s.log.InfoContext(ctx, "deletion of an unknown document: nothing to remove", "corpus", corpus, "document", docID, "seq", seq)
		}
		break
	}
	// A drop after seq recorded and listed between the check above and our claim did
	// not see the document (it had no record): apply it now, as indexDocument does.
	if !fromDrop {
		if dropped, err := s.droppedSince(ctx, corpus, seq); err != nil || dropped {
			if err != nil {
				return err
			}
			return s.applyDrop(ctx, corpus, docID)
		}
	}
	return s.finish(ctx, corpus, docID, seq)
}

// dropCorpus deletes every document of a corpus published before the drop at seq. It
// first records the drop on the corpus, so that a document event older than the drop
// that arrives later finds itself superseded; then it deletes each document the
// chunker knows of through the same cascade as a deletion, removes their records
// (the corpus record orders what they did), forgets the corpus's cache entries and
// its quarantined records (pipeline.DropQuarantine: the records of every stage; the
// grapher's next run releases those it quarantines after this). A redelivery after a crash goes over the same ground again.
func (s *Service) dropCorpus(ctx context.Context, corpus string, seq uint64) error {
	for {
		c, rev, err := pipeline.LoadCorpus(ctx, s.state, corpus)
		if err != nil {
			return err
		}
		if c.DroppedAt >= seq {
			if c.DroppedAt > seq {
				return nil // a later drop did, or does, all of this
			}
			break
		}
		c.DroppedAt = seq
		_, err = pipeline.StoreCorpus(ctx, s.state, corpus, c, rev)
		if errors.Is(err, bus.ErrConflict) {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	recs, err := pipeline.ListDocuments(ctx, s.state, corpus)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.Seq > seq {
			continue // published after the drop
		}
		if err := s.applyDrop(ctx, corpus, rec.ID); err != nil {
			return err
		}
	}
	if err := s.forgetCache(ctx, schema.CorpusCacheScope(corpus)); err != nil {
		return err
	}
	if err := pipeline.DropQuarantine(ctx, s.state, corpus); err != nil {
		return fmt.Errorf("dropping corpus %s: %w", corpus, err)
	}
	s.log.InfoContext(ctx, "corpus dropped", "corpus", corpus, "seq", seq, "documents", len(recs))
	return nil
}

// applyDrop deletes one document under the corpus's last drop and then its record.
func (s *Service) applyDrop(ctx context.Context, corpus, docID string) error {
	c, _, err := pipeline.LoadCorpus(ctx, s.state, corpus)
	if err != nil {
		return err
	}
	if err := s.deleteDocument(ctx, corpus, c.DroppedAt, docID, true); err != nil {
		return err
	}
	rec, rev, err := pipeline.LoadDocument(ctx, s.state, corpus, docID)
	if err != nil || rev == 0 || rec.Seq != c.DroppedAt || rec.State != pipeline.StateDeleted {
		return err // gone, or owned by a later event
	}
	err = s.state.DeleteRevision(ctx, schema.DocumentKey(corpus, docID), rev)
	if errors.Is(err, bus.ErrConflict) {
		return nil // a later event took it over meanwhile
	}
	if err != nil {
		return fmt.Errorf("removing the record of dropped document %s: %w", docID, err)
	}
	return nil
}

// droppedSince reports whether the corpus was dropped at or after seq: an event at
// seq is then superseded by the drop.
func (s *Service) droppedSince(ctx context.Context, corpus string, seq uint64) (bool, error) {
	c, _, err := pipeline.LoadCorpus(ctx, s.state, corpus)
	if err != nil {
		return false, err
	}
	return c.DroppedAt > 0 && c.DroppedAt >= seq, nil
}

// forgetCache deletes the LLM cache entries filed under scope.
func (s *Service) forgetCache(ctx context.Context, scope string) error {
	if _, err := llm.ForgetScope(ctx, s.cache, scope); err != nil {
		return fmt.Errorf("forgetting cached model answers: %w", err)
	}
	return nil
}
