package boltgraph

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/graphrag/graphrag/pkg/graphstore"
)

func sampleRecords() (entRec, relRec, graphstore.Contribution, graphstore.Community) {
	ent := entRec{
		Names: counts{{"Ada", 2}, {"Ada Lovelace", 1}}, Types: counts{{"person", 3}},
		Descs:    descSet{N: 2, Sum: 1<<63 + 5, Longest: "wrote the first program"},
		Mentions: 3, PageRank: 0.25, Summary: "Ada, summarized", SummaryFP: 1<<64 - 1,
	}
	rel := relRec{Types: counts{{"knows", 1}}, Descs: descSet{N: 1, Sum: 7, Longest: "letters"}, Chunks: 2, Weight: 5.5}
	ct := graphstore.Contribution{ChunkID: "c1", DocumentID: "d1",
		Entities: []graphstore.EntityContribution{
			{Key: "ada", Names: []string{"Ada"}, Types: []string{"person"}, Descriptions: []string{"a", "b"}},
			{Key: "implied"},
		},
		Relations: []graphstore.RelationContribution{{SourceKey: "ada", TargetKey: "implied", Descriptions: []string{"x"}, Strength: 2.5}},
	}
	cm := graphstore.Community{ID: "c", Level: 1, ParentID: "p", ChildIDs: []string{"a", "b"}, Members: []string{"ada"}, RelationshipCount: 4}
	return ent, rel, ct, cm
}

func TestCodecRoundTrip(t *testing.T) {
	ent, rel, ct, cm := sampleRecords()
	var gotEnt entRec
	if err := decodeEnt(encodeEnt(&ent), &gotEnt); err != nil || !reflect.DeepEqual(gotEnt, ent) {
		t.Errorf("entity round trip = %+v, %v; want %+v", gotEnt, err, ent)
	}
	if pr, err := entPageRank(encodeEnt(&ent)); err != nil || pr != ent.PageRank {
		t.Errorf("entPageRank = %v, %v; want %v", pr, err, ent.PageRank)
	}
	var gotRel relRec
	if err := decodeRel(encodeRel(&rel), &gotRel); err != nil || !reflect.DeepEqual(gotRel, rel) {
		t.Errorf("relationship round trip = %+v, %v; want %+v", gotRel, err, rel)
	}
	var gotCt graphstore.Contribution
	if err := decodeContribution(encodeContribution(&ct), &gotCt); err != nil || !reflect.DeepEqual(gotCt, ct) {
		t.Errorf("contribution round trip = %+v, %v; want %+v", gotCt, err, ct)
	}
	if keys, err := contributionKeys(encodeContribution(&ct)); err != nil || !reflect.DeepEqual(keys, []string{"ada", "implied"}) {
		t.Errorf("contributionKeys = %q, %v", keys, err)
	}
	var gotCm graphstore.Community
	if err := decodeCommunity(encodeCommunity(&cm), &gotCm); err != nil || !reflect.DeepEqual(gotCm, cm) {
		t.Errorf("community round trip = %+v, %v; want %+v", gotCm, err, cm)
	}
}

// TestCodecRefusesDamage cuts and extends every record: each must fail to decode
// with errCorrupt, never panic or decode as something else.
func TestCodecRefusesDamage(t *testing.T) {
	ent, rel, ct, cm := sampleRecords()
	codecs := map[string]struct {
		enc []byte
		dec func([]byte) error
	}{
		"entity":       {encodeEnt(&ent), func(b []byte) error { return decodeEnt(b, new(entRec)) }},
		"relationship": {encodeRel(&rel), func(b []byte) error { return decodeRel(b, new(relRec)) }},
		"contribution": {encodeContribution(&ct), func(b []byte) error { return decodeContribution(b, new(graphstore.Contribution)) }},
		"community":    {encodeCommunity(&cm), func(b []byte) error { return decodeCommunity(b, new(graphstore.Community)) }},
		"membership":   {encodeStrs([]string{"a", "", "b"}), func(b []byte) error { _, err := decodeStrs(b, "membership"); return err }},
	}
	for name, c := range codecs {
		for n := range len(c.enc) {
			if err := c.dec(c.enc[:n]); !errors.Is(err, errCorrupt) {
				t.Errorf("%s cut to %d of %d bytes: err = %v, want errCorrupt", name, n, len(c.enc), err)
			}
		}
		if err := c.dec(append(slices.Clip(c.enc), 0)); !errors.Is(err, errCorrupt) {
			t.Errorf("%s with a trailing byte: err = %v, want errCorrupt", name, err)
		}
	}
}

func TestCountsAdd(t *testing.T) {
	var cs counts
	cs.add([]string{"b", "a", "c"}, 1)
	cs.add([]string{"b"}, 1)
	cs.add([]string{"c", "zz"}, -1)
	if want := (counts{{"a", 1}, {"b", 2}}); !reflect.DeepEqual(cs, want) {
		t.Fatalf("counts = %v, want %v", cs, want)
	}
	if got := cs.mostFrequent(); got != "b" {
		t.Errorf("mostFrequent = %q, want b", got)
	}
	cs.add([]string{"a"}, 1)
	if got := cs.mostFrequent(); got != "a" {
		t.Errorf("mostFrequent of a tie = %q, want the smallest, a", got)
	}
	cs.add([]string{"a", "a", "b", "b"}, -1)
	if cs != nil {
		t.Errorf("counts after removing everything = %v, want nil", cs)
	}
}

// TestCountsMostFrequentType checks the Type rule against graphstore's, which the
// Neo4j driver uses, on the same counts.
func TestCountsMostFrequentType(t *testing.T) {
	const other = graphstore.TypeOther
	for _, m := range []map[string]int{
		nil,
		{other: 1},
		{other: 3, "PERSON": 2},
		{other: 3, "PERSON": 1, "ORG": 1},
		{"PERSON": 2, "ORG": 3},
		{other: 3, "other": 1},
		{"A": 1, "B": 1},
	} {
		var cs counts
		for s, n := range m {
			for range n {
				cs.add([]string{s}, 1)
			}
		}
		if got, want := cs.mostFrequentType(), graphstore.MostFrequentType(m); got != want {
			t.Errorf("mostFrequentType of %v = %q, want %q", m, got, want)
		}
	}
}

func FuzzDecodeContribution(f *testing.F) {
	_, _, ct, _ := sampleRecords()
	f.Add(encodeContribution(&ct))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got graphstore.Contribution
		if err := decodeContribution(b, &got); err != nil {
			return
		}
		// What decodes must survive a round trip (overlong varints may make the
		// bytes differ; stored records are always written by encodeContribution).
		var again graphstore.Contribution
		if err := decodeContribution(encodeContribution(&got), &again); err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("%x decodes to %+v, which round trips to %+v, %v", b, got, again, err)
		}
	})
}
