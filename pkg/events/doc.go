// Package events is the wire contract between the services: one versioned event type per
// arrow of the pipeline, the NATS subjects they travel on, and the validation every
// consumer runs before it trusts a message.
//
// Every event carries a schema name with its major version ("graphrag.chunk.v1"), the
// corpus, and a content-derived id, so a redelivered or replayed message changes nothing
// downstream. Decoding validates and returns *FieldError values naming the field at fault.
// Unknown fields are ignored (additive changes keep the version); a changed meaning gets a
// new version, and a consumer refuses versions it does not know.
//
// The Document event is the public entry point: any NATS client may publish it to
// graphrag.documents.<corpus>. Its JSON Schema is docs/schema/document.v1.json.
package events
