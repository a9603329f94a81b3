package events

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Schema names, one per event type. The suffix is the major version.
const (
	SchemaDocument   = "graphrag.document.v1"
	SchemaChunk      = "graphrag.chunk.v1"
	SchemaExtraction = "graphrag.extraction.v1"
	SchemaCommunity  = "graphrag.community.v1"
	SchemaSummary    = "graphrag.summary.v1"
)

// Limits that keep one event from hurting a consumer.
const (
	MaxDocumentBytes = 64 << 20 // a document's text, inline or in the object store
	MaxTitleBytes    = 1024
	// MaxSubjectAliases bounds Chunk.SubjectAliases.
	MaxSubjectAliases = 8
	MaxIDBytes        = 200
	maxNameBytes      = 512
	maxDescBytes      = 8192
	maxEntities       = 500
	maxRelations      = 1000
)

// Event is implemented by every event type.
type Event interface {
	// SchemaName is the schema this Go type encodes.
	SchemaName() string
	// Validate checks every field; the returned error wraps *FieldError values.
	Validate() error
}

// IDPattern is what a document id (and every id derived from one) may be: any text
// without control characters, that neither begins with white space or one of . / \ -
// nor ends with white space. So a file's path is its id as it is, with spaces, accents
// and any script (ADR 0048). The JSON Schemas in docs/schema use the same expression.
const IDPattern = `^[^\x00-\x20\x7f-\x9f./\\-]([^\x00-\x1f\x7f-\x9f]*[^\x00-\x20\x7f-\x9f])?$`

