package graphstore

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestContribute(t *testing.T) {
	cases := []struct {
		name    string
		in      ChunkExtraction
		want    Contribution
		wantErr error
	}{
		{
			name: "groups mentions and implies relation ends",
			in: ChunkExtraction{ChunkID: "c", DocumentID: "d",
				Entities: []EntityMention{
					{Key: "b", Name: "B2", Type: "t", Description: "x"},
					{Key: "b", Name: "B1", Type: "t", Description: ""},
					{Key: "a", Name: "", Type: "", Description: "y"},
				},
				Relations: []RelationMention{
					{SourceKey: "a", TargetKey: "z", Type: "r", Strength: 2},
					{SourceKey: "a", TargetKey: "z", Type: "q", Strength: 5, Description: "why"},
					{SourceKey: "b", TargetKey: "a"},
					{SourceKey: "s", TargetKey: "s", Strength: 3},
				}},
			want: Contribution{ChunkID: "c", DocumentID: "d",
				Entities: []EntityContribution{
					{Key: "a", Descriptions: []string{"y"}},
					{Key: "b", Names: []string{"B1", "B2"}, Types: []string{"t"}, Descriptions: []string{"x"}},
					{Key: "z"},
				},
				Relations: []RelationContribution{
					{SourceKey: "a", TargetKey: "z", Types: []string{"q", "r"}, Descriptions: []string{"why"}, Strength: 5},
					{SourceKey: "b", TargetKey: "a", Strength: 1},
				}},
		},
		{name: "empty chunk", in: ChunkExtraction{ChunkID: "c"}, want: Contribution{ChunkID: "c"}},
		{name: "no chunk id", in: ChunkExtraction{}, wantErr: ErrInvalid},
		{name: "empty key", in: ChunkExtraction{ChunkID: "c", Entities: []EntityMention{{Name: "x"}}}, wantErr: ErrInvalid},
		{name: "empty end", in: ChunkExtraction{ChunkID: "c", Relations: []RelationMention{{SourceKey: "a"}}}, wantErr: ErrInvalid},
		{name: "negative", in: ChunkExtraction{ChunkID: "c", Relations: []RelationMention{{SourceKey: "a", TargetKey: "b", Strength: -1}}}, wantErr: ErrInvalid},
		{name: "key not UTF-8", in: ChunkExtraction{ChunkID: "c", Entities: []EntityMention{{Key: "\xc3"}}}, wantErr: ErrInvalid},
		{name: "description not UTF-8", in: ChunkExtraction{ChunkID: "c", Relations: []RelationMention{{SourceKey: "a", TargetKey: "b", Description: "\xc3"}}}, wantErr: ErrInvalid},
		{name: "long chunk id", in: ChunkExtraction{ChunkID: strings.Repeat("x", MaxKeyLen+1)}, wantErr: ErrInvalid},
		{name: "NaN", in: ChunkExtraction{ChunkID: "c", Relations: []RelationMention{{SourceKey: "a", TargetKey: "b", Strength: math.NaN()}}}, wantErr: ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Contribute(c.in)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("error = %v, want %v", err, c.wantErr)
			}
			if c.wantErr == nil && !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestMostFrequentAndLongest(t *testing.T) {
	cases := []struct {
		name   string
		counts map[string]int
		want   string
	}{
		{"empty", nil, ""},
		{"highest", map[string]int{"a": 1, "b": 3, "c": 2}, "b"},
		{"tie smallest", map[string]int{"z": 2, "m": 2, "x": 1}, "m"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for range 20 { // map order varies between runs; the answer must not
				if got := MostFrequent(c.counts); got != c.want {
					t.Fatalf("MostFrequent = %q, want %q", got, c.want)
				}
			}
		})
	}
	types := []struct {
		name   string
		counts map[string]int
		want   string
	}{
		{"empty", nil, ""},
		{"highest", map[string]int{"ORG": 1, "PERSON": 3}, "PERSON"},
		{"evidence outvotes OTHER", map[string]int{TypeOther: 3, "PERSON": 2}, "PERSON"},
		{"tie among the others smallest", map[string]int{TypeOther: 9, "PERSON": 1, "ORG": 1}, "ORG"},
		{"only OTHER", map[string]int{TypeOther: 2}, TypeOther},
		{"byte for byte", map[string]int{TypeOther: 3, "other": 1}, "other"},
	}
	for _, c := range types {
		t.Run("type/"+c.name, func(t *testing.T) {
			for range 20 {
				if got := MostFrequentType(c.counts); got != c.want {
					t.Fatalf("MostFrequentType = %q, want %q", got, c.want)
				}
			}
		})
	}
	longest := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"ab", "abc", "x"}, "abc"},
		{[]string{"bb", "aa", "b"}, "aa"},
	}
	for _, c := range longest {
		if got := Longest(c.in); got != c.want {
			t.Errorf("Longest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNormalizeCommunities(t *testing.T) {
	got, err := NormalizeCommunities([]Community{
		{ID: "c1", Level: 0, ParentID: "root", Members: []string{"b", "a", "b"}, RelationshipCount: 99},
		{ID: "root", Level: 1, Members: []string{"b", "a"}, ChildIDs: []string{"c1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Community{
		{ID: "c1", Level: 0, ParentID: "root", Members: []string{"a", "b"}},
		{ID: "root", Level: 1, ChildIDs: []string{"c1"}, Members: []string{"a", "b"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// FuzzContribute feeds arbitrary extractions (they come from LLM output) and checks
// that Contribute either rejects them with ErrInvalid or returns a well-formed
// contribution.
func FuzzContribute(f *testing.F) {
	f.Add("c", "a", "A", "b", "t", 1.0)
	f.Add("", "a", "", "a", "", -1.0)
	f.Add("c", "x", "X", "x", "r", 0.0)
	f.Fuzz(func(t *testing.T, chunk, k1, name, k2, typ string, strength float64) {
		in := ChunkExtraction{ChunkID: chunk,
			Entities:  []EntityMention{{Key: k1, Name: name, Type: typ}, {Key: k1, Name: typ}},
			Relations: []RelationMention{{SourceKey: k1, TargetKey: k2, Type: typ, Strength: strength}},
		}
		got, err := Contribute(in)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		if !slices.IsSortedFunc(got.Entities, func(a, b EntityContribution) int { return strings.Compare(a.Key, b.Key) }) {
			t.Fatalf("entities not sorted: %+v", got.Entities)
		}
		keys := map[string]bool{}
		for _, e := range got.Entities {
			if !utf8.ValidString(e.Key) || len(e.Key) > MaxKeyLen {
				t.Fatalf("accepted bad key %q", e.Key)
			}
			if e.Key == "" || keys[e.Key] || !slices.IsSorted(e.Names) || slices.Contains(e.Names, "") {
				t.Fatalf("malformed entity %+v", e)
			}
			keys[e.Key] = true
		}
		for _, r := range got.Relations {
			if r.SourceKey == r.TargetKey || !keys[r.SourceKey] || !keys[r.TargetKey] || !(r.Strength > 0) {
				t.Fatalf("malformed relation %+v (entities %v)", r, keys)
			}
		}
	})
}
