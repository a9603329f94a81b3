package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/schema"
)

// Document states of a DocumentRecord.
const (
	// StateWriting: the current version's chunks are being written, or the
	// chunks of superseded versions are being retired.
	StateWriting = "writing"
	// StateIndexed: the current version's chunks are written and published, and
	// nothing of an older version is left to retire.
	StateIndexed = "indexed"
	// StateDeleting: a deletion owns the document and is retiring its chunks.
	StateDeleting = "deleting"
	// StateDeleted: the document is deleted and every chunk it had is retired.
	StateDeleted = "deleted"
)

// hashLen is the length of the content hash in a chunk id (chunking.Chunk.ID).
const hashLen = 12

// ChunkSet names the chunks of one version of a document. Chunk ids are
// "<document id>:<position>:<content hash>@<version>": the version makes them
// unique per version, so that retiring one version's chunks never touches a
// chunk another version wrote.
type ChunkSet struct {
	// Version is the token of the version (the stream sequence of the event
	// that created it, in decimal).
	Version string `json:"version,omitempty"`
	// Hashes holds the 12-hex-digit content hash of each chunk, concatenated
	// in position order (a 20 MB document has ~9,000 chunks: 108 kB).
	Hashes string `json:"hashes,omitempty"`
	// IDs lists chunk ids verbatim: chunks written before versions existed.
	IDs []string `json:"ids,omitempty"`
}

// Equal reports whether two sets name the same chunks.
func (c ChunkSet) Equal(o ChunkSet) bool {
	return c.Version == o.Version && c.Hashes == o.Hashes && slices.Equal(c.IDs, o.IDs)
}

// Len is the number of chunks in the set.
func (c ChunkSet) Len() int { return len(c.IDs) + len(c.Hashes)/hashLen }

// ChunkIDs returns the ids of the set's chunks of document docID.
func (c ChunkSet) ChunkIDs(docID string) []string {
	out := append([]string(nil), c.IDs...)
	for i := 0; i+hashLen <= len(c.Hashes); i += hashLen {
		out = append(out, ChunkID(docID, i/hashLen, c.Hashes[i:i+hashLen], c.Version))
	}
	return out
}

// ChunkID is the id of the chunk at position pos of version version of a
// document, hash being the first 12 hex digits of the chunk text's SHA-256.
func ChunkID(docID string, pos int, hash, version string) string {
	return docID + ":" + strconv.Itoa(pos) + ":" + hash + "@" + version
}

// ChunkIdentity is a chunk id without its version: what stays the same when a
// document is deleted and published again with the same text.
func ChunkIdentity(chunkID string) string {
	i := strings.LastIndexByte(chunkID, '@')
	if i < 0 || i == len(chunkID)-1 {
		return chunkID
	}
	if _, err := strconv.ParseUint(chunkID[i+1:], 10, 64); err != nil {
		return chunkID // an id written before versions, with an '@' in its document id
	}
	return chunkID[:i]
}

// DocumentRecord is the chunker's record of one document, in
// schema.StateBucket under schema.DocumentKey. It is the single place that
// orders a document's versions: it is only ever written by compare-and-set
// (bus.KV Create/Update), and an event may take the document over only if its
// stream sequence is higher than Seq. See docs/adr/0022-document-versions.md.
type DocumentRecord struct {
	ID string `json:"id"`
	// Seq is the stream sequence (in GRAPHRAG_DOCUMENTS) of the event that owns
	// the document: the last publication or deletion processed.
	Seq uint64 `json:"seq"`
	// Deleted is set when that event was a deletion (or a corpus drop).
	Deleted bool   `json:"deleted,omitempty"`
	State   string `json:"state,omitempty"`
	// Chunks are the current version's chunks; empty when deleted. Their
	// Version is the current version, which the stages compare with the
	// version a chunk or extraction event carries.
	Chunks ChunkSet `json:"chunks"`
	// Retire holds chunk sets of superseded versions whose chunks may still be
	// in the stores; whoever owns the record removes them, and a new owner
	// inherits the list, so a crash never forgets one.
	Retire []ChunkSet `json:"retire,omitempty"`
	// Fingerprint identifies the content and chunking of the current version:
	// a publication with the same fingerprint adopts its chunks unchanged.
	Fingerprint string    `json:"fingerprint,omitempty"`
	Title       string    `json:"title,omitempty"`
	ContentHash string    `json:"content_hash,omitempty"`
	UpdatedAt   time.Time `json:"updated_at,omitzero"`

	// LegacyChunkIDs are the chunks of a record written before versions
	// existed (its "chunk_ids"); decoding moves them into Chunks.IDs.
	LegacyChunkIDs []string `json:"chunk_ids,omitempty"`
}

// Known reports whether an event has taken the document over.
func (r DocumentRecord) Known() bool { return r.Seq != 0 || r.Chunks.Len() > 0 }

// Version is the token of the current version ("" when deleted or legacy).
func (r DocumentRecord) Version() string { return r.Chunks.Version }

// Superseded returns the chunk sets a new owner of the record must retire: the
// inherited list and the current chunks, unless they are keep, the new owner's own.
func (r DocumentRecord) Superseded(keep ChunkSet) []ChunkSet {
	out := append([]ChunkSet(nil), r.Retire...)
	if r.Chunks.Len() > 0 && !r.Chunks.Equal(keep) {
		out = append(out, r.Chunks)
	}
	return out
}

