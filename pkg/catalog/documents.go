package catalog

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
)

// States of a document.
const (
	// DocumentPending: a version of the document is published and not yet chunked.
	DocumentPending = "pending"
	// DocumentIndexed: the current version's chunks are written (searchable by dense and
	// BM25 search); the graph catches up as the corpus status shows.
	DocumentIndexed = "indexed"
	// DocumentFailed: a stage gave up on the document or one of its chunks since its
	// record was last written; Reason says why.
	DocumentFailed = "failed"
)

// Document is one document of a corpus.
type Document struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	ContentHash string    `json:"content_hash"`
	Chunks      int       `json:"chunks"`
	State       string    `json:"state"`
	Reason      string    `json:"reason,omitempty"`
	Updated     time.Time `json:"updated"`
}

// Page is one page of a corpus's documents; Next is the cursor of the following page
// ("" after the last).
type Page struct {
	Documents []Document `json:"documents"`
	Next      string     `json:"next,omitempty"`
}

// ErrInvalid is matched by errors about the caller's arguments (a bad cursor or limit).
var ErrInvalid = errkind.Public(errkind.Invalid, "invalid argument")

// MaxPage bounds the documents of one page.
const MaxPage = 1000

// maxPendingRead bounds the document events read from the stream's backlog per
// listing; documents beyond it show as they were last recorded.
const maxPendingRead = 20000

// Documents lists a corpus's documents in a stable order (by a hash of the id), limit
// at a time, starting after cursor ("" for the first page).
func (c *Catalog) Documents(ctx context.Context, corpus, cursor string, limit int) (Page, error) {
	if err := events.ValidateCorpus(corpus); err != nil {
		return Page{}, err
	}
	if limit < 1 || limit > MaxPage {
		return Page{}, fmt.Errorf("%w: limit %d is outside 1..%d", ErrInvalid, limit, MaxPage)
	}
	if cursor != "" && !isKeyHash(cursor) {
		return Page{}, fmt.Errorf("%w: cursor %q is not one this API returned", ErrInvalid, cursor)
	}
	v, err := c.view(ctx, corpus, "")
	if err != nil {
		return Page{}, err
	}
	hashes := v.hashes()
	i, _ := slices.BinarySearch(hashes, cursor)
	if i < len(hashes) && hashes[i] == cursor {
		i++
	}
	page := Page{Documents: make([]Document, 0, min(limit, len(hashes)-i))}
	firsts := map[int]string{}
	for ; i < len(hashes) && len(page.Documents) < limit; i++ {
		d, first, ok, err := v.document(ctx, hashes[i])
		if err != nil {
			return Page{}, err
		}
		if ok {
			firsts[len(page.Documents)] = first
			page.Documents = append(page.Documents, d)
		}
	}
	if i < len(hashes) {
		page.Next = hashes[i-1]
	}
	titles := &titleReader{c: c, corpus: corpus}
	for j := range page.Documents {
		titles.want(&page.Documents[j], firsts[j])
	}
	if err := titles.read(ctx); err != nil {
		return Page{}, err
	}
	return page, nil
}

// Document describes one document; ErrNotFound if the corpus has no such document
// (never published, or deleted).
func (c *Catalog) Document(ctx context.Context, corpus, id string) (Document, error) {
	if err := events.ValidateCorpus(corpus); err != nil {
		return Document{}, err
	}
	hash := keyHash(schema.DocumentKey(corpus, id))
	v, err := c.view(ctx, corpus, hash)
	if err != nil {
		return Document{}, err
	}
	d, first, ok, err := v.document(ctx, hash)
	if err != nil {
		return Document{}, err
	}
	if !ok {
		return Document{}, fmt.Errorf("%w: document %q in corpus %s", ErrNotFound, id, corpus)
	}
	d.ID = id
	titles := &titleReader{c: c, corpus: corpus}
	titles.want(&d, first)
	if err := titles.read(ctx); err != nil {
		return Document{}, err
	}
	return d, nil
}

