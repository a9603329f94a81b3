package events

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateCorpus(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"demo", true}, {"hotpot_qa2", true}, {"a", true},
		{"", false}, {"Demo", false}, {"2demo", false}, {"de.mo", false}, {"de mo", false},
		{"de*", false}, {"de>", false}, {"dé", false}, {"de-mo", false}, {strings.Repeat("a", 64), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateCorpus(tc.name)
			if (err == nil) != tc.ok {
				t.Fatalf("ValidateCorpus(%q) = %v, want ok=%v", tc.name, err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not match ErrInvalid", err)
			}
		})
	}
}

func TestSubjects(t *testing.T) {
	if got := Subject(KindChunks, "demo"); got != "graphrag.chunks.demo" {
		t.Fatalf("Subject = %q", got)
	}
	c, err := CorpusFromSubject("graphrag.documents.demo")
	if err != nil || c != "demo" {
		t.Fatalf("CorpusFromSubject = %q, %v", c, err)
	}
	for _, bad := range []string{"other.documents.demo", "graphrag.documents", "graphrag.documents.Bad"} {
		if _, err := CorpusFromSubject(bad); err == nil {
			t.Errorf("CorpusFromSubject(%q) accepted", bad)
		}
	}
}

func TestDecodeDocument(t *testing.T) {
	for _, tc := range []struct {
		name      string
		json      string
		wantField string // empty = valid
	}{
		{"minimal", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a.md","text":"Hello world."}`, ""},
		{"markdown", `{"schema":"graphrag.document.v1","corpus":"demo","id":"x/y.md","title":"T","content_type":"text/markdown","text":"# H\nbody"}`, ""},
		{"object", `{"schema":"graphrag.document.v1","corpus":"demo","id":"big","object":{"bucket":"b","name":"n","size":10}}`, ""},
		{"unknown fields ignored", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"t","extra":1}`, ""},
		{"malformed", `{"schema":`, "$"},
		{"trailing", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"t"} {}`, "$"},
		{"no schema", `{"corpus":"demo","id":"a","text":"t"}`, "schema"},
		{"unknown version", `{"schema":"graphrag.document.v9","corpus":"demo","id":"a","text":"t"}`, "schema"},
		{"bad corpus", `{"schema":"graphrag.document.v1","corpus":"De mo","id":"a","text":"t"}`, "corpus"},
		{"no id", `{"schema":"graphrag.document.v1","corpus":"demo","text":"t"}`, "id"},
		{"path id", `{"schema":"graphrag.document.v1","corpus":"demo","id":"My Notes/Réunion 2024 (final).md","text":"t"}`, ""},
		{"script id", `{"schema":"graphrag.document.v1","corpus":"demo","id":"会议/记录.md","text":"t"}`, ""},
		{"bad id", `{"schema":"graphrag.document.v1","corpus":"demo","id":" a","text":"t"}`, "id"},
		{"id ends in a space", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a ","text":"t"}`, "id"},
		{"id with a line break", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a\nb","text":"t"}`, "id"},
		{"id like a flag", `{"schema":"graphrag.document.v1","corpus":"demo","id":"-a","text":"t"}`, "id"},
		{"empty text", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"  \n"}`, "text"},
		{"nul text", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"a\u0000b"}`, "text"},
		{"text and object", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"t","object":{"bucket":"b","name":"n","size":1}}`, "text"},
		{"bad hash", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"t","content_hash":"00"}`, "content_hash"},
		{"bad content type", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"t","content_type":"application/pdf"}`, "content_type"},
		{"invalid utf8", "{\"schema\":\"graphrag.document.v1\",\"corpus\":\"demo\",\"id\":\"a\",\"text\":\"\xff\xfe\"}", "$"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d Document
			err := Decode([]byte(tc.json), &d)
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if d.Text != "" && d.ContentHash != Hash(d.Text) {
					t.Fatalf("content hash not filled")
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.wantField {
				t.Fatalf("Decode error = %v, want a FieldError on %q", err, tc.wantField)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not match ErrInvalid")
			}
		})
	}
}

func TestDecodeOversize(t *testing.T) {
	big := `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"` + strings.Repeat("x", MaxEventBytes) + `"}`
	var d Document
	if err := Decode([]byte(big), &d); !errors.Is(err, ErrInvalid) {
		t.Fatalf("oversize accepted: %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	evs := []Event{
		&Document{Schema: SchemaDocument, Corpus: "demo", ID: "d1", Title: "T", Text: "Some text."},
		&Chunk{Schema: SchemaChunk, Corpus: "demo", ID: "d1:0:abc", DocumentID: "d1", Total: 1, Text: "Some text.", Tokens: 3},
		&Extraction{Schema: SchemaExtraction, Corpus: "demo", ChunkID: "d1:0:abc", DocumentID: "d1", Method: "offline/v1",
			Entities:      []ExtractedEntity{{Name: "Some", Type: "CONCEPT"}},
			Relationships: []ExtractedRelationship{{Source: "a", Target: "b", Type: "RELATED_TO", Strength: 0.5}}},
		&Community{Schema: SchemaCommunity, Corpus: "demo", ID: "c0-abc", Level: 0, MemberCount: 3, Run: "r"},
		&Summary{Schema: SchemaSummary, Corpus: "demo", CommunityID: "c0-abc", Title: "x", Method: "extractive"},
	}
	for _, e := range evs {
		t.Run(e.SchemaName(), func(t *testing.T) {
			b, err := Encode(e)
			if err != nil {
				t.Fatal(err)
			}
			fresh := map[string]Event{SchemaDocument: &Document{}, SchemaChunk: &Chunk{}, SchemaExtraction: &Extraction{},
				SchemaCommunity: &Community{}, SchemaSummary: &Summary{}}[e.SchemaName()]
			if err := Decode(b, fresh); err != nil {
				t.Fatalf("decode of encoded event: %v", err)
			}
			b2, _ := Encode(fresh)
			if string(b) != string(b2) && e.SchemaName() != SchemaDocument {
				t.Fatalf("round trip changed the event:\n%s\n%s", b, b2)
			}
		})
	}
}

func TestEncodeRejectsInvalid(t *testing.T) {
	_, err := Encode(&Chunk{Schema: SchemaChunk, Corpus: "demo", ID: "x", DocumentID: "d", Position: 2, Total: 1, Text: "t"})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "position" {
		t.Fatalf("Encode error = %v, want position field error", err)
	}
	_, err = Encode(&Extraction{Schema: SchemaExtraction, Corpus: "demo", ChunkID: "c", DocumentID: "d", Method: "m",
		Relationships: []ExtractedRelationship{{Source: "a", Target: "b", Strength: 2}}})
	if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "relationships[0]") {
		t.Fatalf("Encode error = %v, want relationships[0] field error", err)
	}
	_, err = Encode(&Extraction{Schema: SchemaExtraction, Corpus: "demo", ChunkID: "c", DocumentID: "d", Method: "m", SettingsVersion: -1})
	if !errors.As(err, &fe) || fe.Field != "settings_version" {
		t.Fatalf("Encode error = %v, want settings_version field error", err)
	}
}

// An extraction under extraction settings is a message of its own: a re-extraction
// under a new version is not a duplicate of the earlier one, and ids without settings
// are those written before settings existed.
func TestExtractionMsgIDCarriesSettingsVersion(t *testing.T) {
	x := Extraction{Corpus: "demo", ChunkID: "d:0:abc@5", Method: "llm/m"}
	if id := x.MsgID(); id != "extraction:demo:d:0:abc@5:llm/m" {
		t.Errorf("without settings: %s", id)
	}
	x.SettingsVersion = 2
	if id := x.MsgID(); id != "extraction:demo:d:0:abc@5:llm/m:s2" {
		t.Errorf("under settings 2: %s", id)
	}
}

func TestMsgIDsAreContentDerived(t *testing.T) {
	a := &Document{Schema: SchemaDocument, Corpus: "demo", ID: "d", Text: "one"}
	b := &Document{Schema: SchemaDocument, Corpus: "demo", ID: "d", Text: "one"}
	c := &Document{Schema: SchemaDocument, Corpus: "demo", ID: "d", Text: "two"}
	if a.MsgID() != b.MsgID() || a.MsgID() == c.MsgID() {
		t.Fatalf("document msg ids not content derived: %s %s %s", a.MsgID(), b.MsgID(), c.MsgID())
	}
}

func TestDecodeDocumentEvent(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       string // schema name of the decoded event; "" = invalid
	}{
		{"document", `{"schema":"graphrag.document.v1","corpus":"demo","id":"a","text":"t"}`, SchemaDocument},
		{"deletion", `{"schema":"graphrag.document.deleted.v1","corpus":"demo","id":"a"}`, SchemaDocumentDeleted},
		{"drop", `{"schema":"graphrag.corpus.dropped.v1","corpus":"demo"}`, SchemaCorpusDropped},
		{"deletion without id", `{"schema":"graphrag.document.deleted.v1","corpus":"demo"}`, ""},
		{"unknown schema", `{"schema":"graphrag.document.purged.v1","corpus":"demo","id":"a"}`, ""},
		{"not JSON", `{"schema":`, ""},
		{"not UTF-8", "{\"schema\":\"graphrag.document.deleted.v1\",\"corpus\":\"demo\",\"id\":\"\xff\"}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := DecodeDocumentEvent([]byte(tc.json))
			switch {
			case tc.want == "" && !errors.Is(err, ErrInvalid):
				t.Fatalf("err = %v, want ErrInvalid", err)
			case tc.want != "" && (err != nil || e.SchemaName() != tc.want):
				t.Fatalf("decoded %v, %v; want %s", e, err, tc.want)
			}
		})
	}
	d := &DocumentDeleted{Schema: SchemaDocumentDeleted, Corpus: "demo", ID: "a"}
	if d.MsgID() != "" {
		t.Error("a deletion without an event id has a message id")
	}
	d.EventID = "e1"
	if d.MsgID() != "deleted:demo:a:e1" {
		t.Errorf("MsgID = %q", d.MsgID())
	}
}
