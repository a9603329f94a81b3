package engine

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/events"
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
	// Level selects the community level (0 = finest); nil picks automatically.
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

// ListHit says where a list ranked a chunk (1-based).
type ListHit struct {
	List  string  `json:"list"` // dense, lexical, graph, subject
	Rank  int     `json:"rank"`
	Score float64 `json:"score"`
}

// Chunk is a retrieved passage.
type Chunk struct {
	ID         string `json:"id"`
	DocumentID string `json:"document_id"`
	Title      string `json:"title,omitempty"`
	// Subject names the entity the chunk's document is about (the title when it names
	// one, else the subject its text opens with).
	Subject string    `json:"subject,omitempty"`
	Text    string    `json:"text"`
	Score   float64   `json:"score"` // fused RRF score
	Lists   []ListHit `json:"lists"`
	// GraphPath is the chain of entities that led the graph list to this chunk.
	GraphPath []string `json:"graph_path,omitempty"`
}

// Entity is a linked or traversed entity.
type Entity struct {
	Key         string  `json:"key"`
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Description string  `json:"description,omitempty"`
	PageRank    float64 `json:"pagerank"`
	Distance    int     `json:"distance"` // 0 = linked from the query
	LinkedBy    string  `json:"linked_by,omitempty"`
	// Evidence is the chunk among this entity's own that best matches the query.
	Evidence string `json:"evidence,omitempty"`
	// Mentions counts the chunks that mention the entity.
	Mentions int `json:"mentions,omitempty"`
	// Communities holds the entity's community id per level (index = level).
	Communities []string `json:"communities,omitempty"`
	// Descriptions are all its descriptions, where a caller asked for them.
	Descriptions []string `json:"descriptions,omitempty"`
}

// Relationship links two entities, with its evidence.
type Relationship struct {
	Source      string   `json:"source"`
	Target      string   `json:"target"`
	Type        string   `json:"type"`
	Description string   `json:"description,omitempty"`
	Weight      float64  `json:"weight"`
	Evidence    []string `json:"evidence,omitempty"` // chunk ids
}

// Community is a community report in the context.
type Community struct {
	ID      string  `json:"id"`
	Level   int     `json:"level"`
	Title   string  `json:"title"`
	Summary string  `json:"summary"`
	Rating  float64 `json:"rating"`
	Score   float64 `json:"score"`
}

// Retrieved is what local retrieval found: the passages ranked by fused score, the
// entities and relationships around the question, and the community reports. Responses
// carry it as "context" (the Context schema of the HTTP API's OpenAPI document).
type Retrieved struct {
	Chunks        []Chunk        `json:"chunks"`
	Entities      []Entity       `json:"entities"`
	Relationships []Relationship `json:"relationships"`
	Communities   []Community    `json:"communities"`
}

// Citation ties a marker in the answer to a source.
type Citation struct {
	Marker     string `json:"marker"` // "1" for [1]
	ChunkID    string `json:"chunk_id,omitempty"`
	DocumentID string `json:"document_id,omitempty"`
	Community  string `json:"community_id,omitempty"`
}

// PartialAnswer is one map-phase answer of a global search.
type PartialAnswer struct {
	CommunityID string  `json:"community_id"`
	Answer      string  `json:"answer"`
	Score       float64 `json:"score"` // 0..100 relevance
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
