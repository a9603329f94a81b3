package milvusstore

import (
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
)

// Consistency is the Milvus consistency level of reads (Get, Search,
// SearchText, Count).
type Consistency int

const (
	// ConsistencyStrong: every read sees every acknowledged write (the
	// default; the conformance suite needs read-your-writes).
	ConsistencyStrong Consistency = iota
	// ConsistencyBounded: reads may miss writes of the last few seconds
	// (Milvus' graceful time, 5 s by default) and are cheaper on a cluster.
	ConsistencyBounded
	// ConsistencySession: a client sees its own writes.
	ConsistencySession
	// ConsistencyEventually: no guarantee.
	ConsistencyEventually
)

func (c Consistency) proto() commonpb.ConsistencyLevel {
	switch c {
	case ConsistencyBounded:
		return commonpb.ConsistencyLevel_Bounded
	case ConsistencySession:
		return commonpb.ConsistencyLevel_Session
	case ConsistencyEventually:
		return commonpb.ConsistencyLevel_Eventually
	default:
		return commonpb.ConsistencyLevel_Strong
	}
}

// IndexKind is the dense-vector index built for new collections.
type IndexKind int

const (
	// IndexAuto: Milvus' AUTOINDEX, the server's choice (HNSW-like on a
	// standalone server, FLAT on Milvus Lite). The default, because it is
	// the one kind every deployment accepts: Milvus Lite refuses HNSW.
	IndexAuto IndexKind = iota
	// IndexHNSW: HNSW graph with WithHNSW's parameters.
	IndexHNSW
	// IndexFlat: exact brute-force search; right for small collections.
	IndexFlat
)

func (k IndexKind) String() string {
	switch k {
	case IndexFlat:
		return "FLAT"
	case IndexHNSW:
		return "HNSW"
	default:
		return "AUTOINDEX"
	}
}

type config struct {
	db           string
	token        string // "user:password" or an API key
	consistency  Consistency
	index        IndexKind
	hnswM        int
	hnswEfBuild  int
	hnswEf       int
	truncateText bool
	dialTimeout  time.Duration
	loadTimeout  time.Duration
}

func defaultConfig() config {
	return config{
		consistency: ConsistencyStrong,
		index:       IndexAuto,
		hnswM:       16,
		hnswEfBuild: 200,
		hnswEf:      128,
		dialTimeout: 10 * time.Second,
		loadTimeout: 60 * time.Second,
	}
}

// Option configures Open.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithDatabase selects a Milvus database (default: the server's default
// database).
func WithDatabase(name string) Option { return optionFunc(func(c *config) { c.db = name }) }

// WithCredentials authenticates as a Milvus user (a server with
// common.security.authorizationEnabled). The password travels in clear over
// the insecure connection: keep it on a private network.
func WithCredentials(user, password string) Option {
	return optionFunc(func(c *config) {
		if user != "" {
			c.token = user + ":" + password
		}
	})
}

// WithToken authenticates with an API key or a "user:password" token.
func WithToken(token string) Option { return optionFunc(func(c *config) { c.token = token }) }

// WithConsistency sets the consistency level of reads (default
// ConsistencyStrong).
func WithConsistency(level Consistency) Option {
	return optionFunc(func(c *config) { c.consistency = level })
}

// WithIndex selects the dense index built for collections this store creates
// (default IndexAuto). Existing collections keep their index. Milvus Lite
// accepts only FLAT, IVF_FLAT and AUTOINDEX.
func WithIndex(kind IndexKind) Option { return optionFunc(func(c *config) { c.index = kind }) }

// WithHNSW sets the HNSW parameters: m and efConstruction for building, ef
// for searching (raised to the number of results asked for when smaller).
// Values below 1 keep the defaults (16, 200, 128).
func WithHNSW(m, efConstruction, ef int) Option {
	return optionFunc(func(c *config) {
		if m > 0 {
			c.hnswM = m
		}
		if efConstruction > 0 {
			c.hnswEfBuild = efConstruction
		}
		if ef > 0 {
			c.hnswEf = ef
		}
	})
}

// WithTruncateText makes Upsert cut texts longer than MaxTextBytes at a
// UTF-8 boundary instead of rejecting the batch with ErrInvalidArgument.
func WithTruncateText(on bool) Option { return optionFunc(func(c *config) { c.truncateText = on }) }

// WithDialTimeout bounds how long Open waits for the server (default 10 s).
func WithDialTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.dialTimeout = d
		}
	})
}

// WithLoadTimeout bounds how long EnsureCollection waits for Milvus to load
// a collection into memory (default 60 s).
func WithLoadTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.loadTimeout = d
		}
	})
}
