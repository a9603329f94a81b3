package boltgraph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// Layout version 1 stored the same buckets with JSON values; version 2 changed only
// the values of chunks, ents, rels, comms and membership to the binary codec. The
// v1 record shapes below are kept to read such files once, when Open migrates them.

type entRecV1 struct {
	Names     map[string]int `json:"n,omitempty"`
	Types     map[string]int `json:"t,omitempty"`
	Descs     descSetV1      `json:"d"`
	Mentions  int            `json:"m"`
	PageRank  float64        `json:"p,omitempty"`
	Summary   string         `json:"s,omitempty"`
	SummaryFP uint64         `json:"f,omitempty"`
}

type relRecV1 struct {
	Types  map[string]int `json:"t,omitempty"`
	Descs  descSetV1      `json:"d"`
	Chunks int            `json:"c"`
	Weight float64        `json:"w"`
}

type descSetV1 struct {
	N       int    `json:"n,omitempty"`
	Sum     uint64 `json:"s,omitempty"`
	Longest string `json:"l,omitempty"`
}

func (d descSetV1) v2() descSet { return descSet{N: d.N, Sum: d.Sum, Longest: d.Longest} }

func countsFromMap(m map[string]int) counts {
	if len(m) == 0 {
		return nil
	}
	out := make(counts, 0, len(m))
	for s, n := range m {
		out = append(out, tally{s, n})
	}
	slices.SortFunc(out, func(a, b tally) int { return strings.Compare(a.s, b.s) })
	return out
}

// v1Converters re-encode the values of one bucket from layout 1 to layout 2.
var v1Converters = map[string]func(v []byte) ([]byte, error){
	string(bChunks): func(v []byte) ([]byte, error) {
		var ct graphstore.Contribution
		if err := json.Unmarshal(v, &ct); err != nil {
			return nil, err
		}
		return encodeContribution(&ct), nil
	},
	string(bEnts): func(v []byte) ([]byte, error) {
		var r entRecV1
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, err
		}
		return encodeEnt(&entRec{Names: countsFromMap(r.Names), Types: countsFromMap(r.Types), Descs: r.Descs.v2(),
			Mentions: r.Mentions, PageRank: r.PageRank, Summary: r.Summary, SummaryFP: r.SummaryFP}), nil
	},
	string(bRels): func(v []byte) ([]byte, error) {
		var r relRecV1
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, err
		}
		return encodeRel(&relRec{Types: countsFromMap(r.Types), Descs: r.Descs.v2(), Chunks: r.Chunks, Weight: r.Weight}), nil
	},
	string(bComms): func(v []byte) ([]byte, error) {
		var cm graphstore.Community
		if err := json.Unmarshal(v, &cm); err != nil {
			return nil, err
		}
		return encodeCommunity(&cm), nil
	},
	string(bMembership): func(v []byte) ([]byte, error) {
		var ls []string
		if err := json.Unmarshal(v, &ls); err != nil {
			return nil, err
		}
		return encodeStrs(ls), nil
	},
}

// migrateV1 rewrites every corpus of a layout 1 file in the caller's transaction,
// so a crash leaves the file wholly version 1 or wholly version 2.
func migrateV1(tx *bolt.Tx) error {
	root := tx.Bucket(bucketCorpora)
	var corpora [][]byte
	if err := root.ForEachBucket(func(k []byte) error {
		corpora = append(corpora, bytes.Clone(k))
		return nil
	}); err != nil {
		return err
	}
	for _, corpus := range corpora {
		cb := root.Bucket(corpus)
		for name, conv := range v1Converters {
			b := cb.Bucket([]byte(name))
			if b == nil {
				return fmt.Errorf("migrating corpus %s: bucket %s missing: file damaged", corpus, name)
			}
			if err := rewriteValues(b, conv); err != nil {
				return fmt.Errorf("migrating %s of corpus %s to layout %s: %w", name, corpus, formatVersion, err)
			}
		}
	}
	return nil
}

// rewriteValues replaces every value of b with conv(value), a batch at a time: a
// bbolt cursor must not run across Puts into its bucket.
func rewriteValues(b *bolt.Bucket, conv func([]byte) ([]byte, error)) error {
	const batch = 1024
	var keys, vals [][]byte
	var after []byte
	for {
		keys, vals = keys[:0], vals[:0]
		c := b.Cursor()
		k, v := c.First()
		if after != nil {
			if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
				k, v = c.Next()
			}
		}
		for ; k != nil && len(keys) < batch; k, v = c.Next() {
			nv, err := conv(v)
			if err != nil {
				return fmt.Errorf("record %q: %w", k, err)
			}
			keys, vals = append(keys, bytes.Clone(k)), append(vals, nv)
		}
		for i := range keys {
			if err := b.Put(keys[i], vals[i]); err != nil {
				return err
			}
		}
		if len(keys) < batch {
			return nil
		}
		after = keys[len(keys)-1]
	}
}
