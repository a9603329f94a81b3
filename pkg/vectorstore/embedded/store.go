package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// On-disk names.
const (
	dbFile       = "vectors.db"
	collsDir     = "collections"
	snapshotFile = "hnsw.snap"
	lexicalDir   = "text.bleve"
)

// bbolt layout: collections/<name>/{spec, openindexseq, records/<id>,
// openindex/<id>, tombs/<seq>}. The collection bucket's sequence numbers
// every record write and every delete from a lexical collection. openindex
// holds, per record, what Open needs of it (openEntry), written in the
// transaction that writes the record; openindexseq is the sequence it is
// complete at.
var (
	bucketCollections = []byte("collections")
	bucketRecords     = []byte("records")
	bucketOpenIndex   = []byte("openindex")
	bucketTombs       = []byte("tombs") // deletions not yet known to be in the text index
	keySpec           = []byte("spec")
	keyOpenIndexSeq   = []byte("openindexseq") // the sequence the open index is complete at
)

// storedSpec is a collection's persisted definition. Incarnation tells
// derived files of a dropped and recreated collection apart.
type storedSpec struct {
	Dim         int    `json:"dim"`
	Lexical     bool   `json:"lexical"`
	Incarnation uint64 `json:"incarnation"`
}

// Store is the embedded vectorstore.Store. Its methods check their arguments, and are
// traced, in vectorstore.Validating, which holds the driver, store.
type Store struct {
	vectorstore.Store
	s *store
}

// Dir returns the directory the store lives in.
func (st *Store) Dir() string { return st.s.dir }

// Checkpoint writes the HNSW snapshot of every collection changed since its last one
// (see store.Checkpoint).
func (st *Store) Checkpoint(ctx context.Context) error { return st.s.Checkpoint(ctx) }

// store is the driver: records in bbolt, vectors and text indexes in memory.
type store struct {
	dir string
	cfg config
	db  *bolt.DB

	mu     sync.RWMutex // guards colls and closed
	colls  map[string]*collection
	closed bool
}

var _ vectorstore.Store = (*store)(nil)

// collection is one open collection. writeMu serializes writers (held across
// the bbolt commit, the memory update and the text index batch); mu excludes
// readers only while memory changes, so searches do not wait for fsync.
type collection struct {
	name string
	spec storedSpec
	dir  string

	writeMu   sync.Mutex
	pruneTomb uint64 // tombs up to this sequence are in the durable text index; guarded by writeMu

	// Upserts that wait for writeMu queue here; whichever takes writeMu first
	// writes them all in one commit (group commit, see Upsert). commits counts
	// the upsert commits, for tests.
	queueMu sync.Mutex
	queue   []*upsertReq
	commits atomic.Int64

	// openDecodes counts the records Open read whole, for tests.
	openDecodes int

	mu     sync.RWMutex
	gone   error // ErrNotFound after a drop, ErrClosed after Close
	dense  *denseIndex
	lex    bleve.Index // nil unless spec.Lexical
	lstats *lexStats   // nil unless spec.Lexical

	// At most one snapshot is written in the background at a time; Close,
	// Checkpoint and DropCollection wait for it. snapMu guards snapErr and
	// snapLost (insertions a failed snapshot did not cover).
	snapBusy atomic.Bool
	snapWG   sync.WaitGroup
	snapMu   sync.Mutex
	snapErr  error
	snapLost int
}

// Open opens or creates a store in dir. Only one Store may have dir open at a
// time (bbolt holds a file lock).
func Open(dir string, opts ...Option) (*Store, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o.apply(&cfg)
	}
	if err := os.MkdirAll(filepath.Join(dir, collsDir), 0o755); err != nil {
		return nil, fmt.Errorf("creating store directory: %w", err)
	}
	db, err := bolt.Open(filepath.Join(dir, dbFile), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("opening record database: %w", err)
	}
	s := &store{dir: dir, cfg: cfg, db: db, colls: make(map[string]*collection)}
	var names []string
	err = db.Update(func(tx *bolt.Tx) error {
		root, err := tx.CreateBucketIfNotExists(bucketCollections)
		if err != nil {
			return err
		}
		return root.ForEachBucket(func(k []byte) error {
			names = append(names, string(k))
			return nil
		})
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("reading collection list: %w", err)
	}
	for _, name := range names {
		c, err := s.loadCollection(name)
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("loading collection %q: %w", name, err)
		}
		s.colls[name] = c
	}
	if err := s.removeOrphans(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return &Store{Store: vectorstore.Validating(s), s: s}, nil
}

