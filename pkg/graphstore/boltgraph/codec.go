package boltgraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// The record codec of layout version 2: fields in a fixed order, integers as
// varints, strings length-prefixed, float64 and 64-bit hashes as 8 big-endian
// bytes. A record's hot field comes first at a fixed offset (an entity's PageRank,
// a relationship's weight) so that a walk can read it without decoding the rest.

var errCorrupt = errors.New("corrupt stored record")

func appendStrs(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = lp(b, s)
	}
	return b
}

func appendF64(b []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
}

func appendCounts(b []byte, cs counts) []byte {
	b = binary.AppendUvarint(b, uint64(len(cs)))
	for _, t := range cs {
		b = binary.AppendVarint(lp(b, t.s), int64(t.n))
	}
	return b
}

func appendDescSet(b []byte, d *descSet) []byte {
	b = binary.AppendVarint(b, int64(d.N))
	b = binary.BigEndian.AppendUint64(b, d.Sum)
	return lp(b, d.Longest)
}

// decoder reads a record; the first error sticks and later reads return zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	n, w := binary.Uvarint(d.b)
	if w <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[w:]
	return n
}

func (d *decoder) varint() int {
	n, w := binary.Varint(d.b)
	if w <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[w:]
	return int(n)
}

func (d *decoder) u64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) f64() float64 { return math.Float64frombits(d.u64()) }

// raw returns the next length-prefixed field without copying it.
func (d *decoder) raw() []byte {
	n := d.uvarint()
	if uint64(len(d.b)) < n {
		d.fail()
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) str() string { return string(d.raw()) }

// count reads a list length, refusing one the remaining bytes cannot hold (every
// element takes at least one byte), so a corrupt length cannot allocate much.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

// strs reads a string list; an empty one is nil, as Contribute makes them.
func (d *decoder) strs() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) skipStrs() {
	for range d.count() {
		d.raw()
	}
}

func (d *decoder) counts() counts {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make(counts, n)
	for i := range out {
		out[i] = tally{d.str(), d.varint()}
	}
	return out
}

func (d *decoder) descSet() descSet {
	return descSet{N: d.varint(), Sum: d.u64(), Longest: d.str()}
}

// done reports an error, or bytes left over, with what was being decoded.
func (d *decoder) done(what string) error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorrupt
	}
	if d.err != nil {
		return fmt.Errorf("decoding stored %s: %w", what, d.err)
	}
	return nil
}

func encodeEnt(r *entRec) []byte {
	b := appendF64(make([]byte, 0, 64), r.PageRank)
	b = binary.AppendVarint(b, int64(r.Mentions))
	b = appendCounts(b, r.Names)
	b = appendCounts(b, r.Types)
	b = appendDescSet(b, &r.Descs)
	b = lp(b, r.Summary)
	return binary.BigEndian.AppendUint64(b, r.SummaryFP)
}

func decodeEnt(v []byte, r *entRec) error {
	d := decoder{b: v}
	r.PageRank = d.f64()
	r.Mentions = d.varint()
	r.Names = d.counts()
	r.Types = d.counts()
	r.Descs = d.descSet()
	r.Summary = d.str()
	r.SummaryFP = d.u64()
	return d.done("entity")
}

// entPageRank reads an entity record's PageRank without decoding the rest.
func entPageRank(v []byte) (float64, error) {
	if len(v) < 8 {
		return 0, fmt.Errorf("decoding stored entity: %w", errCorrupt)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(v)), nil
}

func encodeRel(r *relRec) []byte {
	b := appendF64(make([]byte, 0, 48), r.Weight)
	b = binary.AppendVarint(b, int64(r.Chunks))
	b = appendCounts(b, r.Types)
	return appendDescSet(b, &r.Descs)
}

func decodeRel(v []byte, r *relRec) error {
	d := decoder{b: v}
	r.Weight = d.f64()
	r.Chunks = d.varint()
	r.Types = d.counts()
	r.Descs = d.descSet()
	return d.done("relationship")
}

// encodeContribution is deterministic, so equal bytes mean an unchanged chunk.
func encodeContribution(ct *graphstore.Contribution) []byte {
	b := lp(make([]byte, 0, 256), ct.ChunkID)
	b = lp(b, ct.DocumentID)
	b = binary.AppendUvarint(b, uint64(len(ct.Entities)))
	for i := range ct.Entities {
		e := &ct.Entities[i]
		b = lp(b, e.Key)
		b = appendStrs(b, e.Names)
		b = appendStrs(b, e.Types)
		b = appendStrs(b, e.Descriptions)
	}
	b = binary.AppendUvarint(b, uint64(len(ct.Relations)))
	for i := range ct.Relations {
		r := &ct.Relations[i]
		b = lp(lp(b, r.SourceKey), r.TargetKey)
		b = appendStrs(b, r.Types)
		b = appendStrs(b, r.Descriptions)
		b = appendF64(b, r.Strength)
	}
	return b
}

