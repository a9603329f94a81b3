package evidence

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
	// Section is the chunk's Markdown section path ("Guide > Install"); empty before
	// the document's first heading. Text begins with the title and the section
	// (schema.ChunkText).
	Section string `json:"section,omitempty"`
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

// PartialAnswer is one map-phase answer of a global search.
type PartialAnswer struct {
	CommunityID string  `json:"community_id"`
	Answer      string  `json:"answer"`
	Score       float64 `json:"score"` // 0..100 relevance
}