// removeOrphans deletes derived files of collections that no longer exist
// (a crash between dropping a bucket and removing its directory).
func (s *store) removeOrphans() error {
	entries, err := os.ReadDir(filepath.Join(s.dir, collsDir))
	if err != nil {
		return fmt.Errorf("listing collection directories: %w", err)
	}
	for _, e := range entries {
		if _, ok := s.colls[e.Name()]; ok {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.dir, collsDir, e.Name())); err != nil {
			return fmt.Errorf("removing orphan collection files: %w", err)
		}
	}
	return nil
}

func (s *store) collDir(name string) string { return filepath.Join(s.dir, collsDir, name) }

// loadCollection rebuilds a collection's memory state from bbolt, reusing the
// HNSW snapshot and the text index where they are intact.
func (s *store) loadCollection(name string) (*collection, error) {
	c := &collection{name: name, dir: s.collDir(name)}
	var bucketSeq uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCollections).Bucket([]byte(name))
		if err := json.Unmarshal(b.Get(keySpec), &c.spec); err != nil {
			return fmt.Errorf("decoding spec: %w", err)
		}
		bucketSeq = b.Sequence()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating collection directory: %w", err)
	}

	if err := s.ensureOpenIndex(name); err != nil {
		return nil, err
	}

	var lexSeq uint64
	var fresh bool
	if c.spec.Lexical {
		c.lex, lexSeq, fresh, err = openLexical(filepath.Join(c.dir, lexicalDir), c.spec.Incarnation)
		if err != nil {
			return nil, err
		}
	}
	if c.lex != nil {
		c.lstats = newLexStats()
	}
	x := newDenseIndex(s.cfg, c.spec.Dim)
	h, g, serr := readSnapshot(filepath.Join(c.dir, snapshotFile), s.cfg)
	if serr == nil && (h.Incarnation != c.spec.Incarnation || h.Dim != uint64(c.spec.Dim) || h.Seq > bucketSeq) {
		serr = errBadSnapshot
	}
	if serr == nil {
		x.graph = g
	}
	var snapKeys int
	if x.graph != nil {
		snapKeys = x.graph.len()
	}

	missing, found, ops, err := s.readOpenIndex(c, x, lexSeq, fresh)
	if err != nil {
		c.closeLex()
		return nil, err
	}
	switch {
	case len(x.docs) <= s.cfg.exactThreshold:
		// Exact scans suffice: drop the graph (docs keep the shared vectors).
		x.graph, x.nodes, x.dead = nil, make(map[uint64]*doc), 0
	case x.graph != nil:
		// Reconcile the snapshot with bbolt: nodes not found live are dead,
		// live records it lacks are added.
		x.dead = snapKeys - found
		keys := make([]uint64, len(missing))
		vecs := make([]qvec, len(missing))
		for i, d := range missing {
			keys[i], vecs[i] = d.seq, d.vec
			x.nodes[d.seq] = d
		}
		x.graph.insertBatch(keys, vecs)
		x.sinceSnap, x.replayed = len(missing), len(missing)
	}
	if x.graphWanted() {
		x.graph, x.nodes = x.buildGraph()
		x.dead = 0
		x.sinceSnap = len(x.docs)
	}
	c.dense = x

	if c.lex != nil {
		for start := 0; start < len(ops) || start == 0; start += textPageSize {
			end := min(start+textPageSize, len(ops))
			wm := lexSeq
			if end == len(ops) {
				wm = bucketSeq
			}
			if err := applyLexical(c.lex, ops[start:end], wm); err != nil {
				c.closeLex()
				return nil, fmt.Errorf("replaying text index: %w", err)
			}
		}
		c.pruneTomb = bucketSeq
	}
	// A rebuild or a long replay is saved at once, not redone by the next
	// open if this process does not close cleanly.
	c.maybeSnapshot(s.cfg, x.builds > 0)
	return c, nil
}

// ensureOpenIndex builds a collection's open index from its records when
// the file predates it, or when a binary that does not know the index wrote
// records after it (the stored mark is behind the collection's sequence):
// the one full read of the records, in one transaction, so that a crash
// leaves the old state or a complete index.
func (s *store) ensureOpenIndex(name string) error {
	var current bool
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCollections).Bucket([]byte(name))
		current = b.Bucket(bucketOpenIndex) != nil && bytes.Equal(b.Get(keyOpenIndexSeq), seqKey(b.Sequence()))
		return nil
	})
	if err != nil || current {
		return err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCollections).Bucket([]byte(name))
		if b.Bucket(bucketOpenIndex) != nil {
			if err := b.DeleteBucket(bucketOpenIndex); err != nil {
				return err
			}
		}
		ob, err := b.CreateBucket(bucketOpenIndex)
		if err != nil {
			return err
		}
		ob.FillPercent = 0.9 // written once, in key order
		err = b.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			e, err := recordEntry(v)
			if err != nil {
				return fmt.Errorf("record %q: %w", k, err)
			}
			return ob.Put(bytes.Clone(k), e)
		})
		if err != nil {
			return err
		}
		return markOpenIndex(b)
	})
	if err != nil {
		return fmt.Errorf("building the open index from the records: %w", err)
	}
	return nil
}

