package answer

import (
	"context"
	"log/slog"
	"strings"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/textseg"
	"github.com/graphrag/graphrag/services/query/evidence"
)

// Answerer writes the answers to questions from what retrieval found. New picks one of
// its two implementations, once: with a model, or offline (extractive).
type Answerer interface {
	// Global reports whether a question asks about the corpus as a whole (answered by
	// map-reduce over community reports) rather than about specific things; linked says
	// whether retrieval linked an entity of the graph to the question.
	Global(ctx context.Context, question string, linked bool) bool
	// Local answers a local question from what retrieval found, in the form style asks
	// for; the answer's markers [n] cite found.Chunks. onDelta, when not nil, receives
	// the answer as it is written.
	Local(ctx context.Context, question string, found evidence.Retrieved, style Style, onDelta func(string) error) (Answer, error)
	// PaysPerReport reports whether mapping a community report costs a model call: the
	// caller then ranks the candidate reports by the question and maps only the best.
	PaysPerReport() bool
	// Map writes a partial answer from each community report, in the order given (the
	// best-ranked first), and returns the relevant ones, best score first, with the
	// reports it mapped (a prefix of reports). style is the one Reduce will be given
	// (its instructions count in the token budget).
	Map(ctx context.Context, question string, reports []evidence.Community, style Style) ([]evidence.PartialAnswer, []evidence.Community, error)
	// Reduce answers a global question from the partial answers, in the form style
	// asks for; the answer's markers [n] cite partials. onDelta is as for Local.
	Reduce(ctx context.Context, question string, partials []evidence.PartialAnswer, style Style, onDelta func(string) error) (Answer, error)
	// FollowUps derives at most n follow-up questions from the community reports
	// ranked first for a question (a drift search's primer, best first), each to be
	// answered by a local search. keyEntities are the names of the top report's
	// members, most central first: the extractive answerer's follow-ups, and the
	// model's when its call fails.
	FollowUps(ctx context.Context, question string, primer []evidence.Community, keyEntities []string, n int) []string
}

// Style is how the asker wants an answer written: the request's response_type and
// user_prompt, checked by the engine (length, characters).
type Style struct {
	// ResponseType is the answer's form, free text: "Multiple Paragraphs", "Single
	// Paragraph", "Bullet Points".
	ResponseType string
	// UserPrompt holds the asker's instructions, added to the prompt after the question.
	UserPrompt string
}

// Bullets reports whether the response type asks for a list.
func (s Style) Bullets() bool {
	t := strings.ToLower(s.ResponseType)
	return strings.Contains(t, "bullet") || strings.Contains(t, "list")
}

// Paragraph reports whether the response type asks for a single paragraph.
func (s Style) Paragraph() bool {
	t := strings.ToLower(s.ResponseType)
	return strings.Contains(t, "single paragraph") || t == "paragraph"
}

// Answer is a written answer.
type Answer struct {
	Text string
	// Cited holds the sources the answer cites (1-based numbers in the prompt), in the
	// order of their markers: marker [i] cites source Cited[i-1].
	Cited []int
	// Prompt is the generation prompt, for tests and debugging (written offline too,
	// where no model reads it).
	Prompt string
}

// Config bounds what the model is asked for. Package ask's Config documents each field
// (docs/configuration.md); New expects its effective values.
type Config struct {
	AnswerTokens   int // a local answer
	MapMaxTokens   int // a partial answer
	MapConcurrency int // parallel map calls
	// GlobalTokenBudget bounds the prompt tokens of one global question, map and reduce
	// calls together; negative: no bound.
	GlobalTokenBudget int
	ReduceTokens      int // a global answer
}

// New returns the model's answerer when client is not nil, else the extractive one,
// which needs no model: answers made of the passages' own sentences, a heuristic
// classifier, and partial answers made of the reports' sentences. log records the
// model calls that failed and were worked around. Every answer is a span (tracing.go).
func New(client *llm.Client, cfg Config, log *slog.Logger) Answerer {
	if client == nil {
		return tracedAnswerer(extractive{}, "extractive")
	}
	if log == nil {
		log = slog.Default()
	}
	return tracedAnswerer(&modelAnswerer{client: client, cfg: cfg, log: log}, "model")
}

// cite renumbers the markers of an answer written without a model and passes it to
// onDelta in one piece.
func cite(answer string, sources int, onDelta func(string) error) (text string, cited []int, err error) {
	rn := newRenumberer(sources)
	rn.write(answer)
	rn.flush()
	if onDelta != nil {
		if err := onDelta(rn.text()); err != nil {
			return "", nil, err
		}
	}
	return rn.text(), rn.order, nil
}

// sentences splits with the project's one sentence segmenter.
func sentences(s string) []string {
	var out []string
	for _, sp := range textseg.Sentences(s) {
		if t := strings.TrimSpace(sp.Text(s)); len(t) > 3 {
			out = append(out, t)
		}
	}
	return out
}

func firstSentence(s string) string {
	ss := sentences(s)
	if len(ss) == 0 {
		return strings.TrimSpace(s)
	}
	return ss[0]
}
