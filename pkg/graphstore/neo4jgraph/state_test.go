package neo4jgraph

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

// stored runs a state's properties through the driver as a Merge writes
// them: agg is kept from before when the write leaves it out.
func stored(t *testing.T, props map[string]any, before simState) simState {
	t.Helper()
	out := before.written(props)
	cs := out.aggc.([]int64)
	list := make([]any, len(cs)) // as the driver returns a list
	for i, c := range cs {
		list[i] = c
	}
	out.aggc = list
	return out
}

func TestEntityStateRoundTrip(t *testing.T) {
	st := &entState{}
	st.add(graphstore.EntityContribution{Names: []string{"B"}, Types: []string{"t"}, Descriptions: []string{"y", "x"}}, 1)
	st.add(graphstore.EntityContribution{Names: []string{"A"}, Descriptions: []string{"y"}}, 1)
	props, err := st.params("k")
	if err != nil {
		t.Fatal(err)
	}
	if props["agg"] != `[["A","B"],["t"],["x","y"]]` || !reflect.DeepEqual(props["aggc"], []int64{2, 1, 1, 1, 1, 2}) {
		t.Fatalf("agg %v aggc %v", props["agg"], props["aggc"])
	}
	db := stored(t, props, simState{})

	// Counts only: the dictionary is not written again.
	next := &entState{}
	if err := next.decode(db.agg, db.aggc); err != nil {
		t.Fatal(err)
	}
	if next.Mentions != 2 || !reflect.DeepEqual(next.Descs, tally{"x": 1, "y": 2}) || !reflect.DeepEqual(next.Names, tally{"A": 1, "B": 1}) {
		t.Fatalf("decoded %+v", next)
	}
	next.add(graphstore.EntityContribution{Names: []string{"A"}, Descriptions: []string{"x"}}, 1)
	props, err = next.params("k")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := props["agg"]; ok {
		t.Errorf("unchanged dictionary written again: %v", props["agg"])
	}
	db = stored(t, props, db)

	// A new string goes last, a dropped one leaves; the others keep their place.
	again := &entState{}
	if err := again.decode(db.agg, db.aggc); err != nil {
		t.Fatal(err)
	}
	again.add(graphstore.EntityContribution{Names: []string{"B"}, Descriptions: []string{"x"}}, -1)
	again.add(graphstore.EntityContribution{Names: []string{"0"}, Descriptions: []string{"a"}}, 1)
	props, err = again.params("k")
	if err != nil {
		t.Fatal(err)
	}
	if props["agg"] != `[["A","0"],["t"],["x","y","a"]]` || !reflect.DeepEqual(props["aggc"], []int64{3, 2, 1, 1, 1, 2, 1}) {
		t.Errorf("agg %v aggc %v", props["agg"], props["aggc"])
	}
}

func TestRelationStateRoundTrip(t *testing.T) {
	st := &relState{Last: 2, LastLen: 5}
	st.add(0.5, []string{"r"}, nil, 1)
	st.add(1, []string{"r"}, []string{"d"}, 1)
	props, err := st.params()
	if err != nil {
		t.Fatal(err)
	}
	db := stored(t, props, simState{})
	back := &relState{}
	if err := back.decode(db.agg, db.aggc); err != nil {
		t.Fatal(err)
	}
	want := relState{Chunks: 2, Frac: 1, Last: 2, LastLen: 5, Types: tally{"r": 2}, Descs: tally{"d": 1}}
	if back.Chunks != want.Chunks || back.Frac != want.Frac || back.Last != want.Last || back.LastLen != want.LastLen ||
		!reflect.DeepEqual(back.Types, want.Types) || !reflect.DeepEqual(back.Descs, want.Descs) {
		t.Errorf("decoded %+v, want %+v", back, want)
	}
}

// TestOldStateLayout reads states written before ADR 0041 (one JSON object,
// no aggc), which the first Merge touching them rewrites in the new form.
func TestOldStateLayout(t *testing.T) {
	old := entState{Mentions: 3, Names: tally{"A": 3}, Descs: tally{"x": 1, "y": 2}}
	b, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	st := &entState{}
	if err := st.decode(string(b), nil); err != nil {
		t.Fatal(err)
	}
	if st.Mentions != 3 || !reflect.DeepEqual(st.Descs, old.Descs) || !reflect.DeepEqual(st.Names, old.Names) {
		t.Fatalf("decoded %+v, want %+v", st, old)
	}
	props, err := st.params("k")
	if err != nil {
		t.Fatal(err)
	}
	if props["agg"] != `[["A"],[],["x","y"]]` || !reflect.DeepEqual(props["aggc"], []int64{3, 3, 1, 2}) {
		t.Errorf("rewritten as agg %v aggc %v", props["agg"], props["aggc"])
	}
	rel := &relState{}
	if err := rel.decode(`{"c":2,"f":1,"t":{"r":2},"b":1,"l":3}`, nil); err != nil {
		t.Fatal(err)
	}
	if rel.Chunks != 2 || rel.Frac != 1 || rel.Last != 1 || rel.LastLen != 3 || rel.Types["r"] != 2 {
		t.Errorf("old relationship state decoded as %+v", rel)
	}
}

func TestMalformedState(t *testing.T) {
	for _, c := range []struct {
		agg  string
		aggc any
	}{
		{`[["A"],[],[]]`, []any{int64(1)}},           // a count missing
		{`[["A"],[]]`, []any{int64(1), int64(1)}},    // a list missing
		{`[["A"],[],[]]`, []any{int64(1), int64(0)}}, // a string counted 0
		{`{"m":1}`, []any{int64(1)}},                 // not a dictionary
		{`[["A"],[],[]]`, []any{int64(1), "x"}},      // not a count
	} {
		if err := new(entState).decode(c.agg, c.aggc); err == nil {
			t.Errorf("decode(%s, %v) accepted", c.agg, c.aggc)
		}
	}
}