// markOpenIndex records that the open index is complete up to the
// collection's current sequence. Every write transaction ends with it.
func markOpenIndex(b *bolt.Bucket) error {
	seq := seqKey(b.Sequence())
	if bytes.Equal(b.Get(keyOpenIndexSeq), seq) {
		return nil // a delete that found nothing, say: no page to write
	}
	return b.Put(keyOpenIndexSeq, seq)
}

// readOpenIndex fills x from the open index, reading a whole record only
// when the snapshot lacks its vector or the text index lacks its text: the
// records are most of the file, and reading them made a cold open take a
// minute at 100k chunks. It returns the docs the snapshot lacks, the number
// it has, and the text index operations to replay.
func (s *store) readOpenIndex(c *collection, x *denseIndex, lexSeq uint64, fresh bool) (missing []*doc, found int, ops []lexOp, err error) {
	needText := func(seq uint64) bool { return c.lex != nil && (fresh || seq > lexSeq) }
	err = s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCollections).Bucket([]byte(c.name))
		if c.lex != nil && !fresh {
			// Deletions come before re-indexing: a tomb is always older than a
			// live record with the same ID.
			cur := b.Bucket(bucketTombs).Cursor()
			for k, v := cur.Seek(seqKey(lexSeq + 1)); k != nil; k, v = cur.Next() {
				ops = append(ops, lexOp{id: string(v), del: true})
			}
		}
		rc := b.Bucket(bucketRecords).Cursor() // one cursor: a Get allocates one each
		return b.Bucket(bucketOpenIndex).ForEach(func(k, v []byte) error {
			e, err := decodeEntry(v, x.keys)
			if err != nil {
				return fmt.Errorf("open index entry %q: %w", k, err)
			}
			snapVec, inSnap := x.graph.lookup(e.seq)
			inSnap = inSnap && len(snapVec.codes) == c.spec.Dim
			d := &doc{id: string(k), seq: e.seq, attrs: e.attrs}
			if !inSnap || needText(e.seq) {
				r, err := c.readRecord(rc, k, e.seq, inSnap, needText(e.seq))
				if err != nil {
					return err
				}
				if needText(e.seq) {
					ops = append(ops, lexOp{id: d.id, text: r.text, attrs: r.attrs})
				}
				if !inSnap {
					d.vec = quantize(r.vector)
				}
			}
			if c.lstats != nil {
				c.lstats.set(d.id, e.textLen)
			}
			if inSnap {
				d.vec = snapVec // share the snapshot's quantized copy
				x.nodes[d.seq] = d
				found++
			} else {
				missing = append(missing, d)
			}
			d.pos = len(x.all)
			x.all = append(x.all, d)
			x.docs[d.id] = d
			x.maxSeq = max(x.maxSeq, d.seq)
			return nil
		})
	})
	if err != nil {
		return nil, 0, nil, fmt.Errorf("reading records: %w", err)
	}
	return missing, found, ops, nil
}

// readRecord decodes the record id of an open index entry with sequence
// seq: its vector unless the snapshot has it, its text and attributes if
// the text index needs them.
func (c *collection) readRecord(rc *bolt.Cursor, id []byte, seq uint64, inSnap, text bool) (storedRecord, error) {
	c.openDecodes++
	k, v := rc.Seek(id)
	if !bytes.Equal(k, id) || v == nil {
		return storedRecord{}, fmt.Errorf("open index entry %q: %w: no such record", id, errCorrupt)
	}
	r, err := decodeRecordParts(v, !text, inSnap, !text)
	if err != nil {
		return storedRecord{}, fmt.Errorf("record %q: %w", id, err)
	}
	if r.seq != seq {
		return storedRecord{}, fmt.Errorf("record %q: %w: sequence %d, open index says %d", id, errCorrupt, r.seq, seq)
	}
	return r, nil
}

func (c *collection) closeLex() {
	if c.lex != nil {
		_ = c.lex.Close()
		c.lex = nil
	}
}

// coll returns the open collection.
func (s *store) coll(name string) (*collection, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, vectorstore.ErrClosed
	}
	c, ok := s.colls[name]
	if !ok {
		return nil, fmt.Errorf("collection %q: %w", name, vectorstore.ErrNotFound)
	}
	return c, nil
}

