package neo4jgraph

import (
	"reflect"
	"testing"
)

func TestBucketKeys(t *testing.T) {
	for _, i := range []int{0, 1, 17} {
		ck, _ := bucketKeys(i)
		if got, err := bucketIndex(ck); err != nil || got != i {
			t.Errorf("bucketIndex(%q) = %d, %v, want %d", ck, got, err, i)
		}
	}
	for _, k := range []string{"ws", "chunks0", "chunks-1", "chunksx"} {
		if _, err := bucketIndex(k); err == nil {
			t.Errorf("bucketIndex(%q) accepted", k)
		}
	}
	if _, err := bucketRows([]any{[]any{"chunks"}}); err == nil {
		t.Error("bucketRows accepted a malformed triple")
	}
}

func rows(ids ...string) []evidenceRow {
	out := make([]evidenceRow, len(ids))
	for i, id := range ids {
		out[i] = evidenceRow{id, 1}
	}
	return out
}

func TestAppendBucket(t *testing.T) {
	defer func(n int) { evidenceCap = n }(evidenceCap)
	evidenceCap = 2
	cases := []struct {
		name      string
		st        relState
		target    int
		last, len int
	}{
		{"bucket 0 has room", relState{Chunks: 2, added: rows("b")}, 0, 0, 0},
		{"bucket 0 full", relState{Chunks: 3, added: rows("c")}, 1, 1, 1},
		{"bucket 0 full, nothing added", relState{Chunks: 2, gone: []string{"x"}}, 0, 0, 0},
		{"last has room", relState{Chunks: 4, Last: 1, LastLen: 1, added: rows("d")}, 1, 1, 2},
		{"last full", relState{Chunks: 6, Last: 1, LastLen: 2, added: rows("e", "f")}, 2, 2, 2},
	}
	for _, c := range cases {
		st := c.st
		if got := st.appendBucket(); got != c.target || st.Last != c.last || st.LastLen != c.len {
			t.Errorf("%s: target %d, last %d (%d entries), want %d, %d (%d)", c.name, got, st.Last, st.LastLen, c.target, c.last, c.len)
		}
	}
}

func TestRebucket(t *testing.T) {
	defer func(n int) { evidenceCap = n }(evidenceCap)
	evidenceCap = 2
	t.Run("append to a new bucket", func(t *testing.T) {
		st := relState{added: []evidenceRow{{"c", 0.25}}, gone: []string{"a"}}
		st.rebucket([][]evidenceRow{{{"a", 1}, {"b", 0.5}}, {{"x", 1}, {"y", 2}}})
		want := [][]evidenceRow{{{"b", 0.5}}, {{"x", 1}, {"y", 2}}, {{"c", 0.25}}}
		if !reflect.DeepEqual(st.buckets, want) || !reflect.DeepEqual(st.dirty, map[int]bool{0: true, 2: true}) {
			t.Errorf("buckets %v dirty %v, want %v and 0, 2", st.buckets, st.dirty, want)
		}
		if st.Last != 2 || st.LastLen != 1 || st.weight != ((0.5+0.25)+1)+2 {
			t.Errorf("last %d (%d), weight %v", st.Last, st.LastLen, st.weight)
		}
	})
	t.Run("trailing buckets emptied", func(t *testing.T) {
		st := relState{gone: []string{"x", "y"}}
		st.rebucket([][]evidenceRow{rows("a", "b"), rows("x", "y")})
		props := map[string]any{}
		st.bucketProps(props)
		if st.Last != 0 || st.LastLen != 0 || props["chunks1"] != nil || len(props) != 2 {
			t.Errorf("last %d (%d), props %v: want bucket 1 removed", st.Last, st.LastLen, props)
		}
	})
	t.Run("holes repacked", func(t *testing.T) {
		// Six buckets for three entries: more than 2*ceil(3/2)+1.
		st := relState{gone: []string{"a", "c", "e", "g", "h", "i", "j", "k", "l"}}
		st.rebucket([][]evidenceRow{rows("a", "b"), rows("c", "d"), rows("e", "g"), rows("h", "i"),
			rows("j", "k"), rows("l", "f")})
		if want := [][]evidenceRow{rows("b", "d"), rows("f")}; !reflect.DeepEqual(st.buckets, want) {
			t.Fatalf("buckets %v, want %v", st.buckets, want)
		}
		props := map[string]any{}
		st.bucketProps(props)
		if len(props) != 12 || props["chunks2"] != nil || props["ws5"] != nil || props["chunks1"] == nil || st.Last != 1 {
			t.Errorf("props %v, last %d: want buckets 0-1 written, 2-5 removed", props, st.Last)
		}
	})
	t.Run("bucket 0 stays when empty", func(t *testing.T) {
		st := relState{gone: []string{"a", "b"}}
		st.rebucket([][]evidenceRow{rows("a", "b"), rows("c", "d")})
		props := map[string]any{}
		st.bucketProps(props)
		if c, ok := props["chunks"].([]string); !ok || len(c) != 0 || st.Last != 1 {
			t.Errorf("props %v, last %d: want an empty bucket 0 and bucket 1 kept", props, st.Last)
		}
	})
}
