package events

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Schema names of the lifecycle events that share the document subject with
// graphrag.document.v1.
const (
	SchemaDocumentDeleted = "graphrag.document.deleted.v1"
	SchemaCorpusDropped   = "graphrag.corpus.dropped.v1"
)

// DocumentDeleted asks the pipeline to delete a document, on
// graphrag.documents.<corpus> like the document itself, so that every replica
// sees publications and deletions of an id in the stream's one order: the
// event the stream accepted last wins. Deleting an id that was never published
// (or is already deleted) changes nothing.
type DocumentDeleted struct {
	Schema string `json:"schema"`
	Corpus string `json:"corpus"`
	// ID is the id of the document to delete.
	ID string `json:"id"`
	// EventID identifies this request (a retried publish of it is stored once);
	// optional.
	EventID string `json:"event_id,omitempty"`
	// Reason is free text for the operator (who asked, a ticket); optional.
	Reason string `json:"reason,omitempty"`
}

// SchemaName implements Event.
func (*DocumentDeleted) SchemaName() string { return SchemaDocumentDeleted }

// Validate implements Event.
func (d *DocumentDeleted) Validate() error {
	if err := validateMeta(d.Schema, SchemaDocumentDeleted, d.Corpus); err != nil {
		return err
	}
	if err := validateID("id", d.ID); err != nil {
		return err
	}
	if d.EventID != "" {
		if err := validateEventID("event_id", d.EventID); err != nil {
			return err
		}
	}
	return validateText("reason", d.Reason, MaxTitleBytes, false)
}

// MsgID de-duplicates retries of one request; two requests to delete the same
// document are two events (a document may be published again in between).
func (d *DocumentDeleted) MsgID() string {
	if d.EventID == "" {
		return ""
	}
	return "deleted:" + d.Corpus + ":" + d.ID + ":" + d.EventID
}

// CorpusDropped asks the pipeline to delete every document of a corpus published
// before it (by stream order); documents published after it are indexed as usual.
type CorpusDropped struct {
	Schema  string `json:"schema"`
	Corpus  string `json:"corpus"`
	EventID string `json:"event_id,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// SchemaName implements Event.
func (*CorpusDropped) SchemaName() string { return SchemaCorpusDropped }

// Validate implements Event.
func (c *CorpusDropped) Validate() error {
	if err := validateMeta(c.Schema, SchemaCorpusDropped, c.Corpus); err != nil {
		return err
	}
	if c.EventID != "" {
		if err := validateEventID("event_id", c.EventID); err != nil {
			return err
		}
	}
	return validateText("reason", c.Reason, MaxTitleBytes, false)
}

// MsgID de-duplicates retries of one request.
func (c *CorpusDropped) MsgID() string {
	if c.EventID == "" {
		return ""
	}
	return "dropped:" + c.Corpus + ":" + c.EventID
}

// DecodeDocumentEvent decodes a message of the document subject into the event
// its schema names: *Document, *DocumentDeleted or *CorpusDropped. Like Decode,
// every failure matches ErrInvalid.
func DecodeDocumentEvent(data []byte) (Event, error) {
	if len(data) > MaxEventBytes {
		return nil, fieldErr("$", "event is %d bytes, limit %d", len(data), MaxEventBytes)
	}
	if !utf8.Valid(data) {
		return nil, fieldErr("$", "event is not valid UTF-8")
	}
	var head struct {
		Schema string `json:"schema"`
	}
	// Only the schema is read here; Decode below checks the whole event.
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&head); err != nil {
		return nil, fieldErr("$", "malformed JSON: %v", err)
	}
	var e Event
	switch head.Schema {
	case SchemaDocumentDeleted:
		e = &DocumentDeleted{}
	case SchemaCorpusDropped:
		e = &CorpusDropped{}
	default:
		// Documents, and anything else: Decode names the schema problem.
		e = &Document{}
	}
	if err := Decode(data, e); err != nil {
		return nil, err
	}
	return e, nil
}