// EnsureCollection implements vectorstore.Store.
func (s *store) EnsureCollection(ctx context.Context, spec vectorstore.CollectionSpec) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return vectorstore.ErrClosed
	}
	if c, ok := s.colls[spec.Name]; ok {
		if c.spec.Dim != spec.Dim {
			return fmt.Errorf("collection %q has dimension %d, not %d: %w", spec.Name, c.spec.Dim, spec.Dim, vectorstore.ErrDimensionMismatch)
		}
		if spec.Lexical && !c.spec.Lexical {
			return fmt.Errorf("collection %q exists without a lexical index: %w", spec.Name, vectorstore.ErrUnsupported)
		}
		return nil
	}
	c := &collection{
		name: spec.Name,
		dir:  s.collDir(spec.Name),
		spec: storedSpec{Dim: spec.Dim, Lexical: spec.Lexical, Incarnation: rand.Uint64()},
	}
	// Derived files first, in a clean directory: if the commit below fails,
	// they are orphans and removed on the next open.
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("clearing collection directory: %w", err)
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("creating collection directory: %w", err)
	}
	if spec.Lexical {
		idx, _, _, err := openLexical(filepath.Join(c.dir, lexicalDir), c.spec.Incarnation)
		if err != nil {
			return fmt.Errorf("creating collection %q: %w", spec.Name, err)
		}
		c.lex = idx
		c.lstats = newLexStats()
	}
	raw, err := json.Marshal(c.spec)
	if err != nil {
		c.closeLex()
		return fmt.Errorf("encoding spec: %w", err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketCollections).CreateBucket([]byte(spec.Name))
		if err != nil {
			return err
		}
		if _, err := b.CreateBucket(bucketRecords); err != nil {
			return err
		}
		if _, err := b.CreateBucket(bucketOpenIndex); err != nil {
			return err
		}
		if err := markOpenIndex(b); err != nil {
			return err
		}
		if _, err := b.CreateBucket(bucketTombs); err != nil {
			return err
		}
		return b.Put(keySpec, raw)
	})
	if err != nil {
		c.closeLex()
		return fmt.Errorf("creating collection %q: %w", spec.Name, err)
	}
	c.dense = newDenseIndex(s.cfg, spec.Dim)
	s.colls[spec.Name] = c
	return nil
}

// DropCollection implements vectorstore.Store.
func (s *store) DropCollection(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return vectorstore.ErrClosed
	}
	c, ok := s.colls[name]
	if !ok {
		return fmt.Errorf("dropping collection %q: %w", name, vectorstore.ErrNotFound)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCollections).DeleteBucket([]byte(name))
	}); err != nil {
		return fmt.Errorf("dropping collection %q: %w", name, err)
	}
	delete(s.colls, name)
	c.gone = vectorstore.ErrNotFound
	c.closeLex()
	c.dense = nil
	c.snapWG.Wait() // its file would land in the removed directory
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("removing files of collection %q: %w", name, err)
	}
	return nil
}

// Collections implements vectorstore.Store.
func (s *store) Collections(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, vectorstore.ErrClosed
	}
	names := make([]string, 0, len(s.colls))
	for n := range s.colls {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// Ping implements vectorstore.Store.
func (s *store) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return vectorstore.ErrClosed
	}
	if err := s.db.View(func(tx *bolt.Tx) error { return nil }); err != nil {
		return fmt.Errorf("pinging record database: %w", err)
	}
	return nil
}

// Count implements vectorstore.Store.
func (s *store) Count(ctx context.Context, name string) (int, error) {
	c, unlock, err := s.readLocked(ctx, name)
	if err != nil {
		return 0, err
	}
	defer unlock()
	return len(c.dense.docs), nil
}

// readLocked returns the collection read-locked (unlock releases it), or the
// context's error, ErrNotFound, or the error that made the collection unusable.
func (s *store) readLocked(ctx context.Context, name string) (c *collection, unlock func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if c, err = s.coll(name); err != nil {
		return nil, nil, err
	}
	c.mu.RLock()
	if c.gone != nil {
		c.mu.RUnlock()
		return nil, nil, fmt.Errorf("collection %q: %w", name, c.gone)
	}
	return c, c.mu.RUnlock, nil
}

