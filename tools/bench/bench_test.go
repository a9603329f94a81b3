package bench

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/goleak"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/normalize"
)

// TestBenchQuick runs every section of `go run ./tools/cmd/bench -quick` into a temporary file and
// checks that each section is there with its command and a table of figures.
func TestBenchQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every benchmark section (about a minute)")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	out := filepath.Join(dir, "benchmarks.md")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := Run(ctx, []string{"-quick", "-out", out, "-work-dir", filepath.Join(dir, "work")}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{"`nproc` = ", "| Go | go1.", "| date | 20"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the machine table lacks %q", want)
		}
	}
	for _, s := range benchSections() {
		t.Run(s.name, func(t *testing.T) {
			i := strings.Index(doc, "## "+s.title)
			if i < 0 {
				t.Fatalf("section %q missing", s.title)
			}
			body := doc[i+3:]
			if j := strings.Index(body, "\n## "); j >= 0 {
				body = body[:j]
			}
			if !strings.Contains(body, "Command: `go run ./tools/cmd/bench -only "+s.name+" -quick") {
				t.Errorf("section %s: no command line", s.name)
			}
			if strings.Count(body, "\n| ") < 3 {
				t.Errorf("section %s: no table of figures:\n%s", s.name, body)
			}
			if strings.Contains(body, "| 0.00 ms |") || strings.Contains(body, "NaN") || strings.Contains(body, "Inf") {
				t.Errorf("section %s: an empty figure:\n%s", s.name, body)
			}
		})
	}
}

func TestRunBenchFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown section", []string{"-only", "retrieval,nope"}, `unknown section "nope"`},
		{"stray argument", []string{"extra"}, "unexpected arguments"},
		{"unknown flag", []string{"-fast"}, "flag provided but not defined"},
		{"bad realistic size", []string{"-realistic-sizes", "10000,lots"}, `"lots" is not a positive number`},
		{"zero realistic size", []string{"-realistic-sizes", "0"}, `"0" is not a positive number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Run(context.Background(), tc.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run(%q) = %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// A regeneration replaces the generated part and keeps, byte for byte, what follows the
// marker of the sections measured by hand; a file without the marker is replaced whole.
func TestRunKeepsHandMeasured(t *testing.T) {
	dir := t.TempDir()
	hand := handMarker + "\n\n## Measured by hand\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
	for _, tc := range []struct {
		name, before, wantTail string
	}{
		{"with the marker", "# Benchmarks\n\nold generated text\n\n" + hand, hand},
		{"without the marker", "# Benchmarks\n\nold generated text\n", ""},
		{"no file", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".md")
			if tc.before != "" {
				if err := os.WriteFile(out, []byte(tc.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := Run(context.Background(), []string{"-quick", "-only", "events", "-out", out, "-work-dir", filepath.Join(dir, "work")}, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			doc := string(b)
			if strings.Contains(doc, "old generated text") {
				t.Error("the old generated part is still there")
			}
			if !strings.Contains(doc, "## Event codec and bus throughput") {
				t.Error("the new generated section is missing")
			}
			if tc.wantTail != "" && !strings.HasSuffix(doc, "\n"+tc.wantTail) {
				t.Errorf("the hand-measured part was not kept as it was; the file ends with:\n%s", doc[max(0, len(doc)-400):])
			}
			if tc.wantTail == "" && strings.Contains(doc, handMarker) {
				t.Error("a marker appeared in a file that had none")
			}
		})
	}
}

// TestSynthCorpus checks the properties the retrieval benchmark relies on: determinism,
// valid ids, entities named in their chunks, questions naming entities.
func TestSynthCorpus(t *testing.T) {
	a, b := newSynthCorpus(300, 1), newSynthCorpus(300, 1)
	if len(a.chunks) != 300 || len(a.entities) != 300/chunksPerEntity {
		t.Fatalf("%d chunks, %d entities", len(a.chunks), len(a.entities))
	}
	ids := map[string]bool{}
	for i, ch := range a.chunks {
		if ch.text != b.chunks[i].text {
			t.Fatalf("chunk %d differs between two generations with one seed", i)
		}
		ids[ch.id] = true
		x := a.extraction("bench", i)
		if err := x.Validate(); err != nil {
			t.Fatalf("chunk %d: extraction: %v", i, err)
		}
		ev := events.Chunk{Schema: events.SchemaChunk, Corpus: "bench", ID: ch.id, DocumentID: ch.docID, Position: 0, Total: 1, Text: ch.text}
		if err := ev.Validate(); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		for _, e := range ch.mentions {
			if !strings.Contains(ch.text, a.entities[e].name) {
				t.Fatalf("chunk %d does not name its entity %q", i, a.entities[e].name)
			}
		}
		if len(x.Relationships) != len(ch.mentions)-1 {
			t.Fatalf("chunk %d: %d relationships for %d entities", i, len(x.Relationships), len(ch.mentions))
		}
	}
	if len(ids) != len(a.chunks) {
		t.Errorf("%d distinct ids for %d chunks", len(ids), len(a.chunks))
	}
	keys := map[string]bool{}
	for _, e := range a.entities {
		keys[normalize.Name(e.name)] = true
	}
	named := 0
	qs := a.questions(50, 3)
	for _, q := range qs {
		for _, e := range a.entities {
			if strings.Contains(q, e.name) {
				named++
				break
			}
		}
	}
	if len(keys) != len(a.entities) || named < len(qs)/2 {
		t.Errorf("%d distinct keys for %d entities; %d of %d questions name an entity", len(keys), len(a.entities), named, len(qs))
	}
}

// TestBenchChatReply checks that the scripted endpoint answers each schema with JSON the
// services accept.
func TestBenchChatReply(t *testing.T) {
	withSchema := func(name, user string) openai.ChatCompletionRequest {
		return openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: user}},
			ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: name}}}
	}
	t.Run("extraction", func(t *testing.T) {
		got := benchChatReply(withSchema("extraction", "Extract at most 25 entities.\n\nText:\nthe Harbor Trust hired Velo Kastrup and Mira Osk in spring."))
		var x struct {
			Entities []struct {
				Name string `json:"name"`
			} `json:"entities"`
			Relationships []struct {
				Source, Target string
				Strength       int
			} `json:"relationships"`
		}
		if err := json.Unmarshal([]byte(got), &x); err != nil {
			t.Fatalf("%v: %s", err, got)
		}
		var names []string
		for _, e := range x.Entities {
			names = append(names, e.Name)
		}
		if !slices.Equal(names, []string{"Harbor Trust", "Velo Kastrup", "Mira Osk"}) || len(x.Relationships) != 2 {
			t.Errorf("got %s", got)
		}
		for _, r := range x.Relationships {
			if r.Strength < 1 || r.Strength > 10 {
				t.Errorf("strength %d outside 1..10", r.Strength)
			}
		}
	})
	t.Run("partial answer", func(t *testing.T) {
		report := "## Community report\nHarbour films\nThe harbour hosts a film festival. Ships dock at night. Directors meet there.\n\n## Question\n"
		for _, tc := range []struct {
			q          string
			wantPoints []string
			wantScore  float64
		}{
			{"What are the main themes about films and directors?", []string{"The harbour hosts a film festival.", "Directors meet there."}, 100},
			{"What are the main themes about films and painters?", []string{"The harbour hosts a film festival."}, 50},
			{"What are the main themes about painters?", nil, 0},
			{"What are the main themes?", []string{"The harbour hosts a film festival.", "Ships dock at night."}, 50},
		} {
			got := benchChatReply(withSchema("partial_answer", report+tc.q))
			var p struct {
				Answer string  `json:"answer"`
				Score  float64 `json:"score"`
			}
			if err := json.Unmarshal([]byte(got), &p); err != nil {
				t.Fatalf("%q: %v: %s", tc.q, err, got)
			}
			if pts := answerPoints(p.Answer); !slices.Equal(pts, tc.wantPoints) || p.Score != tc.wantScore {
				t.Errorf("%q: points %q score %v, want %q %v", tc.q, pts, p.Score, tc.wantPoints, tc.wantScore)
			}
			if tc.wantScore == 0 && p.Answer != "Not relevant" {
				t.Errorf("%q: answer %q for an unrelated report", tc.q, p.Answer)
			}
		}
	})
	t.Run("plain", func(t *testing.T) {
		if got := benchChatReply(openai.ChatCompletionRequest{}); !strings.Contains(got, "[1]") {
			t.Errorf("reduce answer %q cites nothing", got)
		}
	})
}

var benchSink []byte

func TestBenchRepeat(t *testing.T) {
	calls := 0
	cost, err := benchRepeat(func() error {
		calls++
		benchSink = make([]byte, 4096)
		return nil
	}, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if cost.runs != calls || cost.runs < 1 || cost.ns <= 0 {
		t.Errorf("cost %+v after %d calls", cost, calls)
	}
	if cost.bytes < 4096 || cost.allocs < 1 {
		t.Errorf("cost %+v: the 4 KiB allocation per call is not counted", cost)
	}
	boom := errors.New("boom")
	if _, err := benchRepeat(func() error { return boom }, time.Second); !errors.Is(err, boom) {
		t.Errorf("error = %v, want %v", err, boom)
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 5}, {90, 9}, {99, 10}, {100, 10}, {0, 1}} {
		if got := benchPercentile(ds, tc.p); got != tc.want {
			t.Errorf("benchPercentile(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if benchPercentile(nil, 50) != 0 {
		t.Error("benchPercentile of nothing is not 0")
	}
}
