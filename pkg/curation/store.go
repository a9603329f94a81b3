package curation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/schema"
)

// The log of a corpus is one value of the state bucket (schema.CurationLogKey),
// appended to by compare-and-set, so that concurrent appends are ordered and none is
// lost; the grapher applies it in that order.

// Load returns a corpus's log (empty when it has none) and the value's revision (0
// when it has none).
func Load(ctx context.Context, kv bus.KV, corpus string) ([]Entry, uint64, error) {
	e, err := kv.Entry(ctx, schema.CurationLogKey(corpus))
	if errors.Is(err, bus.ErrNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading the curation log of %s: %w", corpus, err)
	}
	var log []Entry
	if err := json.Unmarshal(e.Value, &log); err != nil {
		return nil, 0, fmt.Errorf("decoding the curation log of %s: %w", corpus, err)
	}
	return log, e.Revision, nil
}

// newID is a new operation id: the time in hex (so ids sort by creation) and random bits.
func newID() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatInt(time.Now().UnixMilli(), 16) + hex.EncodeToString(b[:])
}

// Append adds op to a corpus's log after check approves the log it is appended to,
// retrying on a concurrent append; it returns the new entry.
func Append(ctx context.Context, kv bus.KV, corpus string, op Op, check func([]Entry) error) (Entry, error) {
	for {
		log, rev, err := Load(ctx, kv, corpus)
		if err != nil {
			return Entry{}, err
		}
		if len(log) >= MaxOps {
			return Entry{}, fmt.Errorf("%w: the curation log of %s holds %d entries, its limit", ErrConflict, corpus, MaxOps)
		}
		if check != nil {
			if err := check(log); err != nil {
				return Entry{}, err
			}
		}
		e := Entry{ID: newID(), At: time.Now().UTC(), Op: op}
		b, err := json.Marshal(append(log, e))
		if err != nil {
			return Entry{}, err
		}
		if rev == 0 {
			_, err = kv.Create(ctx, schema.CurationLogKey(corpus), b)
		} else {
			_, err = kv.Update(ctx, schema.CurationLogKey(corpus), b, rev)
		}
		if errors.Is(err, bus.ErrConflict) {
			continue // another append came first: check again on the new log
		}
		if err != nil {
			return Entry{}, fmt.Errorf("appending to the curation log of %s: %w", corpus, err)
		}
		return e, nil
	}
}

// Applied is how many entries of a corpus's log the grapher has applied.
func Applied(ctx context.Context, kv bus.KV, corpus string) (int, error) {
	b, err := kv.Get(ctx, schema.CurationAppliedKey(corpus))
	if errors.Is(err, bus.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the applied curation of %s: %w", corpus, err)
	}
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return 0, fmt.Errorf("applied curation of %s: %w", corpus, err)
	}
	return n, nil
}

// SetApplied records how many entries of a corpus's log the graph has applied.
func SetApplied(ctx context.Context, kv bus.KV, corpus string, n int) error {
	if err := kv.Put(ctx, schema.CurationAppliedKey(corpus), []byte(strconv.Itoa(n))); err != nil {
		return fmt.Errorf("recording the applied curation of %s: %w", corpus, err)
	}
	return nil
}

// LoadStatus returns the statuses the grapher last computed, by operation id.
func LoadStatus(ctx context.Context, kv bus.KV, corpus string) (map[string]Status, error) {
	b, err := kv.Get(ctx, schema.CurationStatusKey(corpus))
	if errors.Is(err, bus.ErrNotFound) {
		return map[string]Status{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the curation status of %s: %w", corpus, err)
	}
	st := map[string]Status{}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("decoding the curation status of %s: %w", corpus, err)
	}
	return st, nil
}

// SaveStatus records the statuses of a corpus's operations.
func SaveStatus(ctx context.Context, kv bus.KV, corpus string, st map[string]Status) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := kv.Put(ctx, schema.CurationStatusKey(corpus), b); err != nil {
		return fmt.Errorf("recording the curation status of %s: %w", corpus, err)
	}
	return nil
}

// Originals reads the original extractions the grapher kept for a corpus, by chunk id.
func Originals(ctx context.Context, kv bus.KV, corpus string) (map[string]graphstore.ChunkExtraction, error) {
	keys, err := kv.Keys(ctx, schema.CurationOriginalPrefix(corpus))
	if err != nil {
		return nil, fmt.Errorf("listing the original extractions of %s: %w", corpus, err)
	}
	out := make(map[string]graphstore.ChunkExtraction, len(keys))
	for _, k := range keys {
		b, err := kv.Get(ctx, k)
		if errors.Is(err, bus.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading an original extraction of %s: %w", corpus, err)
		}
		var ce graphstore.ChunkExtraction
		if err := json.Unmarshal(b, &ce); err != nil {
			return nil, fmt.Errorf("decoding an original extraction of %s: %w", corpus, err)
		}
		out[ce.ChunkID] = ce
	}
	return out, nil
}

// PutOriginal keeps a chunk's extraction as extracted.
func PutOriginal(ctx context.Context, kv bus.KV, corpus string, ce graphstore.ChunkExtraction) error {
	b, err := json.Marshal(ce)
	if err != nil {
		return err
	}
	if err := kv.Put(ctx, schema.CurationOriginalKey(corpus, ce.ChunkID), b); err != nil {
		return fmt.Errorf("keeping the original extraction of chunk %s: %w", ce.ChunkID, err)
	}
	return nil
}

// DeleteOriginal forgets a chunk's original extraction.
func DeleteOriginal(ctx context.Context, kv bus.KV, corpus, chunkID string) error {
	if err := kv.Delete(ctx, schema.CurationOriginalKey(corpus, chunkID)); err != nil {
		return fmt.Errorf("deleting the original extraction of chunk %s: %w", chunkID, err)
	}
	return nil
}

// AppliedState is the state the grapher's graph is curated by: the entries of the log
// it has applied, but those it found inactive. The query service links question
// words through its Aliases.
func AppliedState(ctx context.Context, kv bus.KV, corpus string) (*State, error) {
	log, _, err := Load(ctx, kv, corpus)
	if err != nil || len(log) == 0 {
		return nil, err
	}
	n, err := Applied(ctx, kv, corpus)
	if err != nil {
		return nil, err
	}
	st, err := LoadStatus(ctx, kv, corpus)
	if err != nil {
		return nil, err
	}
	return Fold(log[:min(n, len(log))], Inactive(st)), nil
}
