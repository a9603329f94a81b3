package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/services/query/evidence"
)

// Modes of a query (modes.go says what each one composes).
const (
	// ModeAuto classifies the question: local, or global for a question about the
	// corpus as a whole.
	ModeAuto = "auto"
	// ModeNaive answers from the text lists alone (dense and BM25, fused as local
	// search fuses them): no entity, relationship or community report.
	ModeNaive = "naive"
	// ModeLocal answers from local retrieval: passages, entities, relationships and the
	// most similar community reports.
	ModeLocal = "local"
	// ModeGlobal answers by map-reduce over the community reports of a level.
	ModeGlobal = "global"
	// ModeHybrid answers from local retrieval with the reports global search ranks
	// first for the question added to its context.
	ModeHybrid = "hybrid"
	// ModeMix is hybrid whose passages are the local ones and the naive ones fused.
	ModeMix = "mix"
	// ModeDrift ranks the community reports (the primer), derives follow-up questions
	// from them, runs a local search for the question and each follow-up, and answers
	// from the union.
	ModeDrift = "drift"
)

// Modes lists every mode, auto first.
var Modes = []string{ModeAuto, ModeNaive, ModeLocal, ModeGlobal, ModeHybrid, ModeMix, ModeDrift}

// Bounds of a request.
const (
	MaxQueryBytes = 4096 // a question
	// MaxResponseTypeBytes bounds response_type ("Multiple Paragraphs", "Bullet Points").
	MaxResponseTypeBytes = 100
	// MaxUserPromptBytes bounds user_prompt, the instructions added to the answer
	// prompt (about 500 tokens).
	MaxUserPromptBytes = 2000
	MaxTopK            = 100 // top_k
)

// ErrBadRequest is matched by every request validation error (the API answers 400).
var ErrBadRequest = errors.New("bad request")

// ErrUnknownCorpus is returned for a corpus that holds nothing (the API answers 404).
var ErrUnknownCorpus = errors.New("unknown corpus")

type badRequest struct{ msg string }

func (e *badRequest) Error() string        { return e.msg }
func (e *badRequest) Is(target error) bool { return target == ErrBadRequest }

// BadRequestf returns a request validation error: it matches ErrBadRequest, and its
// message is what the caller got wrong. Transports use it for the input they parse
// themselves (a body, a query parameter).
func BadRequestf(format string, args ...any) error {
	return &badRequest{msg: fmt.Sprintf(format, args...)}
}

// Request is a question.
type Request struct {
	Corpus string `json:"corpus"`
	Query  string `json:"query"`
	Mode   string `json:"mode,omitempty"`  // one of Modes; auto by default
	TopK   int    `json:"top_k,omitempty"` // chunks in the context; default from config
	// ResponseType says what form the answer takes ("Multiple Paragraphs", "Single
	// Paragraph", "Bullet Points"): given to the model; the extractive answers honour
	// bullets and a single paragraph.
	ResponseType string `json:"response_type,omitempty"`
	// UserPrompt holds instructions added to the answer prompt (not to retrieval).
	UserPrompt string `json:"user_prompt,omitempty"`
	// OnlyContext returns the context the mode assembled, without an answer: no
	// classification, follow-up or answer call (auto classifies by the question's
	// global cue; drift's follow-ups are the top report's key entities).
	OnlyContext bool `json:"only_context,omitempty"`
	// Level selects the community level (0 = the coarsest, the root); nil picks
	// automatically.
	Level  *int `json:"level,omitempty"`
	Stream bool `json:"stream,omitempty"`
	// Weights overrides the configured RRF list weights for this request; a zero weight
	// turns a list off (e.g. {"dense":0,"lexical":1,"graph":0} is plain BM25).
	Weights *Weights `json:"weights,omitempty"`
	// GraphRanking overrides the configured graph list ranking (ppr or path).
	GraphRanking string `json:"graph_ranking,omitempty"`
}

// Validate checks a request; errors match ErrBadRequest.
func (r *Request) Validate() error {
	if err := events.ValidateCorpus(r.Corpus); err != nil {
		return BadRequestf("corpus: %v", err)
	}
	q := strings.TrimSpace(r.Query)
	switch {
	case q == "":
		return BadRequestf("query: is empty")
	case len(r.Query) > MaxQueryBytes:
		return BadRequestf("query: is %d bytes, limit %d", len(r.Query), MaxQueryBytes)
	case !utf8.ValidString(r.Query):
		return BadRequestf("query: is not valid UTF-8")
	}
	if r.Mode != "" && !slices.Contains(Modes, r.Mode) {
		return BadRequestf("mode: %q is not one of %s", r.Mode, strings.Join(Modes, ", "))
	}
	if r.TopK < 0 || r.TopK > MaxTopK {
		return BadRequestf("top_k: %d is outside 0..%d (0: the server's default)", r.TopK, MaxTopK)
	}
	if err := checkText("response_type", r.ResponseType, MaxResponseTypeBytes, false); err != nil {
		return err
	}
	if err := checkText("user_prompt", r.UserPrompt, MaxUserPromptBytes, true); err != nil {
		return err
	}
	if r.Level != nil && (*r.Level < 0 || *r.Level > 16) {
		return BadRequestf("level: %d is outside 0..16", *r.Level)
	}
	if w := r.Weights; w != nil && (w.Dense < 0 || w.Lexical < 0 || w.Graph < 0 || w.Subject < 0 || *w == (Weights{})) {
		return BadRequestf("weights: must be non-negative and not all zero")
	}
	switch r.GraphRanking {
	case "", RankPPR, RankPath:
	default:
		return BadRequestf("graph_ranking: %q is not %s or %s", r.GraphRanking, RankPPR, RankPath)
	}
	return nil
}

// checkText checks an instruction of a request: valid UTF-8 within limit bytes, without
// control characters (line breaks only when multiline).
func checkText(field, s string, limit int, multiline bool) error {
	switch {
	case len(s) > limit:
		return BadRequestf("%s: is %d bytes, limit %d", field, len(s), limit)
	case !utf8.ValidString(s):
		return BadRequestf("%s: is not valid UTF-8", field)
	}
	for _, r := range s {
		lineBreak := r == '\n' || r == '\t' || r == '\r'
		if unicode.IsControl(r) && (!multiline || !lineBreak) {
			return BadRequestf("%s: holds the control character %U", field, r)
		}
	}
	return nil
}

// The material of an answer, defined in package evidence (which the answerers read
// without depending on the engine).
type (
	ListHit       = evidence.ListHit
	Chunk         = evidence.Chunk
	Entity        = evidence.Entity
	Relationship  = evidence.Relationship
	Community     = evidence.Community
	Retrieved     = evidence.Retrieved
	PartialAnswer = evidence.PartialAnswer
)

// Citation ties a marker in the answer to a source.
type Citation struct {
	Marker     string `json:"marker"` // "1" for [1]
	ChunkID    string `json:"chunk_id,omitempty"`
	DocumentID string `json:"document_id,omitempty"`
	Community  string `json:"community_id,omitempty"`
}

// Response answers a question.
type Response struct {
	Answer    string          `json:"answer"`
	Mode      string          `json:"mode"`
	Citations []Citation      `json:"citations"`
	Context   Retrieved       `json:"context"`
	Partials  []PartialAnswer `json:"partial_answers,omitempty"`
	// FollowUps are the follow-up questions a drift answer searched for.
	FollowUps []string           `json:"follow_ups,omitempty"`
	Timings   map[string]float64 `json:"timings_ms"`
	Prompt    string             `json:"-"` // the generation prompt, for tests and debugging
}