// List implements vectorstore.Store: a bbolt cursor over the records
// bucket, whose keys are the IDs in byte order.
func (s *store) List(ctx context.Context, name, after string, limit int) ([]string, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	c, err := s.coll(name)
	if err != nil {
		return nil, "", err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.gone != nil {
		return nil, "", fmt.Errorf("collection %q: %w", name, c.gone)
	}
	ids := make([]string, 0, min(limit, 1024))
	more := false
	err = s.db.View(func(tx *bolt.Tx) error {
		cur := tx.Bucket(bucketCollections).Bucket([]byte(name)).Bucket(bucketRecords).Cursor()
		k, _ := cur.Seek([]byte(after))
		if k != nil && string(k) == after {
			k, _ = cur.Next()
		}
		for ; k != nil; k, _ = cur.Next() {
			if len(ids) == limit {
				more = true
				break
			}
			ids = append(ids, string(k))
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("listing records of %q: %w", name, err)
	}
	if !more {
		return ids, "", nil
	}
	return ids, ids[len(ids)-1], nil
}

// Upsert implements vectorstore.Store.
func (s *store) Upsert(ctx context.Context, name string, recs []vectorstore.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c, err := s.coll(name)
	if err != nil {
		return err
	}
	if err := vectorstore.ValidateRecords(recs, c.spec.Dim); err != nil {
		return fmt.Errorf("upserting into %q: %w", name, err)
	}
	if len(recs) == 0 {
		return nil
	}
	req := &upsertReq{ctx: ctx, recs: recs}
	c.queueMu.Lock()
	c.queue = append(c.queue, req)
	c.queueMu.Unlock()

	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if req.done {
		return req.err // written by the writer that held writeMu before us
	}
	c.queueMu.Lock()
	group := c.queue
	c.queue = nil
	c.queueMu.Unlock()
	var all []vectorstore.Record
	var live []*upsertReq
	for _, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.err, r.done = err, true
			continue
		}
		all = append(all, r.recs...)
		live = append(live, r)
	}
	err = s.upsertLocked(c, name, all)
	for _, r := range live {
		r.err, r.done = err, true
	}
	return req.err
}

// upsertReq is an Upsert waiting for its commit. done and err are written under
// writeMu by the writer that commits it.
type upsertReq struct {
	ctx  context.Context
	recs []vectorstore.Record
	done bool
	err  error
}

// upsertLocked writes recs in one bbolt commit and one text index batch: the records
// of every Upsert that queued while the previous commit ran (group commit: one fsync
// pair for all of them instead of one each, which is what bounded the summarizer's
// four workers). Each caller returns once the commit holding its records is durable,
// as before. Called with writeMu held.
func (s *store) upsertLocked(c *collection, name string, recs []vectorstore.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := c.alive(); err != nil {
		return err
	}
	c.commits.Add(1)
	// The last occurrence of an ID wins, as if the batches were applied in order.
	last := make(map[string]int, len(recs))
	for i, r := range recs {
		last[r.ID] = i
	}
	docs := make([]*doc, 0, len(last))
	lens := make([]uint64, 0, len(last))
	var ops []lexOp
	var seq uint64
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCollections).Bucket([]byte(name))
		if err := c.prune(b); err != nil {
			return err
		}
		rb, ob := b.Bucket(bucketRecords), b.Bucket(bucketOpenIndex)
		for i, r := range recs {
			if last[r.ID] != i {
				continue
			}
			var err error
			if seq, err = b.NextSequence(); err != nil {
				return err
			}
			attrs := cloneAttrs(r.Attrs)
			var textLen uint64
			if c.lex != nil {
				textLen = analyzedLen(c.lex, r.Text)
			}
			lens = append(lens, textLen)
			rec := encodeRecord(storedRecord{seq: seq, vector: r.Vector, text: r.Text, textLen: textLen, attrs: attrs})
			entry, err := recordEntry(rec)
			if err != nil {
				return err
			}
			if err := rb.Put([]byte(r.ID), rec); err != nil {
				return err
			}
			if err := ob.Put([]byte(r.ID), entry); err != nil {
				return err
			}
			docs = append(docs, &doc{id: r.ID, seq: seq, vec: quantize(r.Vector), attrs: compactAttrs(attrs, c.dense.keys)})
			if c.lex != nil {
				ops = append(ops, lexOp{id: r.ID, text: r.Text, attrs: attrs})
			}
		}
		return markOpenIndex(b)
	})
	if err != nil {
		return fmt.Errorf("writing records to %q: %w", name, err)
	}
	// Acknowledged from here on: the records are durable in bbolt.
	c.mu.Lock()
	c.dense.put(docs)
	if c.lstats != nil {
		for i, d := range docs {
			c.lstats.set(d.id, lens[i])
		}
	}
	c.mu.Unlock()
	return c.afterWrite(ops, seq, s.cfg)
}

// Delete implements vectorstore.Store.
func (s *store) Delete(ctx context.Context, name string, ids []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c, err := s.coll(name)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.alive(); err != nil {
		return err
	}
	var removed []string
	var ops []lexOp
	var seq uint64
	err = s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCollections).Bucket([]byte(name))
		if err := c.prune(b); err != nil {
			return err
		}
		rb, ob, tb := b.Bucket(bucketRecords), b.Bucket(bucketOpenIndex), b.Bucket(bucketTombs)
		for _, id := range ids {
			if rb.Get([]byte(id)) == nil {
				continue
			}
			if err := rb.Delete([]byte(id)); err != nil {
				return err
			}
			if err := ob.Delete([]byte(id)); err != nil {
				return err
			}
			removed = append(removed, id)
			if c.lex == nil {
				continue
			}
			if seq, err = b.NextSequence(); err != nil {
				return err
			}
			if err := tb.Put(seqKey(seq), []byte(id)); err != nil {
				return err
			}
			ops = append(ops, lexOp{id: id, del: true})
		}
		return markOpenIndex(b)
	})
	if err != nil {
		return fmt.Errorf("deleting records from %q: %w", name, err)
	}
	if len(removed) == 0 {
		return nil
	}
	c.mu.Lock()
	for _, id := range removed {
		c.dense.remove(id)
		if c.lstats != nil {
			c.lstats.remove(id)
		}
	}
	c.mu.Unlock()
	return c.afterWrite(ops, seq, s.cfg)
}

