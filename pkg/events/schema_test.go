package events

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles one of the JSON Schemas published in docs/schema.
func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile("../../docs/schema/" + name)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(name)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// agree checks that the schema and decode accept and refuse the same instance.
func agree(t *testing.T, sch *jsonschema.Schema, instance string, decode func([]byte) error) {
	t.Helper()
	var inst any
	if err := json.Unmarshal([]byte(instance), &inst); err != nil {
		t.Fatal(err)
	}
	schemaOK := sch.Validate(inst) == nil
	goOK := decode([]byte(instance)) == nil
	if schemaOK != goOK {
		t.Fatalf("JSON Schema says valid=%v, Go validator says valid=%v", schemaOK, goOK)
	}
}

// TestDocumentJSONSchemaAgrees checks that the published JSON Schema and the Go validator
// accept and refuse the same documents, so outside publishers can trust the schema file.
func TestDocumentJSONSchemaAgrees(t *testing.T) {
	sch := compileSchema(t, "document.v1.json")
	for _, tc := range []struct {
		name string
		json string
	}{
		{"minimal", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a.md","text":"Hello"}`},
		{"full", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a/b.md","title":"T","source":"file:///a","content_type":"text/markdown","text":"# x","metadata":{"k":"v"}}`},
		{"object", `{"schema":"graphrag.document.v1","corpus":"demo","id":"big","object":{"bucket":"b","name":"n","size":5}}`},
		{"no schema", `{"corpus":"demo","id":"a","text":"t"}`},
		{"wrong version", `{"schema":"graphrag.document.v2","corpus":"demo","id":"a","text":"t"}`},
		{"bad corpus", `{"schema":"graphrag.document.v1","corpus":"Demo","id":"a","text":"t"}`},
		{"bad id", `{"schema":"graphrag.document.v1","corpus":"demo","id":" a","text":"t"}`},
		{"path id", `{"schema":"graphrag.document.v1","corpus":"demo","id":"My Notes/Réunion 2024 (final).md","text":"t"}`},
		{"script id", `{"schema":"graphrag.document.v1","corpus":"demo","id":"会议/记录.md","text":"t"}`},
		{"one-letter id", `{"schema":"graphrag.document.v1","corpus":"demo","id":"é","text":"t"}`},
		{"id ends in a space", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a ","text":"t"}`},
		{"id with a tab", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a\tb","text":"t"}`},
		{"id with a C1 control", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a\u0085b","text":"t"}`},
		{"id like a path up", `{"schema":"graphrag.document.v1","corpus":"demo","id":"../a","text":"t"}`},
		{"id like a flag", `{"schema":"graphrag.document.v1","corpus":"demo","id":"-a","text":"t"}`},
		{"no text", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a"}`},
		{"blank text", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"   "}`},
		{"both", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"t","object":{"bucket":"b","name":"n","size":5}}`},
		{"bad type", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"t","content_type":"x"}`},
		{"object too big", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","object":{"bucket":"b","name":"n","size":67108865}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agree(t, sch, tc.json, func(b []byte) error { return Decode(b, &Document{}) })
		})
	}
}

// TestLifecycleJSONSchemasAgree does the same for the deletion and corpus-drop events.
func TestLifecycleJSONSchemasAgree(t *testing.T) {
	del := compileSchema(t, "document.deleted.v1.json")
	for _, tc := range []struct{ name, json string }{
		{"minimal", `{"schema":"graphrag.document.deleted.v1","corpus":"demo","id":"a.md"}`},
		{"full", `{"schema":"graphrag.document.deleted.v1","corpus":"demo","id":"a/b.md","event_id":"01J9","reason":"GDPR request 42"}`},
		{"no schema", `{"corpus":"demo","id":"a"}`},
		{"document schema", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a"}`},
		{"wrong version", `{"schema":"graphrag.document.deleted.v2","corpus":"demo","id":"a"}`},
		{"bad corpus", `{"schema":"graphrag.document.deleted.v1","corpus":"Demo","id":"a"}`},
		{"no id", `{"schema":"graphrag.document.deleted.v1","corpus":"demo"}`},
		{"path id", `{"schema":"graphrag.document.deleted.v1","corpus":"demo","id":"a b/Rèunion.md"}`},
		{"bad id", `{"schema":"graphrag.document.deleted.v1","corpus":"demo","id":"a b "}`},
		{"long id", `{"schema":"graphrag.document.deleted.v1","corpus":"demo","id":"` + strings.Repeat("a", 201) + `"}`},
		{"bad event id", `{"schema":"graphrag.document.deleted.v1","corpus":"demo","id":"a","event_id":"-x"}`},
		{"long reason", `{"schema":"graphrag.document.deleted.v1","corpus":"demo","id":"a","reason":"` + strings.Repeat("r", 1025) + `"}`},
		{"text ignored", `{"schema":"graphrag.document.deleted.v1","corpus":"demo","id":"a","text":"x"}`},
	} {
		t.Run("deleted/"+tc.name, func(t *testing.T) {
			agree(t, del, tc.json, func(b []byte) error { return Decode(b, &DocumentDeleted{}) })
		})
	}
	drop := compileSchema(t, "corpus.dropped.v1.json")
	for _, tc := range []struct{ name, json string }{
		{"minimal", `{"schema":"graphrag.corpus.dropped.v1","corpus":"demo"}`},
		{"full", `{"schema":"graphrag.corpus.dropped.v1","corpus":"demo","event_id":"e1","reason":"end of project"}`},
		{"no corpus", `{"schema":"graphrag.corpus.dropped.v1"}`},
		{"bad corpus", `{"schema":"graphrag.corpus.dropped.v1","corpus":"de mo"}`},
		{"wrong schema", `{"schema":"graphrag.document.deleted.v1","corpus":"demo"}`},
		{"empty event id", `{"schema":"graphrag.corpus.dropped.v1","corpus":"demo","event_id":""}`},
		{"bad event id", `{"schema":"graphrag.corpus.dropped.v1","corpus":"demo","event_id":"a b"}`},
	} {
		t.Run("dropped/"+tc.name, func(t *testing.T) {
			agree(t, drop, tc.json, func(b []byte) error { return Decode(b, &CorpusDropped{}) })
		})
	}
}
