package boltgraph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

var _ graphstore.Store = (*store)(nil)

type config struct {
	lockTimeout time.Duration
	mode        os.FileMode
}

// Option configures Open.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithLockTimeout bounds how long Open waits for the file lock another process
// holds (default 10s); 0 waits forever.
func WithLockTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.lockTimeout = d })
}

// WithFileMode sets the permissions of a newly created file (default 0o600).
func WithFileMode(m os.FileMode) Option {
	return optionFunc(func(c *config) { c.mode = m })
}

// Store is the bbolt-backed graphstore.Store. Its methods check their arguments, and
// are traced, in graphstore.Validating, which holds the driver, store.
type Store struct {
	graphstore.Store
	s *store
}

// Path returns the file the store lives in.
func (st *Store) Path() string { return st.s.path }

// store is the driver: bbolt transactions over the layout in doc.go.
type store struct {
	db   *bolt.DB
	path string

	// mu guards closed; reads take it shared so Close waits for none of them longer
	// than bbolt itself does.
	mu     sync.RWMutex
	closed bool
}

var (
	bucketCorpora = []byte("corpora")
	bucketInfo    = []byte("info")
	keyFormat     = []byte("format")
)

// formatVersion names the layout described in the package documentation. Open
// migrates a version 1 file (JSON values) in place and refuses any other version
// rather than misread it.
const formatVersion = "2"

// ErrFormat is returned by Open for a file written with another layout version.
var ErrFormat = errors.New("boltgraph: unsupported file layout")

// Open opens or creates the store file at path.
func Open(path string, opts ...Option) (*Store, error) {
	cfg := config{lockTimeout: 10 * time.Second, mode: 0o600}
	for _, o := range opts {
		o.apply(&cfg)
	}
	db, err := bolt.Open(path, cfg.mode, &bolt.Options{
		Timeout: cfg.lockTimeout,
		// As etcd does: the freelist is rebuilt by scanning at open instead of being
		// written on every commit, and kept in a hash map, which is cheaper once the
		// file is large. Data pages are still fsync'ed on every commit.
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if err != nil {
		return nil, fmt.Errorf("opening graph store %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketCorpora); err != nil {
			return err
		}
		info, err := tx.CreateBucketIfNotExists(bucketInfo)
		if err != nil {
			return err
		}
		switch v := info.Get(keyFormat); {
		case v == nil:
			return info.Put(keyFormat, []byte(formatVersion))
		case string(v) == "1":
			if err := migrateV1(tx); err != nil {
				return err
			}
			return info.Put(keyFormat, []byte(formatVersion))
		case string(v) != formatVersion:
			return fmt.Errorf("file has layout version %q, this build reads %q and migrates \"1\": "+
				"open it with the build that wrote it, or move it aside and index the corpus again: %w", v, formatVersion, ErrFormat)
		}
		return nil
	}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("initializing graph store %s: %w", path, err)
	}
	s := &store{db: db, path: path}
	return &Store{Store: graphstore.Validating(s), s: s}, nil
}

// Close closes the file; calling it again returns nil.
func (s *store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.writeFreelist(); err != nil {
		_ = s.db.Close()
		return fmt.Errorf("closing graph store %s: %w", s.path, err)
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("closing graph store %s: %w", s.path, err)
	}
	return nil
}

// writeFreelist ends the store's life with one commit that writes the freelist. The
// store runs with NoFreelistSync, so a file whose last commit did not write one is
// scanned page by page at the next Open to find its free pages: 70 s for the 5.1 GB
// file of 100k realistic chunks with a cold page cache (3 s warm), which every restart
// of a process after a clean stop paid. With the freelist written, Open reads it from
// its pages. A crash still leaves no freelist, and the next Open rebuilds it as before.
func (s *store) writeFreelist() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		// Read by this commit, under the writer lock; the store takes no more writes.
		// A commit without changes still writes the freelist and the meta page.
		tx.DB().NoFreelistSync = false
		return nil
	})
}

// Ping reports whether the store is open.
func (s *store) Ping(ctx context.Context) error {
	return s.view(ctx, "pinging", func(*bolt.Tx) error { return nil })
}

func (s *store) view(ctx context.Context, doing string, fn func(*bolt.Tx) error) error {
	return s.tx(ctx, doing, false, fn)
}

func (s *store) update(ctx context.Context, doing string, fn func(*bolt.Tx) error) error {
	return s.tx(ctx, doing, true, fn)
}

func (s *store) tx(ctx context.Context, doing string, write bool, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("%s: %w", doing, graphstore.ErrClosed)
	}
	var err error
	if write {
		err = s.db.Update(fn)
	} else {
		err = s.db.View(fn)
	}
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		err = graphstore.ErrClosed
	}
	if err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	return nil
}

// Corpora lists the corpora written to and not dropped, sorted.
func (s *store) Corpora(ctx context.Context) ([]string, error) {
	var out []string
	err := s.view(ctx, "listing corpora", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCorpora).ForEachBucket(func(k []byte) error {
			out = append(out, string(k))
			return nil
		})
	})
	return out, err
}

// DropCorpus deletes a corpus and everything in it.
func (s *store) DropCorpus(ctx context.Context, corpus string) error {
	return s.update(ctx, "dropping corpus "+corpus, func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketCorpora).DeleteBucket([]byte(corpus))
		if errors.Is(err, berrors.ErrBucketNotFound) {
			return nil
		}
		return err
	})
}