func decodeContribution(v []byte, ct *graphstore.Contribution) error {
	d := decoder{b: v}
	ct.ChunkID = d.str()
	ct.DocumentID = d.str()
	if n := d.count(); n > 0 {
		ct.Entities = make([]graphstore.EntityContribution, n)
		for i := range ct.Entities {
			ct.Entities[i] = graphstore.EntityContribution{Key: d.str(), Names: d.strs(), Types: d.strs(), Descriptions: d.strs()}
		}
	}
	if n := d.count(); n > 0 {
		ct.Relations = make([]graphstore.RelationContribution, n)
		for i := range ct.Relations {
			ct.Relations[i] = graphstore.RelationContribution{SourceKey: d.str(), TargetKey: d.str(),
				Types: d.strs(), Descriptions: d.strs(), Strength: d.f64()}
		}
	}
	return d.done("chunk contribution")
}

// contributionKeys reads only the entity keys of a stored contribution.
func contributionKeys(v []byte) ([]string, error) {
	d := decoder{b: v}
	d.raw() // chunk id
	d.raw() // document id
	keys := make([]string, d.count())
	for i := range keys {
		keys[i] = d.str()
		d.skipStrs()
		d.skipStrs()
		d.skipStrs()
	}
	if d.err != nil {
		return nil, fmt.Errorf("decoding stored chunk contribution: %w", d.err)
	}
	return keys, nil
}

func encodeStrs(ss []string) []byte { return appendStrs(nil, ss) }

func decodeStrs(v []byte, what string) ([]string, error) {
	d := decoder{b: v}
	ss := d.strs()
	return ss, d.done(what)
}

func encodeCommunity(cm *graphstore.Community) []byte {
	b := lp(nil, cm.ID)
	b = binary.AppendVarint(b, int64(cm.Level))
	b = lp(b, cm.ParentID)
	b = appendStrs(b, cm.ChildIDs)
	b = appendStrs(b, cm.Members)
	return binary.AppendVarint(b, int64(cm.RelationshipCount))
}

func decodeCommunity(v []byte, cm *graphstore.Community) error {
	d := decoder{b: v}
	*cm = graphstore.Community{ID: d.str(), Level: d.varint(), ParentID: d.str(),
		ChildIDs: d.strs(), Members: d.strs(), RelationshipCount: d.varint()}
	return d.done("community")
}

// tally is one string's count among a record's names or types.
type tally struct {
	s string
	n int
}

// counts is a multiset kept sorted by string: records hold a handful of names and
// types, for which a sorted slice is smaller and faster to decode than a map.
type counts []tally

// add adds (sign 1) or removes (sign -1) one count of each key, dropping keys that
// reach zero.
func (cs *counts) add(keys []string, sign int) {
	for _, k := range keys {
		i, found := slices.BinarySearchFunc(*cs, k, func(t tally, k string) int { return strings.Compare(t.s, k) })
		switch {
		case found && (*cs)[i].n+sign > 0:
			(*cs)[i].n += sign
		case found:
			*cs = slices.Delete(*cs, i, i+1)
		case sign > 0:
			*cs = slices.Insert(*cs, i, tally{k, sign})
		}
	}
	if len(*cs) == 0 {
		*cs = nil
	}
}

// mostFrequent is graphstore.MostFrequent: the highest count, ties to the
// smallest string.
func (cs counts) mostFrequent() string { return cs.mostFrequentBut("") }

// mostFrequentType is graphstore.MostFrequentType: mostFrequent among the types
// other than graphstore.TypeOther, which wins only alone. The counts themselves are
// stored, not the winner, so a file written under the earlier rule (OTHER counted
// like any type) reads by this one with no migration.
func (cs counts) mostFrequentType() string {
	if t := cs.mostFrequentBut(graphstore.TypeOther); t != "" {
		return t
	}
	return cs.mostFrequent() // graphstore.TypeOther, or "" for none
}

// mostFrequentBut is mostFrequent over the strings other than skip. Counts are
// never stored for "", so skip "" skips nothing.
func (cs counts) mostFrequentBut(skip string) string {
	best, bestN := "", 0
	for _, t := range cs {
		if t.n > bestN && t.s != skip { // sorted, so the first of equal counts is the smallest
			best, bestN = t.s, t.n
		}
	}
	return best
}