// alive reports why the collection can no longer be used, if it cannot.
func (c *collection) alive() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.gone != nil {
		return fmt.Errorf("collection %q: %w", c.name, c.gone)
	}
	return nil
}

// prune drops deletion markers already covered by the durable text index.
// Called with writeMu held, inside a write transaction.
func (c *collection) prune(b *bolt.Bucket) error {
	if c.pruneTomb == 0 {
		return nil
	}
	cur := b.Bucket(bucketTombs).Cursor()
	limit := seqKey(c.pruneTomb)
	for k, _ := cur.First(); k != nil && string(k) <= string(limit); k, _ = cur.First() {
		if err := cur.Delete(); err != nil {
			return fmt.Errorf("pruning deletion markers: %w", err)
		}
	}
	c.pruneTomb = 0
	return nil
}

// afterWrite updates the derived indexes after a committed write. Called with
// writeMu held. A failure here loses nothing: the next open replays bbolt.
func (c *collection) afterWrite(ops []lexOp, seq uint64, cfg config) error {
	if c.lex != nil && len(ops) > 0 {
		if err := applyLexical(c.lex, ops, seq); err != nil {
			return fmt.Errorf("records of %q are stored, but the text index was not updated (repaired on reopen): %w", c.name, err)
		}
		c.pruneTomb = seq
	}
	built := c.dense.graphWanted()
	if built {
		// Build outside mu: writers are excluded by writeMu, so docs is
		// stable, and searches go on with exact scans or the old graph.
		g, nodes := c.dense.buildGraph()
		c.mu.Lock()
		c.dense.graph, c.dense.nodes, c.dense.dead = g, nodes, 0
		c.dense.sinceSnap = len(nodes)
		c.mu.Unlock()
	}
	err := c.collectSnapshot()
	c.maybeSnapshot(cfg, built)
	if err != nil {
		return fmt.Errorf("records of %q are stored, but: %w", c.name, err)
	}
	return nil
}

// Automatic snapshots (WithSnapshotEvery(0)): after insertions amounting to
// autoSnapshotShare⁻¹ of the graph, and at least autoSnapshotMin. Each
// snapshot then costs a few node records written per insertion (an insertion
// itself costs ~1 ms of distance computations), and a crash replays at most
// a quarter of the graph.
const (
	autoSnapshotShare = 4
	autoSnapshotMin   = 4096
)

// snapshotDue reports whether the graph has changed enough since its last
// snapshot to write one. Called with writeMu held.
func (c *collection) snapshotDue(cfg config) bool {
	x := c.dense
	if x == nil || x.graph == nil || x.sinceSnap == 0 || c.snapBusy.Load() {
		return false
	}
	if cfg.snapshotEvery > 0 {
		return x.sinceSnap >= cfg.snapshotEvery
	}
	return x.sinceSnap >= max(autoSnapshotMin, x.graph.len()/autoSnapshotShare)
}

// maybeSnapshot starts a background snapshot when one is due, and always
// after a graph build (built), which is the costliest thing to redo.
// Called with writeMu held.
func (c *collection) maybeSnapshot(cfg config, built bool) {
	if built {
		c.snapWG.Wait() // an older graph's snapshot; the new one follows it
	}
	if c.dense.graph != nil && (built || c.snapshotDue(cfg)) {
		c.snapshotInBackground()
	}
}

// snapshotInBackground copies the graph's structure and writes it on another
// goroutine, so that writers wait for the copy (milliseconds) and not for
// the file (seconds at 100k records). Called with writeMu held, so that the
// graph does not change during the copy.
func (c *collection) snapshotInBackground() {
	h, f := c.freezeSnapshot()
	covered := c.dense.sinceSnap
	c.dense.sinceSnap = 0
	c.snapBusy.Store(true)
	c.snapWG.Go(func() {
		defer c.snapBusy.Store(false)
		if err := c.writeFrozen(h, f); err != nil {
			c.snapMu.Lock()
			c.snapErr = errors.Join(c.snapErr, err)
			c.snapLost += covered
			c.snapMu.Unlock()
		}
	})
}

// collectSnapshot returns the error of failed background snapshots, whose
// insertions count again towards the next one. Called with writeMu held.
func (c *collection) collectSnapshot() error {
	lost := c.takeLost()
	if c.dense != nil {
		c.dense.sinceSnap += lost
	}
	c.snapMu.Lock()
	defer c.snapMu.Unlock()
	err := c.snapErr
	c.snapErr = nil
	return err
}

