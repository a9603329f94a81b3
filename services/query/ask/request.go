package ask

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/evidence"
)

// Modes of a question. The engine retrieves the context of naive, local, hybrid and mix
// (engine.Modes says what each composes); auto, global and drift are composed here.
const (
	// ModeAuto classifies the question: local, or global for a question about the
	// corpus as a whole.
	ModeAuto = "auto"
	// ModeNaive answers from the text lists alone (dense and BM25, fused as local
	// search fuses them): no entity, relationship or community report.
	ModeNaive = engine.ModeNaive
	// ModeLocal answers from local retrieval: passages, entities, relationships and the
	// most similar community reports.
	ModeLocal = engine.ModeLocal
	// ModeGlobal answers by map-reduce over the community reports of a level.
	ModeGlobal = "global"
	// ModeHybrid answers from local retrieval with the reports global search ranks
	// first for the question added to its context.
	ModeHybrid = engine.ModeHybrid
	// ModeMix is hybrid whose passages are the local ones and the naive ones fused.
	ModeMix = engine.ModeMix
	// ModeDrift ranks the community reports (the primer), derives follow-up questions
	// from them, runs a local search for the question and each follow-up, and answers
	// from the union.
	ModeDrift = "drift"
)

// Modes lists every mode, auto first.
var Modes = []string{ModeAuto, ModeNaive, ModeLocal, ModeGlobal, ModeHybrid, ModeMix, ModeDrift}

// Bounds of the answering part of a request (engine.MaxQueryBytes and engine.MaxTopK
// bound the rest).
const (
	// MaxResponseTypeBytes bounds response_type ("Multiple Paragraphs", "Bullet Points").
	MaxResponseTypeBytes = 100
	// MaxUserPromptBytes bounds user_prompt, the instructions added to the answer
	// prompt (about 500 tokens).
	MaxUserPromptBytes = 2000
)

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
	Weights *engine.Weights `json:"weights,omitempty"`
	// GraphRanking overrides the configured graph list ranking (ppr or path).
	GraphRanking string `json:"graph_ranking,omitempty"`
}

// Validate checks a request; errors match engine.ErrBadRequest.
func (r *Request) Validate() error {
	rr := r.retrieval()
	if err := rr.ValidateQuestion(); err != nil {
		return err
	}
	if r.Mode != "" && !slices.Contains(Modes, r.Mode) {
		return engine.BadRequestf("mode: %q is not one of %s", r.Mode, strings.Join(Modes, ", "))
	}
	if err := checkText("response_type", r.ResponseType, MaxResponseTypeBytes, false); err != nil {
		return err
	}
	if err := checkText("user_prompt", r.UserPrompt, MaxUserPromptBytes, true); err != nil {
		return err
	}
	return rr.ValidateOptions()
}

// retrieval is what the request asks of the engine: its mode when the engine retrieves
// it (naive, local, hybrid, mix), else none (local).
func (r *Request) retrieval() engine.Request {
	rr := engine.Request{Corpus: r.Corpus, Query: r.Query, TopK: r.TopK, Level: r.Level, Weights: r.Weights, GraphRanking: r.GraphRanking}
	if slices.Contains(engine.Modes, r.Mode) {
		rr.Mode = r.Mode
	}
	return rr
}

// checkText checks an instruction of a request: valid UTF-8 within limit bytes, without
// control characters (line breaks only when multiline).
func checkText(field, s string, limit int, multiline bool) error {
	switch {
	case len(s) > limit:
		return engine.BadRequestf("%s: is %d bytes, limit %d", field, len(s), limit)
	case !utf8.ValidString(s):
		return engine.BadRequestf("%s: is not valid UTF-8", field)
	}
	for _, r := range s {
		lineBreak := r == '\n' || r == '\t' || r == '\r'
		if unicode.IsControl(r) && (!multiline || !lineBreak) {
			return engine.BadRequestf("%s: holds the control character %U", field, r)
		}
	}
	return nil
}

// PartialAnswer is a global answer's partial answer from one community report.
type PartialAnswer = evidence.PartialAnswer

// Citation ties a marker in the answer to a source.
type Citation struct {
	Marker     string `json:"marker"` // "1" for [1]
	ChunkID    string `json:"chunk_id,omitempty"`
	DocumentID string `json:"document_id,omitempty"`
	Community  string `json:"community_id,omitempty"`
}

// Response answers a question.
type Response struct {
	Answer    string           `json:"answer"`
	Mode      string           `json:"mode"`
	Citations []Citation       `json:"citations"`
	Context   engine.Retrieved `json:"context"`
	Partials  []PartialAnswer  `json:"partial_answers,omitempty"`
	// FollowUps are the follow-up questions a drift answer searched for.
	FollowUps []string           `json:"follow_ups,omitempty"`
	Timings   map[string]float64 `json:"timings_ms"`
	Prompt    string             `json:"-"` // the generation prompt, for tests and debugging
}
