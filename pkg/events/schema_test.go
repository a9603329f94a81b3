package events

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestDocumentJSONSchemaAgrees checks that the published JSON Schema and the Go validator
// accept and refuse the same documents, so outside publishers can trust the schema file.
func TestDocumentJSONSchemaAgrees(t *testing.T) {
	raw, err := os.ReadFile("../../docs/schema/document.v1.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("document.v1.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("document.v1.json")
	if err != nil {
		t.Fatal(err)
	}
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
		{"no text", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a"}`},
		{"blank text", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"   "}`},
		{"both", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"t","object":{"bucket":"b","name":"n","size":5}}`},
		{"bad type", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"t","content_type":"x"}`},
		{"object too big", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","object":{"bucket":"b","name":"n","size":67108865}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inst any
			if err := json.Unmarshal([]byte(tc.json), &inst); err != nil {
				t.Fatal(err)
			}
			schemaOK := sch.Validate(inst) == nil
			goOK := Decode([]byte(tc.json), &Document{}) == nil
			if schemaOK != goOK {
				t.Fatalf("JSON Schema says valid=%v, Go validator says valid=%v", schemaOK, goOK)
			}
		})
	}
}
