package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// MaxEventBytes bounds what Decode reads; larger documents go through the object store.
const MaxEventBytes = 8 << 20

// Encode validates e and returns its JSON.
func Encode(e Event) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", e.SchemaName(), err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", e.SchemaName(), err)
	}
	return b, nil
}

// Decode parses data into e and validates it. Every failure matches ErrInvalid, so the
// caller can dead-letter the message as poison.
func Decode(data []byte, e Event) error {
	if len(data) > MaxEventBytes {
		return fieldErr("$", "event is %d bytes, limit %d", len(data), MaxEventBytes)
	}
	// encoding/json silently replaces invalid UTF-8 with U+FFFD; refuse it instead.
	if !utf8.Valid(data) {
		return fieldErr("$", "event is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(e); err != nil {
		return fieldErr("$", "malformed JSON for %s: %v", e.SchemaName(), err)
	}
	if dec.More() {
		return fieldErr("$", "trailing data after the JSON object")
	}
	if d, ok := e.(*Document); ok && d.ContentHash == "" && d.Text != "" {
		d.ContentHash = Hash(d.Text)
	}
	return e.Validate()
}
