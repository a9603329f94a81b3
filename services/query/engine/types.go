package engine

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/services/query/evidence"
)

// Modes of a query.
const (
	ModeAuto   = "auto"
	ModeLocal  = "local"
	ModeGlobal = "global"
)

// MaxQueryBytes bounds a question.
const MaxQueryBytes = 4096

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
	Mode   string `json:"mode,omitempty"`  // auto (default), local, global
	TopK   int    `json:"top_k,omitempty"` // chunks in the context; default from config
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
	switch r.Mode {
	case "", ModeAuto, ModeLocal, ModeGlobal:
	default:
		return BadRequestf("mode: %q is not one of auto, local, global", r.Mode)
	}
	if r.TopK < 0 || r.TopK > 100 {
		return BadRequestf("top_k: %d is outside 0..100", r.TopK)
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
	Answer    string             `json:"answer"`
	Mode      string             `json:"mode"`
	Citations []Citation         `json:"citations"`
	Context   Retrieved          `json:"context"`
	Partials  []PartialAnswer    `json:"partial_answers,omitempty"`
	Timings   map[string]float64 `json:"timings_ms"`
	Prompt    string             `json:"-"` // the generation prompt, for tests and debugging
}
