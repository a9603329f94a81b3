package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/services/query/evidence"
)

// Modes of retrieval (modes.go says what each one composes). A question's other modes
// (auto, global, drift) are package ask's: they need the answerer, and compose Retrieve,
// Reports and Drift.
const (
	// ModeNaive retrieves the text lists alone (dense and BM25, fused as local
	// search fuses them): no entity, relationship or community report.
	ModeNaive = "naive"
	// ModeLocal is local retrieval: passages, entities, relationships and the most
	// similar community reports.
	ModeLocal = "local"
	// ModeHybrid is local retrieval with the reports global search ranks first for the
	// question added.
	ModeHybrid = "hybrid"
	// ModeMix is hybrid whose passages are the local ones and the naive ones fused.
	ModeMix = "mix"
)

// Modes lists the modes of Retrieve, local (the default) first.
var Modes = []string{ModeLocal, ModeNaive, ModeHybrid, ModeMix}

// Bounds of a request.
const (
	MaxQueryBytes = 4096 // a question
	MaxTopK       = 100  // top_k
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

// Request asks retrieval for the context of a question.
type Request struct {
	Corpus string `json:"corpus"`
	Query  string `json:"query"`
	Mode   string `json:"mode,omitempty"`  // one of Modes; local by default
	TopK   int    `json:"top_k,omitempty"` // chunks in the context; default from config
	// Level selects the community level (0 = the coarsest, the root); nil picks
	// automatically.
	Level *int `json:"level,omitempty"`
	// Weights overrides the configured RRF list weights for this request; a zero weight
	// turns a list off (e.g. {"dense":0,"lexical":1,"graph":0} is plain BM25).
	Weights *Weights `json:"weights,omitempty"`
	// GraphRanking overrides the configured graph list ranking (ppr or path).
	GraphRanking string `json:"graph_ranking,omitempty"`
}

// Validate checks a request; errors match ErrBadRequest.
func (r *Request) Validate() error {
	if err := r.ValidateQuestion(); err != nil {
		return err
	}
	if r.Mode != "" && !slices.Contains(Modes, r.Mode) {
		return BadRequestf("mode: %q is not one of %s", r.Mode, strings.Join(Modes, ", "))
	}
	return r.ValidateOptions()
}

// ValidateQuestion checks the corpus and the question; ValidateOptions the rest but the
// mode: a caller whose requests have modes of their own (package ask) checks them in
// between. Errors match ErrBadRequest.
func (r *Request) ValidateQuestion() error {
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
	return nil
}

// ValidateOptions checks what a request asks of retrieval besides its question and
// mode: top_k, level, weights and graph_ranking.
func (r *Request) ValidateOptions() error {
	if r.TopK < 0 || r.TopK > MaxTopK {
		return BadRequestf("top_k: %d is outside 0..%d (0: the server's default)", r.TopK, MaxTopK)
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

// What retrieval finds, defined in package evidence (which the answerers read without
// depending on the engine).
type (
	ListHit      = evidence.ListHit
	Chunk        = evidence.Chunk
	Entity       = evidence.Entity
	Relationship = evidence.Relationship
	Community    = evidence.Community
	Retrieved    = evidence.Retrieved
)

// Result is what one retrieval found, with the duration of each of its phases.
type Result struct {
	Context Retrieved
	// Linked reports whether entity linking linked an entity of the graph to the
	// question (local retrieval).
	Linked bool
	// FollowUps are the follow-up questions a drift retrieval searched for.
	FollowUps []string
	// Timings holds the milliseconds of each phase (a response's timings_ms), and
	// "total", the time the call took.
	Timings map[string]float64
}