var (
	idRE = regexp.MustCompile(IDPattern)
	// tokenRE is what an event id may be: it names a request, not a document.
	tokenRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+=-]*$`)
)

func validateID(field, id string) error {
	switch {
	case id == "":
		return fieldErr(field, "is required")
	case len(id) > MaxIDBytes:
		return fieldErr(field, "is %d bytes, limit %d", len(id), MaxIDBytes)
	case !utf8.ValidString(id):
		return fieldErr(field, "is not valid UTF-8")
	case !idRE.MatchString(id):
		return fieldErr(field, "%q may not hold control characters, begin with white space or one of . / \\ - or end with white space", id)
	}
	return nil
}

func validateEventID(field, id string) error {
	switch {
	case len(id) > MaxIDBytes:
		return fieldErr(field, "is %d bytes, limit %d", len(id), MaxIDBytes)
	case !tokenRE.MatchString(id):
		return fieldErr(field, "%q may hold only ASCII letters, digits and . _ : / @ + = -, starting with a letter or digit", id)
	}
	return nil
}

func validateText(field, s string, limit int, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return fieldErr(field, "is empty")
	case len(s) > limit:
		return fieldErr(field, "is %d bytes, limit %d", len(s), limit)
	case !utf8.ValidString(s):
		return fieldErr(field, "is not valid UTF-8")
	case strings.ContainsRune(s, 0):
		return fieldErr(field, "contains a NUL byte (binary content?)")
	}
	return nil
}

func validateMeta(schema, want, corpus string) error {
	if schema != want {
		if schema == "" {
			return fieldErr("schema", "is required (want %q)", want)
		}
		return fieldErr("schema", "unknown schema %q (this consumer reads %q)", schema, want)
	}
	return ValidateCorpus(corpus)
}

// Hash is the content hash used in ids: hex SHA-256.
func Hash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ObjectRef points at a payload kept in a JetStream object store bucket because it is
// larger than a message may be.
type ObjectRef struct {
	Bucket string `json:"bucket"`
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	Digest string `json:"digest,omitempty"`
}

// Document is published by teams (with the CLI or any NATS client) to
// graphrag.documents.<corpus>. It carries its text inline or, when larger than the
// server's message limit, a reference to an object holding it.
type Document struct {
	Schema string `json:"schema"`
	Corpus string `json:"corpus"`
	// ID is the document's stable id, chosen by the publisher (a path, a URL slug, a
	// database key). Republishing the same id replaces the document's previous version.
	ID          string `json:"id"`
	Title       string `json:"title,omitempty"`
	Source      string `json:"source,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Text        string `json:"text,omitempty"`
	// Object holds the text instead of Text for large documents.
	Object *ObjectRef `json:"object,omitempty"`
	// ContentHash is the hex SHA-256 of the text; filled by the publisher or on decode.
	ContentHash string            `json:"content_hash,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

// Content types a document may declare.
const (
	ContentTypeText     = "text/plain"
	ContentTypeMarkdown = "text/markdown"
)

// SchemaName implements Event.
func (*Document) SchemaName() string { return SchemaDocument }

// Validate implements Event.
func (d *Document) Validate() error {
	if err := validateMeta(d.Schema, SchemaDocument, d.Corpus); err != nil {
		return err
	}
	if err := validateID("id", d.ID); err != nil {
		return err
	}
	if err := validateText("title", d.Title, MaxTitleBytes, false); err != nil {
		return err
	}
	switch d.ContentType {
	case "", ContentTypeText, ContentTypeMarkdown:
	default:
		return fieldErr("content_type", "%q is not one of %q, %q", d.ContentType, ContentTypeText, ContentTypeMarkdown)
	}
	switch {
	case d.Object != nil && d.Text != "":
		return fieldErr("text", "must be empty when object is set")
	case d.Object != nil:
		if d.Object.Bucket == "" || d.Object.Name == "" {
			return fieldErr("object", "needs bucket and name")
		}
		if d.Object.Size <= 0 || d.Object.Size > MaxDocumentBytes {
			return fieldErr("object.size", "%d is outside 1..%d", d.Object.Size, MaxDocumentBytes)
		}
	default:
		if err := validateText("text", d.Text, MaxDocumentBytes, true); err != nil {
			return err
		}
		if d.ContentHash != "" && d.ContentHash != Hash(d.Text) {
			return fieldErr("content_hash", "does not match the text")
		}
	}
	for k, v := range d.Metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fieldErr("metadata", "key %q: not valid UTF-8", k)
		}
	}
	return nil
}

// MsgID is the de-duplication id of the document: the same content of the same document
// published twice is stored once.
func (d *Document) MsgID() string {
	h := d.ContentHash
	if h == "" && d.Object != nil {
		h = d.Object.Digest
	}
	if h == "" {
		h = Hash(d.Text)
	}
	return "doc:" + d.Corpus + ":" + d.ID + ":" + h[:min(16, len(h))]
}

// Chunk is one piece of a document, on graphrag.chunks.<corpus>. Extractor replicas
// share these through one durable consumer.
type Chunk struct {
	Schema        string `json:"schema"`
	Corpus        string `json:"corpus"`
	ID            string `json:"id"` // <document id>:<position>:<content hash prefix>
	DocumentID    string `json:"document_id"`
	DocumentTitle string `json:"document_title,omitempty"`
	// Subject names the entity the document is about (offlinextract.Subject): its
	// title when the title names one, else the subject its text opens with; "" when
	// neither says.
	Subject string `json:"subject,omitempty"`
	// SubjectAliases are other names the document gives its subject.
	SubjectAliases []string `json:"subject_aliases,omitempty"`
	Position       int      `json:"position"`
	Total          int      `json:"total"` // chunks in the document
	Section        string   `json:"section,omitempty"`
	Text           string   `json:"text"`
	Tokens         int      `json:"tokens"`
	// Skip is set when the chunk is not worth extracting (low information); it says why.
	Skip string `json:"skip,omitempty"`
	// DocumentVersion names the version of the document the chunk belongs to (the
	// chunker's token, also the suffix of ID). A stage that finds another version
	// current drops the chunk. Empty in events written before versions existed.
	DocumentVersion string `json:"document_version,omitempty"`
}

// SchemaName implements Event.
func (*Chunk) SchemaName() string { return SchemaChunk }

// Validate implements Event.
func (c *Chunk) Validate() error {
	if err := validateMeta(c.Schema, SchemaChunk, c.Corpus); err != nil {
		return err
	}
	if err := validateID("id", c.ID); err != nil {
		return err
	}
	if err := validateID("document_id", c.DocumentID); err != nil {
		return err
	}
	if c.Position < 0 || c.Total < 1 || c.Position >= c.Total {
		return fieldErr("position", "%d is outside 0..total-1 (total %d)", c.Position, c.Total)
	}
	if err := validateText("text", c.Text, MaxDocumentBytes, true); err != nil {
		return err
	}
	if err := validateText("subject", c.Subject, MaxTitleBytes, false); err != nil {
		return err
	}
	if len(c.SubjectAliases) > MaxSubjectAliases {
		return fieldErr("subject_aliases", "has %d names, limit %d", len(c.SubjectAliases), MaxSubjectAliases)
	}
	for i, a := range c.SubjectAliases {
		if err := validateText("subject_aliases["+strconv.Itoa(i)+"]", a, MaxTitleBytes, true); err != nil {
			return err
		}
	}
	if c.DocumentVersion != "" {
		if err := validateID("document_version", c.DocumentVersion); err != nil {
			return err
		}
	}
	return validateText("document_title", c.DocumentTitle, MaxTitleBytes, false)
}

// MsgID de-duplicates republished chunks.
func (c *Chunk) MsgID() string { return "chunk:" + c.Corpus + ":" + c.ID }

// ExtractedEntity is an entity as the extractor found it in one chunk (not normalized).
type ExtractedEntity struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
}

// ExtractedRelationship links two entities of the same chunk by their names.
type ExtractedRelationship struct {
	Source      string  `json:"source"`
	Target      string  `json:"target"`
	Type        string  `json:"type"`
	Description string  `json:"description,omitempty"`
	Strength    float64 `json:"strength"` // in (0, 1]
}

// Extraction is what the extractor found in one chunk, on graphrag.extractions.<corpus>.
// There is exactly one per chunk, also for a skipped chunk (Skipped says why), so every
// chunk's journey through the pipeline can be accounted for.
type Extraction struct {
	Schema        string                  `json:"schema"`
	Corpus        string                  `json:"corpus"`
	ChunkID       string                  `json:"chunk_id"`
	DocumentID    string                  `json:"document_id"`
	Method        string                  `json:"method"` // "offline/v1", "llm/<model>"
	Entities      []ExtractedEntity       `json:"entities"`
	Relationships []ExtractedRelationship `json:"relationships"`
	Skipped       string                  `json:"skipped,omitempty"`
	// DocumentVersion is the chunk's DocumentVersion: the grapher merges the
	// extraction only while that version is the document's current one.
	DocumentVersion string `json:"document_version,omitempty"`
	// SettingsVersion is the version of the corpus's extraction settings the model
	// was prompted with (0: none, or extracted offline, which ignores them).
	SettingsVersion int `json:"settings_version,omitempty"`
}

// MethodRemoved is the Method of an extraction that retires a chunk: the grapher
// removes the chunk's contribution from the graph.
const MethodRemoved = "removed"

// SchemaName implements Event.
func (*Extraction) SchemaName() string { return SchemaExtraction }

// Validate implements Event.
func (x *Extraction) Validate() error {
	if err := validateMeta(x.Schema, SchemaExtraction, x.Corpus); err != nil {
		return err
	}
	if err := validateID("chunk_id", x.ChunkID); err != nil {
		return err
	}
	if err := validateID("document_id", x.DocumentID); err != nil {
		return err
	}
	if x.Method == "" {
		return fieldErr("method", "is required")
	}
	if x.DocumentVersion != "" {
		if err := validateID("document_version", x.DocumentVersion); err != nil {
			return err
		}
	}
	if x.SettingsVersion < 0 {
		return fieldErr("settings_version", "%d is negative", x.SettingsVersion)
	}
	if len(x.Entities) > maxEntities {
		return fieldErr("entities", "has %d items, limit %d", len(x.Entities), maxEntities)
	}
	if len(x.Relationships) > maxRelations {
		return fieldErr("relationships", "has %d items, limit %d", len(x.Relationships), maxRelations)
	}
	for i, e := range x.Entities {
		if err := validateText("entities.name", e.Name, maxNameBytes, true); err != nil {
			return fieldErr("entities["+strconv.Itoa(i)+"].name", "%v", err)
		}
		if err := validateText("entities.description", e.Description, maxDescBytes, false); err != nil {
			return fieldErr("entities["+strconv.Itoa(i)+"].description", "%v", err)
		}
	}
	for i, r := range x.Relationships {
		if strings.TrimSpace(r.Source) == "" || strings.TrimSpace(r.Target) == "" {
			return fieldErr("relationships["+strconv.Itoa(i)+"]", "source and target are required")
		}
		if r.Strength <= 0 || r.Strength > 1 {
			return fieldErr("relationships["+strconv.Itoa(i)+"].strength", "%v is outside (0, 1]", r.Strength)
		}
		if err := validateText("relationships.description", r.Description, maxDescBytes, false); err != nil {
			return fieldErr("relationships["+strconv.Itoa(i)+"].description", "%v", err)
		}
	}
	return nil
}

// MsgID de-duplicates: one extraction per chunk and method.
func (x *Extraction) MsgID() string {
	id := "extraction:" + x.Corpus + ":" + x.ChunkID + ":" + x.Method
	if x.SettingsVersion > 0 {
		// A re-extraction under new settings is a new message, not a duplicate.
		id += ":s" + strconv.Itoa(x.SettingsVersion)
	}
	return id
}

// Community announces a community whose membership is new or changed after a community
// detection run, on graphrag.communities.<corpus>. Members are read from the graph store
// by ID: a community replaced by a later run is gone there, and its event is stale.
type Community struct {
	Schema      string `json:"schema"`
	Corpus      string `json:"corpus"`
	ID          string `json:"id"` // content-derived: level + sorted member keys
	Level       int    `json:"level"`
	ParentID    string `json:"parent_id,omitempty"`
	MemberCount int    `json:"member_count"`
	// Run identifies the detection run: unique per run, also when two runs see the
	// same graph (a run after a restart, a community that comes back).
	Run string `json:"run"`
}

// SchemaName implements Event.
func (*Community) SchemaName() string { return SchemaCommunity }

// Validate implements Event.
func (c *Community) Validate() error {
	if err := validateMeta(c.Schema, SchemaCommunity, c.Corpus); err != nil {
		return err
	}
	if err := validateID("id", c.ID); err != nil {
		return err
	}
	if c.Level < 0 || c.Level > 16 {
		return fieldErr("level", "%d is outside 0..16", c.Level)
	}
	if c.MemberCount < 1 {
		return fieldErr("member_count", "must be positive")
	}
	return nil
}

// MsgID de-duplicates the publishes of one run. It carries the run: a community id is
// content-derived, so a community that comes back in a later run (after its earlier
// event was read while it was replaced) would otherwise be dropped as a duplicate and
// never get a report.
func (c *Community) MsgID() string { return "community:" + c.Corpus + ":" + c.ID + ":" + c.Run }

// Summary announces that a community report and its embedding were written, on
// graphrag.summaries.<corpus>.
type Summary struct {
	Schema      string  `json:"schema"`
	Corpus      string  `json:"corpus"`
	CommunityID string  `json:"community_id"`
	Level       int     `json:"level"`
	Title       string  `json:"title"`
	Rating      float64 `json:"rating"`
	Method      string  `json:"method"`
	// Run is the community detection run the report was written for.
	Run string `json:"run,omitempty"`
}

// SchemaName implements Event.
func (*Summary) SchemaName() string { return SchemaSummary }

// Validate implements Event.
func (s *Summary) Validate() error {
	if err := validateMeta(s.Schema, SchemaSummary, s.Corpus); err != nil {
		return err
	}
	if err := validateID("community_id", s.CommunityID); err != nil {
		return err
	}
	return validateText("title", s.Title, MaxTitleBytes, false)
}

// MsgID de-duplicates the announcements of one report. It carries the run: a community
// whose report was deleted (it was replaced) and that comes back in a later run gets a
// new report, and that report's event must not be dropped as a duplicate.
func (s *Summary) MsgID() string { return "summary:" + s.Corpus + ":" + s.CommunityID + ":" + s.Run }
