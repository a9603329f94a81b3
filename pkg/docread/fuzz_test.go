package docread

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/events"
)

// readerExts are the file types the document readers handle; the fuzzer picks one.
var readerExts = []string{".md", ".txt", ".html", ".pdf"}

// FuzzReadDocument feeds the document readers (Markdown, text, HTML, PDF) arbitrary
// bytes: they never panic, and what they accept is a
// document the pipeline accepts (valid UTF-8 text and title within the event's limits).
// Seeds: the sample corpus, an HTML page and a small PDF.
func FuzzReadDocument(f *testing.F) {
	files, _ := filepath.Glob("../../examples/corpus/*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(uint8(0), b)
			f.Add(uint8(1), b)
		}
	}
	f.Add(uint8(2), []byte("<html><head><title>Gullhead</title><style>p{}</style></head><body><h2>Keepers</h2><p>Ada Quillane kept the light.</p><nav>x</nav></body></html>"))
	f.Add(uint8(2), []byte("<title>\xff\xfe</title><h7>x</h7><script>unclosed"))
	f.Add(uint8(3), minimalPDF("Gullhead Lighthouse keeper"))
	f.Add(uint8(3), []byte("%PDF-1.7\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R/Size 99999999>>\n%%EOF"))
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		d, err := Read("doc"+readerExts[int(kind)%len(readerExts)], data)
		if err != nil {
			return // refused: fine, as long as it did not panic
		}
		title, text := d.Title, d.Text
		doc := events.Document{Schema: events.SchemaDocument, Corpus: "fuzz", ID: ID("doc"), Title: title, Text: text, ContentType: d.ContentType}
		if verr := doc.Validate(); verr != nil {
			t.Fatalf("Read accepted a document the pipeline refuses: %v (title %q)", verr, title)
		}
		if !utf8.ValidString(title) || strings.TrimSpace(text) == "" {
			t.Fatalf("title %q, text %q", title, text)
		}
	})
}

// FuzzID feeds ID arbitrary paths: the id it derives is one the pipeline accepts, and
// deriving an id from it changes nothing (so a delete by id or by path agree).
func FuzzID(f *testing.F) {
	for _, s := range []string{"a.md", "My Notes/Réunion 2024 (final).md", "Re\u0301union.md", "../-x", " \t", "a\xff\x85b", "会议/记录.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		id := ID(rel)
		d := events.Document{Schema: events.SchemaDocument, Corpus: "fuzz", ID: id, Text: "x"}
		if err := d.Validate(); err != nil {
			t.Fatalf("ID(%q) = %q, which the pipeline refuses: %v", rel, id, err)
		}
		if again := ID(id); again != id {
			t.Fatalf("ID(ID(%q)) = %q, want %q", rel, again, id)
		}
	})
}
