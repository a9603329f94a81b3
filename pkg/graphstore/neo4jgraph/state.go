package neo4jgraph

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// A counter state (entState, relState) is stored in two properties, so that
// a Merge that only moves counts rewrites a short integer list, not strings
// (ADR 0041):
//
//	agg   JSON dictionary: per tally, its distinct strings, in a stable order
//	      (those already stored keep their place, new ones follow sorted)
//	aggc  integer list: the state's scalar counters, then one count per
//	      dictionary string, in dictionary order
//
// Neo4j skips a SET to an unchanged value, and the client leaves agg out of
// the write when the dictionary is what it read: a hub entity's ~2 KB of
// descriptions is no longer rewritten by every batch that mentions it. States
// written before ADR 0041 are one JSON object with the counts inside (the
// JSON tags of entState and relState) and no aggc; they are read as such and
// written in the new form by the first Merge that touches them.

// storedDict is the dictionary of a state as read, to keep its order.
type storedDict struct {
	lists [][]string
	json  string // the agg property as read; "" for a new state or an old layout
}

// readState fills scalars and tallies from the agg and aggc properties.
func readState(agg string, counts any, scalars []*int, tallies []*tally) (storedDict, error) {
	var lists [][]string
	if err := json.Unmarshal([]byte(agg), &lists); err != nil {
		return storedDict{}, fmt.Errorf("decoding state dictionary: %w", err)
	}
	cs := countList(counts)
	want := len(scalars)
	for _, l := range lists {
		want += len(l)
	}
	if len(lists) != len(tallies) || len(cs) != want {
		return storedDict{}, fmt.Errorf("malformed state: %d lists for %d tallies, %d counts for %d", len(lists), len(tallies), len(cs), want)
	}
	for i, p := range scalars {
		*p = int(cs[i])
	}
	k := len(scalars)
	for i, l := range lists {
		if len(l) == 0 {
			continue
		}
		t := make(tally, len(l))
		for _, s := range l {
			if cs[k] <= 0 {
				return storedDict{}, fmt.Errorf("malformed state: count %d for %q", cs[k], s)
			}
			t[s] = int(cs[k])
			k++
		}
		*tallies[i] = t
	}
	return storedDict{lists: lists, json: agg}, nil
}

// writeState sets props["aggc"] to the counts and props["agg"] to the
// dictionary, unless it is the one read (prev).
func writeState(props map[string]any, prev storedDict, scalars []int, tallies []tally) error {
	counts := make([]int64, 0, len(scalars))
	for _, n := range scalars {
		counts = append(counts, int64(n))
	}
	lists := make([][]string, len(tallies))
	for i, t := range tallies {
		var old []string
		if i < len(prev.lists) {
			old = prev.lists[i]
		}
		lists[i] = layout(old, t)
		for _, s := range lists[i] {
			counts = append(counts, int64(t[s]))
		}
	}
	b, err := json.Marshal(lists)
	if err != nil {
		return fmt.Errorf("encoding state dictionary: %w", err)
	}
	props["aggc"] = counts
	if string(b) != prev.json {
		props["agg"] = string(b)
	}
	return nil
}

// layout orders the strings of t: those of old still counted, in old's order,
// then the new ones, sorted. It is never nil, so the dictionary has one JSON
// list per tally.
func layout(old []string, t tally) []string {
	out := make([]string, 0, len(t))
	for _, s := range old {
		if t[s] > 0 {
			out = append(out, s)
		}
	}
	if len(out) == len(t) {
		return out
	}
	had := make(map[string]bool, len(old))
	for _, s := range old {
		had[s] = true
	}
	var fresh []string
	for s := range maps.Keys(t) {
		if !had[s] {
			fresh = append(fresh, s)
		}
	}
	slices.Sort(fresh)
	return append(out, fresh...)
}

// decode reads an entity state from its agg and aggc properties (aggc nil:
// the single JSON object of earlier layouts).
func (s *entState) decode(agg string, counts any) error {
	if counts == nil {
		return json.Unmarshal([]byte(agg), s)
	}
	d, err := readState(agg, counts, []*int{&s.Mentions}, []*tally{&s.Names, &s.Types, &s.Descs})
	s.dict = d
	return err
}

func (s *entState) encode(props map[string]any) error {
	return writeState(props, s.dict, []int{s.Mentions}, []tally{s.Names, s.Types, s.Descs})
}

// decode reads a relationship state, as entState.decode does.
func (s *relState) decode(agg string, counts any) error {
	if counts == nil {
		return json.Unmarshal([]byte(agg), s)
	}
	d, err := readState(agg, counts, []*int{&s.Chunks, &s.Frac, &s.Last, &s.LastLen}, []*tally{&s.Types, &s.Descs})
	s.dict = d
	return err
}

func (s *relState) encode(props map[string]any) error {
	return writeState(props, s.dict, []int{s.Chunks, s.Frac, s.Last, s.LastLen}, []tally{s.Types, s.Descs})
}

// countList converts an integer list value: the driver's []any of int64, or the
// []int64 a test passes through.
func countList(v any) []int64 {
	switch l := v.(type) {
	case []int64:
		return l
	case []any:
		out := make([]int64, len(l))
		for i, x := range l {
			out[i] = asInt(x)
		}
		return out
	}
	return nil
}