// takeLost returns and clears the insertions failed snapshots did not cover.
func (c *collection) takeLost() int {
	c.snapMu.Lock()
	defer c.snapMu.Unlock()
	n := c.snapLost
	c.snapLost = 0
	return n
}

func (c *collection) freezeSnapshot() (snapshotHeader, *frozenGraph) {
	x := c.dense
	h := snapshotHeader{Incarnation: c.spec.Incarnation, Seq: x.maxSeq, Dim: uint64(c.spec.Dim)}
	return h, x.graph.freeze()
}

func (c *collection) writeFrozen(h snapshotHeader, f *frozenGraph) error {
	if err := writeSnapshot(filepath.Join(c.dir, snapshotFile), h, f); err != nil {
		return fmt.Errorf("snapshotting hnsw graph of %q: %w", c.name, err)
	}
	return nil
}

// snapshot writes the HNSW graph now, after any background snapshot (which
// would otherwise replace it with an older one). Called with writeMu held.
func (c *collection) snapshot() error {
	c.snapWG.Wait()
	errBg := c.collectSnapshot()
	if c.dense == nil || c.dense.graph == nil || c.dense.sinceSnap == 0 {
		return errBg
	}
	h, f := c.freezeSnapshot()
	if err := c.writeFrozen(h, f); err != nil {
		return errors.Join(errBg, err)
	}
	c.dense.sinceSnap = 0
	return errBg
}