// IsCurrent reports whether version is the current version of a document: a chunk
// or an extraction of any other version is stale, and so is every one of a deleted
// document. An unversioned event (written before versions existed) is current.
func IsCurrent(ctx context.Context, kv bus.KV, corpus, docID, version string) (bool, error) {
	if version == "" {
		return true, nil
	}
	rec, rev, err := LoadDocument(ctx, kv, corpus, docID)
	if err != nil {
		return false, err
	}
	return rev != 0 && !rec.Deleted && rec.Version() == version, nil
}

// CorpusRecord is the chunker's record of a corpus, in schema.StateBucket under
// schema.CorpusKey: the stream sequence of its last drop. Every document event
// at or below DroppedAt is superseded by the drop.
type CorpusRecord struct {
	DroppedAt uint64    `json:"dropped_at"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// LoadDocument reads the record of a document and its revision for
// StoreDocument; a document never seen gives the zero record and revision 0.
func LoadDocument(ctx context.Context, kv bus.KV, corpus, docID string) (DocumentRecord, uint64, error) {
	var r DocumentRecord
	rev, err := loadJSON(ctx, kv, schema.DocumentKey(corpus, docID), &r)
	if err != nil {
		return r, 0, fmt.Errorf("reading the record of document %s: %w", docID, err)
	}
	r.upgrade()
	return r, rev, nil
}

// DecodeDocument decodes a document record read from schema.StateBucket by other means
// than LoadDocument (the catalog reads the bucket without a KV handle).
func DecodeDocument(data []byte) (DocumentRecord, error) {
	var r DocumentRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("decoding a document record: %w", err)
	}
	r.upgrade()
	return r, nil
}

// upgrade moves the chunk ids of a record written before versions into Chunks.
func (r *DocumentRecord) upgrade() {
	if len(r.LegacyChunkIDs) > 0 && r.Chunks.Len() == 0 {
		r.Chunks.IDs, r.LegacyChunkIDs = r.LegacyChunkIDs, nil
		r.State = StateIndexed
	}
}

// StoreDocument writes the record of a document if its revision is still rev
// (0: if it has none) and returns the new revision; another writer first gives
// an error wrapping bus.ErrConflict.
func StoreDocument(ctx context.Context, kv bus.KV, corpus string, r DocumentRecord, rev uint64) (uint64, error) {
	r.UpdatedAt = time.Now().UTC()
	next, err := storeJSON(ctx, kv, schema.DocumentKey(corpus, r.ID), r, rev)
	if err != nil {
		return 0, fmt.Errorf("writing the record of document %s: %w", r.ID, err)
	}
	return next, nil
}

// LoadCorpus reads the record of a corpus and its revision (zero when absent).
func LoadCorpus(ctx context.Context, kv bus.KV, corpus string) (CorpusRecord, uint64, error) {
	var r CorpusRecord
	rev, err := loadJSON(ctx, kv, schema.CorpusKey(corpus), &r)
	if err != nil {
		return r, 0, fmt.Errorf("reading the record of corpus %s: %w", corpus, err)
	}
	return r, rev, nil
}

// StoreCorpus writes the record of a corpus with compare-and-set, as
// StoreDocument.
func StoreCorpus(ctx context.Context, kv bus.KV, corpus string, r CorpusRecord, rev uint64) (uint64, error) {
	r.UpdatedAt = time.Now().UTC()
	next, err := storeJSON(ctx, kv, schema.CorpusKey(corpus), r, rev)
	if err != nil {
		return 0, fmt.Errorf("writing the record of corpus %s: %w", corpus, err)
	}
	return next, nil
}

// ListDocuments returns the records of every document of a corpus the chunker
// has seen, in key order, deleted ones (Deleted) and ones being written or retired
// (State) included.
func ListDocuments(ctx context.Context, kv bus.KV, corpus string) ([]DocumentRecord, error) {
	keys, err := kv.Keys(ctx, schema.DocumentPrefix(corpus))
	if err != nil {
		return nil, fmt.Errorf("listing the documents of %s: %w", corpus, err)
	}
	out := make([]DocumentRecord, 0, len(keys))
	for _, k := range keys {
		var r DocumentRecord
		if _, err := loadJSON(ctx, kv, k, &r); err != nil {
			return nil, fmt.Errorf("reading %s: %w", k, err)
		}
		if r.ID != "" || len(r.LegacyChunkIDs) > 0 { // skip a key deleted while we listed
			out = append(out, r)
		}
	}
	return out, nil
}

// loadJSON decodes the value of key into v and returns its revision; an absent
// key leaves v alone and returns 0.
func loadJSON(ctx context.Context, kv bus.KV, key string, v any) (uint64, error) {
	e, err := kv.Entry(ctx, key)
	if errors.Is(err, bus.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(e.Value, v); err != nil {
		return 0, fmt.Errorf("decoding %s: %w", key, err)
	}
	return e.Revision, nil
}

func storeJSON(ctx context.Context, kv bus.KV, key string, v any, rev uint64) (uint64, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("encoding %s: %w", key, err)
	}
	if rev == 0 {
		return kv.Create(ctx, key, b)
	}
	return kv.Update(ctx, key, b, rev)
}
