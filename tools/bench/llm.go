package bench

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// The scripted OpenAI-compatible endpoint of the pipeline and map-phase benchmarks
// (llmtest.NewServer with benchChatReply): it answers each structured-output request with
// valid JSON for the schema it names, derived from the prompt, so the services parse,
// validate and publish real results.

// benchProperNamePair matches the planted entity names of the synthetic corpus (two
// capitalized words).
var benchProperNamePair = regexp.MustCompile(`\b[A-Z][a-z]+ [A-Z][a-z]+\b`)

func benchChatReply(req openai.ChatCompletionRequest) string {
	schema := ""
	if rf := req.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		schema = rf.JSONSchema.Name
	}
	last := ""
	if len(req.Messages) > 0 {
		last = req.Messages[len(req.Messages)-1].Content
	}
	switch schema {
	case "extraction":
		return extractionReply(last)
	case "partial_answer":
		return partialAnswerReply(last)
	case "":
		return "The partial answers agree on the main themes [1]."
	default:
		return "{}"
	}
}

type benchEntity struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
}

type benchRelationship struct {
	Source      string `json:"source"`
	Target      string `json:"target"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Strength    int    `json:"strength"`
}

// extractionReply follows the extractor's extraction schema: the capitalized name pairs
// of the text are the entities, consecutive ones are related.
func extractionReply(prompt string) string {
	text := prompt
	if _, after, ok := strings.Cut(prompt, "\nText:\n"); ok {
		text = after
	}
	out := struct {
		Entities      []benchEntity       `json:"entities"`
		Relationships []benchRelationship `json:"relationships"`
	}{Entities: []benchEntity{}, Relationships: []benchRelationship{}}
	var names []string
	for _, m := range benchProperNamePair.FindAllString(text, -1) {
		if !slices.Contains(names, m) && len(names) < 10 {
			names = append(names, m)
		}
	}
	for i, n := range names {
		out.Entities = append(out.Entities, benchEntity{Name: n, Type: benchEntityTypes[i%len(benchEntityTypes)],
			Description: n + " is named in the text."})
		if i > 0 {
			out.Relationships = append(out.Relationships, benchRelationship{Source: names[i-1], Target: n, Type: "RELATED_TO",
				Description: names[i-1] + " and " + n + " are named together.", Strength: 1 + i%10})
		}
	}
	b, _ := json.Marshal(out) // plain strings and ints: cannot fail
	return string(b)
}

// partialAnswerReply follows the query service's map schema: the judge's points and
// score for the report and question of the map prompt (judge.go).
func partialAnswerReply(prompt string) string {
	report, q, _ := strings.Cut(strings.TrimPrefix(prompt, "## Community report\n"), "\n\n## Question\n")
	title, summary, _ := strings.Cut(report, "\n")
	points, score := judgeReport(q, title, summary)
	b, _ := json.Marshal(map[string]any{"answer": judgeAnswer(points), "score": score})
	return string(b)
}

// benchCallRecorder is an http.RoundTripper that records when each request started and how
// long it took.
type benchCallRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	log  []benchTimedCall
}

type benchTimedCall struct {
	start time.Time
	d     time.Duration
}

func (c *benchCallRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	t0 := time.Now()
	resp, err := c.next.RoundTrip(r)
	if err == nil {
		// The body is read by the caller; the time to first byte is the call's latency
		// at the endpoint plus transport.
		c.mu.Lock()
		c.log = append(c.log, benchTimedCall{t0, time.Since(t0)})
		c.mu.Unlock()
	}
	return resp, err
}

// CloseIdleConnections lets http.Client.CloseIdleConnections (llm.Client.Close) reach the
// wrapped transport.
func (c *benchCallRecorder) CloseIdleConnections() {
	if ci, ok := c.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// take returns the recorded calls in start order and forgets them.
func (c *benchCallRecorder) take() []benchTimedCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.log
	c.log = nil
	slices.SortFunc(out, func(a, b benchTimedCall) int { return a.start.Compare(b.start) })
	return out
}