// documentCount counts the documents Documents lists: pending, indexed or failed, not
// those whose record says they were deleted.
func (c *Catalog) documentCount(ctx context.Context, corpus string) (int, error) {
	v, err := c.view(ctx, corpus, "")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, h := range v.hashes() {
		_, _, ok, err := v.document(ctx, h)
		if err != nil {
			return 0, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// view is what a listing reads once per request: the record keys, the versions
// waiting in the stream and the dead letters, each by the hash of the document id
// that ends its record key.
type view struct {
	corpus   string
	bus      *bus.Bus
	recorded map[string]bool
	pending  map[string]pendingVersion
	failed   map[string]deadLetter
}

// view reads what is known of every document of a corpus, or of the one document
// whose key ends in only.
func (c *Catalog) view(ctx context.Context, corpus, only string) (*view, error) {
	v := &view{corpus: corpus, bus: c.bus, recorded: map[string]bool{}}
	if only != "" {
		v.recorded[only] = true // documentRecord says whether it exists
	} else {
		keys, err := c.recordKeys(ctx, corpus)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			v.recorded[keyHash(k)] = true
		}
	}
	var err error
	if v.pending, err = c.pendingVersions(ctx, corpus); err != nil {
		return nil, err
	}
	if v.failed, err = c.failures(ctx, corpus); err != nil {
		return nil, err
	}
	return v, nil
}

func (c *Catalog) recordKeys(ctx context.Context, corpus string) ([]string, error) {
	kv, err := c.bus.KV(ctx, schema.StateBucket)
	if errors.Is(err, bus.ErrNotFound) {
		return nil, nil // the pipeline never ran
	}
	if err != nil {
		return nil, fmt.Errorf("listing the documents of %s: %w", corpus, err)
	}
	keys, err := kv.Keys(ctx, documentPrefix(corpus))
	if err != nil {
		return nil, fmt.Errorf("listing the documents of %s: %w", corpus, err)
	}
	return keys, nil
}

// hashes are the documents' key hashes, sorted.
func (v *view) hashes() []string {
	set := map[string]bool{}
	for h := range v.recorded {
		set[h] = true
	}
	for h := range v.pending {
		set[h] = true
	}
	for h := range v.failed {
		set[h] = true
	}
	out := make([]string, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// document says what is known of the document whose key ends in hash; ok is false
// when nothing is (or the record says it was deleted).
func (v *view) document(ctx context.Context, hash string) (d Document, firstChunk string, ok bool, err error) {
	var rec record
	var recorded bool
	if v.recorded[hash] {
		if rec, recorded, err = documentRecord(ctx, v.bus, documentPrefix(v.corpus)+hash); err != nil {
			return Document{}, "", false, err
		}
	}
	pv, pending := v.pending[hash]
	if recorded && pending && pv.contentHash == rec.contentHash && !pv.at.After(rec.updated) {
		pending = false // the waiting event is the version recorded (acknowledged out of order)
	}
	f, failed := v.failed[hash]
	failed = failed && (!recorded || f.at.After(rec.updated)) && (!pending || f.at.After(pv.at))
	if !recorded && !pending && !failed {
		return Document{}, "", false, nil
	}
	d = Document{ID: rec.id, Title: rec.title, ContentHash: rec.contentHash, Chunks: rec.chunks, State: DocumentIndexed, Updated: rec.updated}
	if pending {
		d.State, d.Updated = DocumentPending, pv.at
		d.ID, d.ContentHash = pv.id, pv.contentHash
		if pv.title != "" {
			d.Title = pv.title
		}
	}
	if failed {
		d.State, d.Reason, d.Updated = DocumentFailed, f.reason, f.at
		if d.ID == "" {
			d.ID = f.documentID
		}
		if d.Title == "" {
			d.Title = f.title
		}
	}
	if rec.deleted && !pending && !failed {
		return Document{}, "", false, nil
	}
	return d, rec.firstChunk, true, nil
}

func documentPrefix(corpus string) string {
	return strings.TrimSuffix(schema.DocumentKey(corpus, "x"), keyHash(schema.DocumentKey(corpus, "x")))
}

// keyHash is the hash a document record key ends with.
func keyHash(key string) string { return key[strings.LastIndexByte(key, '.')+1:] }

func isKeyHash(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && len(s) == len(keyHash(schema.DocumentKey("c", "x")))
}

// eventDocument is the id of the document an event of the pipeline belongs to (a
// document event's id, a chunk's or an extraction's document_id; "" for others), and
// its title when the event carries it.
func eventDocument(data []byte) (id, title string) {
	var ev struct {
		Schema        string `json:"schema"`
		ID            string `json:"id"`
		Title         string `json:"title"`
		DocumentID    string `json:"document_id"`
		DocumentTitle string `json:"document_title"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return "", ""
	}
	if ev.DocumentID != "" {
		return ev.DocumentID, ev.DocumentTitle
	}
	if ev.Schema == events.SchemaDocument {
		return ev.ID, ev.Title
	}
	return "", ""
}

// pendingVersion is a version of a document waiting in the document stream.
type pendingVersion struct {
	id, title, contentHash string
	at                     time.Time
}

// pendingVersions reads the document events of a corpus the chunker has not
// acknowledged yet (above its acknowledgement floor), the latest per document.
func (c *Catalog) pendingVersions(ctx context.Context, corpus string) (map[string]pendingVersion, error) {
	out := map[string]pendingVersion{}
	floor, waiting, err := c.chunkerFloor(ctx, corpus)
	if err != nil || !waiting {
		return out, err
	}
	_, err = c.bus.ReadStream(ctx, pipeline.StreamName(events.KindDocuments), events.Subject(events.KindDocuments, corpus), floor+1, maxPendingRead,
		func(m bus.StoredMessage) bool {
			var d events.Document
			if json.Unmarshal(m.Data, &d) != nil || d.ID == "" || d.Schema != events.SchemaDocument {
				return true // the chunker dead-letters it; the dead letter tells
			}
			if d.ContentHash == "" && d.Text != "" {
				d.ContentHash = events.Hash(d.Text)
			}
			out[keyHash(schema.DocumentKey(corpus, d.ID))] = pendingVersion{id: d.ID, title: d.Title, contentHash: d.ContentHash, at: m.Time.UTC()}
			return true
		})
	if err != nil {
		return nil, fmt.Errorf("reading the documents waiting in %s: %w", corpus, err)
	}
	return out, nil
}

// chunkerFloor is the stream sequence up to which the chunker has handled every
// document event of the corpus, and whether any event of the corpus waits above it.
// It is the one place that knows how the chunker consumes: one durable consumer for
// every corpus (pipeline.Durable), whose floor is the lowest over all corpora, so an
// event below it is handled and one above it may be (document reconciles that with the
// record).
func (c *Catalog) chunkerFloor(ctx context.Context, corpus string) (uint64, bool, error) {
	stream := pipeline.StreamName(events.KindDocuments)
	counts, err := c.bus.SubjectCounts(ctx, stream, events.Subject(events.KindDocuments, corpus))
	if errors.Is(err, bus.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("counting the documents of %s: %w", corpus, err)
	}
	if counts[events.Subject(events.KindDocuments, corpus)] == 0 {
		return 0, false, nil
	}
	ci, err := c.bus.ConsumerInfo(ctx, stream, pipeline.Durable(pipeline.StageChunker))
	if errors.Is(err, bus.ErrNotFound) {
		return 0, true, nil // the chunker has not started on the corpus: everything waits
	}
	if err != nil {
		return 0, false, fmt.Errorf("reading the chunker's progress on %s: %w", corpus, err)
	}
	// The consumer's pending count is updated after a publish is acknowledged, so a
	// version published just before this read could be missed; the stream's own count
	// above the floor is not.
	n, err := c.bus.CountAfter(ctx, stream, events.Subject(events.KindDocuments, corpus), ci.AckFloorSeq)
	if err != nil {
		return 0, false, fmt.Errorf("reading the documents waiting in %s: %w", corpus, err)
	}
	return ci.AckFloorSeq, n > 0, nil
}

// failures reads the dead letters of a corpus, the latest per document.
func (c *Catalog) failures(ctx context.Context, corpus string) (map[string]deadLetter, error) {
	out := map[string]deadLetter{}
	counts, err := c.bus.SubjectCounts(ctx, pipeline.DLQStream, events.SubjectPrefix+".dlq.*."+corpus)
	if errors.Is(err, bus.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("counting the dead letters of %s: %w", corpus, err)
	}
	if len(counts) == 0 {
		return out, nil
	}
	dls, _, err := c.deadLetters(ctx, corpus, MaxDeadLetters)
	if err != nil {
		return nil, err
	}
	for _, d := range dls {
		if d.documentID == "" {
			continue
		}
		h := keyHash(schema.DocumentKey(corpus, d.documentID))
		if prev, ok := out[h]; !ok || !d.at.Before(prev.at) {
			out[h] = d
		}
	}
	return out, nil
}