// Checkpoint writes the HNSW snapshot of every collection changed since its
// last one, which shortens the next open after a crash.
func (s *store) Checkpoint(ctx context.Context) error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return vectorstore.ErrClosed
	}
	colls := make([]*collection, 0, len(s.colls))
	for _, c := range s.colls {
		colls = append(colls, c)
	}
	s.mu.RUnlock()
	for _, c := range colls {
		if err := ctx.Err(); err != nil {
			return err
		}
		c.writeMu.Lock()
		var err error
		if c.alive() == nil {
			err = c.snapshot()
		}
		c.writeMu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// Get implements vectorstore.Store.
func (s *store) Get(ctx context.Context, name string, ids []string) ([]vectorstore.Record, error) {
	_, unlock, err := s.readLocked(ctx, name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	seen := make(map[string]struct{}, len(ids))
	out := make([]vectorstore.Record, 0, len(ids))
	err = s.db.View(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketCollections).Bucket([]byte(name)).Bucket(bucketRecords)
		for _, id := range ids {
			if _, dup := seen[id]; dup {
				continue
			}
			seen[id] = struct{}{}
			v := rb.Get([]byte(id))
			if v == nil {
				continue
			}
			r, err := decodeRecord(v, false)
			if err != nil {
				return fmt.Errorf("record %q: %w", id, err)
			}
			out = append(out, vectorstore.Record{ID: id, Vector: r.vector, Text: r.text, Attrs: r.attrs})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("getting records from %q: %w", name, err)
	}
	return out, nil
}

// Attrs implements vectorstore.Store. It reads the open index, whose entries
// hold a record's attributes without its vector and text: at 860k entity
// records, checking their text hashes through Get read 1.3 GB of vectors.
func (s *store) Attrs(ctx context.Context, name string, ids []string) (map[string]map[string]string, error) {
	_, unlock, err := s.readLocked(ctx, name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	out := make(map[string]map[string]string, len(ids))
	err = s.db.View(func(tx *bolt.Tx) error {
		ob := tx.Bucket(bucketCollections).Bucket([]byte(name)).Bucket(bucketOpenIndex)
		for _, id := range ids {
			if _, dup := out[id]; dup {
				continue
			}
			v := ob.Get([]byte(id))
			if v == nil {
				continue
			}
			a, err := entryAttrs(v)
			if err != nil {
				return fmt.Errorf("record %q: %w", id, err)
			}
			out[id] = a
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading attributes from %q: %w", name, err)
	}
	return out, nil
}

// Search implements vectorstore.Store.
func (s *store) Search(ctx context.Context, name string, vec []float32, k int, f vectorstore.Filter) ([]vectorstore.Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := s.coll(name)
	if err != nil {
		return nil, err
	}
	if err := vectorstore.ValidateVector(vec, c.spec.Dim); err != nil {
		return nil, fmt.Errorf("searching %q: %w", name, err)
	}
	q := newQuery(vec)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.gone != nil {
		return nil, fmt.Errorf("collection %q: %w", name, c.gone)
	}
	found, err := c.dense.search(ctx, q, k, f.IDs, f.Attrs, stored{exact: s.exactScorer(name, q.f), attr: s.attrEquals(name)})
	if err != nil {
		return nil, fmt.Errorf("searching %q: %w", name, err)
	}
	hits := make([]vectorstore.Hit, 0, len(found))
	for _, sc := range found {
		hits = append(hits, vectorstore.Hit{Record: vectorstore.Record{ID: sc.d.id}, Score: float64(sc.score)})
	}
	return s.fill(name, hits)
}

// SearchText implements vectorstore.Store.
func (s *store) SearchText(ctx context.Context, name string, query string, k int, f vectorstore.Filter) ([]vectorstore.Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := s.coll(name)
	if err != nil {
		return nil, err
	}
	if !c.spec.Lexical {
		return nil, fmt.Errorf("text search in %q: collection has no lexical index: %w", name, vectorstore.ErrUnsupported)
	}
	if strings.TrimSpace(query) == "" {
		return []vectorstore.Hit{}, nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.gone != nil {
		return nil, fmt.Errorf("collection %q: %w", name, c.gone)
	}
	found, err := searchBM25(ctx, c.lex, c.lstats, query, k, f.IDs, f.Attrs)
	if err != nil {
		return nil, fmt.Errorf("text search in %q: %w", name, err)
	}
	hits := make([]vectorstore.Hit, 0, len(found))
	for _, h := range found {
		hits = append(hits, vectorstore.Hit{Record: vectorstore.Record{ID: h.id}, Score: h.score})
	}
	return s.fill(name, hits)
}

// exactScorer scores docs by the cosine of q and their exact vectors in
// bbolt: the memory holds only quantized vectors, so the final candidates
// are re-ranked from the record store (a B+tree lookup and a 1.5 KB read
// each, on pages the OS caches).
func (s *store) exactScorer(name string, q []float32) exactScorer {
	buf := make([]float32, len(q))
	return func(ds []*doc) ([]float32, error) {
		out := make([]float32, len(ds))
		err := s.db.View(func(tx *bolt.Tx) error {
			rb := tx.Bucket(bucketCollections).Bucket([]byte(name)).Bucket(bucketRecords)
			for i, d := range ds {
				v := rb.Get([]byte(d.id))
				if v == nil {
					out[i] = float32(math.NaN())
					continue
				}
				if err := recordVector(v, buf); err != nil {
					return fmt.Errorf("record %q: %w", d.id, err)
				}
				out[i] = cosine(q, buf)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("re-ranking by stored vectors: %w", err)
		}
		return out, nil
	}
}

// attrEquals reports whether a record's attribute key equals want, reading
// it from bbolt: for the long values memory does not keep.
func (s *store) attrEquals(name string) func(id, key, want string) (bool, error) {
	return func(id, key, want string) (bool, error) {
		var eq bool
		err := s.db.View(func(tx *bolt.Tx) error {
			v := tx.Bucket(bucketCollections).Bucket([]byte(name)).Bucket(bucketRecords).Get([]byte(id))
			if v == nil {
				return nil
			}
			r, err := decodeRecordLean(v, true, true)
			if err != nil {
				return fmt.Errorf("record %q: %w", id, err)
			}
			got, ok := r.attrs[key]
			eq = ok && got == want
			return nil
		})
		if err != nil {
			return false, fmt.Errorf("filtering by attribute %q: %w", key, err)
		}
		return eq, nil
	}
}

// fill loads the records of hits from bbolt, dropping any deleted meanwhile.
func (s *store) fill(name string, hits []vectorstore.Hit) ([]vectorstore.Hit, error) {
	out := hits[:0]
	err := s.db.View(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketCollections).Bucket([]byte(name)).Bucket(bucketRecords)
		for _, h := range hits {
			v := rb.Get([]byte(h.ID))
			if v == nil {
				continue
			}
			r, err := decodeRecord(v, false)
			if err != nil {
				return fmt.Errorf("record %q: %w", h.ID, err)
			}
			h.Vector, h.Text, h.Attrs = r.vector, r.text, r.attrs
			out = append(out, h)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("loading hits from %q: %w", name, err)
	}
	return out, nil
}

// Close snapshots changed HNSW graphs and closes everything. Safe to call
// more than once.
func (s *store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, c := range s.colls {
		c.writeMu.Lock()
		errs = append(errs, c.snapshot())
		c.mu.Lock()
		c.gone = vectorstore.ErrClosed
		if c.lex != nil {
			if err := c.lex.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing text index of %q: %w", c.name, err))
			}
			c.lex = nil
		}
		c.mu.Unlock()
		c.writeMu.Unlock()
	}
	if err := s.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing record database: %w", err))
	}
	return errors.Join(errs...)
}

func cloneAttrs(a map[string]string) map[string]string {
	if len(a) == 0 {
		return nil
	}
	out := make(map[string]string, len(a))
	maps.Copy(out, a)
	return out
}
