package events

import (
	"bytes"
	"encoding/json"
)

// SchemaCuration is the schema of the event that tells the grapher a corpus's
// curation log changed. It travels on graphrag.extractions.<corpus>, the subject the
// grapher merges the corpus's extractions from, so that it is applied in the same
// order as they are and by the grapher holding the corpus.
const SchemaCuration = "graphrag.curation.v1"

// Curation announces an entry appended to a corpus's curation log (package curation
// keeps the log; the event names the entry, the log is the record).
type Curation struct {
	Schema string `json:"schema"`
	Corpus string `json:"corpus"`
	// OpID is the id of the entry appended.
	OpID string `json:"op_id"`
	// Action is the entry's action ("merge", "undo", ...), for the operator.
	Action string `json:"action"`
}

// SchemaName implements Event.
func (*Curation) SchemaName() string { return SchemaCuration }

// Validate implements Event.
func (c *Curation) Validate() error {
	if err := validateMeta(c.Schema, SchemaCuration, c.Corpus); err != nil {
		return err
	}
	if err := validateEventID("op_id", c.OpID); err != nil {
		return err
	}
	return validateText("action", c.Action, 64, true)
}

// MsgID de-duplicates retries of one publication.
func (c *Curation) MsgID() string { return "curation:" + c.Corpus + ":" + c.OpID }

// SchemaOf reads the schema an event's JSON names ("" when it names none or is not
// JSON), so that a consumer of a subject carrying several event types can pick the
// type to decode into; the decoding validates the whole event.
func SchemaOf(data []byte) string {
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&head); err != nil {
		return ""
	}
	return head.Schema
}
