package neo4jgraph

import (
	"fmt"
	"strconv"
	"strings"
)

// A pair's evidence (the chunks supporting it and their strengths) is kept on
// its RELATED relationship in buckets: bucket 0 is the chunks/ws list pair of
// ADR 0036, bucket i > 0 the pair chunks<i>/ws<i>. A Merge appends a batch's
// new evidence to the last bucket, or opens a new one once the last holds
// evidenceCap entries. Neo4j stores each list property in its own records, so
// a batch rewrites one bucket of a hub pair instead of its whole evidence
// (ADR 0039). Removing a chunk's entries reads all buckets, since nothing
// records which one holds them; re-merges and removals are the rare case.

// evidenceCap is the length past which appends open a new bucket. A bucket can
// exceed it by what one Merge appends. Tests lower it to exercise buckets.
var evidenceCap = 16

// bucketKeys names the two list properties of bucket i.
func bucketKeys(i int) (chunks, ws string) {
	if i == 0 {
		return "chunks", "ws"
	}
	n := strconv.Itoa(i)
	return "chunks" + n, "ws" + n
}

// bucketIndex is the inverse of bucketKeys for a chunks key.
func bucketIndex(chunksKey string) (int, error) {
	rest, ok := strings.CutPrefix(chunksKey, "chunks")
	if !ok {
		return 0, fmt.Errorf("malformed evidence: property %q", chunksKey)
	}
	if rest == "" {
		return 0, nil
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i <= 0 {
		return 0, fmt.Errorf("malformed evidence: property %q", chunksKey)
	}
	return i, nil
}

// needsBuckets tells whether a stored pair's buckets must be read before the
// write: to re-sum its weight, or to find the entries of changed chunks when
// it has more than bucket 0 (which cyEditRelations edits in place).
func (s *relState) needsBuckets() bool {
	return s.Chunks > 0 && (s.resum || (s.Last > 0 && len(s.gone) > 0))
}

// appendBucket is the write of a stored pair whose buckets were not read:
// cyEditRelations drops the changed chunks from bucket 0 (the only one, if
// there are any) and appends the added evidence to the returned bucket. It
// updates Last and LastLen.
func (s *relState) appendBucket() int {
	before := s.LastLen
	if s.Last == 0 {
		before = s.Chunks - len(s.added) // bucket 0 holds everything
	}
	if len(s.added) > 0 && before >= evidenceCap {
		s.Last++
		before = 0
	}
	if s.Last > 0 {
		s.LastLen = before + len(s.added)
	}
	return s.Last
}

// rebucket edits the stored buckets (nil for a new pair): it drops the
// changed chunks' entries, appends the added ones as appendBucket does, and
// repacks the buckets when removals have left them mostly empty. It keeps the
// result in buckets, the indexes to write (or remove) in dirty, and re-sums the
// weight from the whole evidence in chunk id order.
func (s *relState) rebucket(stored [][]evidenceRow) {
	gone := make(map[string]bool, len(s.gone))
	for _, c := range s.gone {
		gone[c] = true
	}
	dirty := map[int]bool{}
	bs := make([][]evidenceRow, max(len(stored), 1))
	for i, b := range stored {
		for _, e := range b {
			if !gone[e.chunk] {
				bs[i] = append(bs[i], e)
			}
		}
		if len(bs[i]) != len(b) {
			dirty[i] = true
		}
	}
	width := len(bs)
	for len(bs) > 1 && len(bs[len(bs)-1]) == 0 {
		bs = bs[:len(bs)-1] // removed below through dirty
	}
	if len(s.added) > 0 {
		if len(bs[len(bs)-1]) >= evidenceCap {
			bs = append(bs, nil)
		}
		bs[len(bs)-1] = append(bs[len(bs)-1], s.added...)
		dirty[len(bs)-1] = true
	}
	var all []evidenceRow
	for _, b := range bs {
		all = append(all, b...)
	}
	if want := (len(all) + evidenceCap - 1) / evidenceCap; len(bs) > 2*want+1 {
		bs = pack(all)
		for i := range width {
			dirty[i] = true
		}
	}
	for i := len(bs); i < width; i++ {
		dirty[i] = true
	}
	s.buckets, s.dirty = bs, dirty
	s.Last, s.LastLen = len(bs)-1, 0
	if s.Last > 0 {
		s.LastLen = len(bs[s.Last])
	}
	s.weight = sumEvidence(all)
}

// pack splits evidence into buckets of evidenceCap entries.
func pack(all []evidenceRow) [][]evidenceRow {
	var out [][]evidenceRow
	for len(all) > evidenceCap {
		out = append(out, all[:evidenceCap:evidenceCap])
		all = all[evidenceCap:]
	}
	return append(out, all)
}

// bucketProps adds to props the buckets rebucket changed: their lists, or nil
// (which removes the properties) for a bucket past the last. Bucket 0 is
// always written as lists, empty or not: a RELATED without chunks is a graph
// from before ADR 0036.
func (s *relState) bucketProps(props map[string]any) {
	for i := range s.dirty {
		ck, wk := bucketKeys(i)
		switch {
		case i < len(s.buckets) && (i == 0 || len(s.buckets[i]) > 0):
			props[ck], props[wk] = evidenceLists(s.buckets[i])
		default:
			props[ck], props[wk] = nil, nil
		}
	}
}

// bucketRows reads the buckets cyReadEvidence returns: [key, chunks, ws]
// triples, in any order.
func bucketRows(v any) ([][]evidenceRow, error) {
	triples, _ := v.([]any)
	var out [][]evidenceRow
	for _, t := range triples {
		kv, _ := t.([]any)
		if len(kv) != 3 {
			return nil, fmt.Errorf("malformed evidence: %v", t)
		}
		i, err := bucketIndex(asString(kv[0]))
		if err != nil {
			return nil, err
		}
		rows, err := evidenceRows(kv[1], kv[2])
		if err != nil {
			return nil, err
		}
		for len(out) <= i {
			out = append(out, nil)
		}
		out[i] = rows
	}
	return out, nil
}
