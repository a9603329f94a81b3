package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/events"
)

// minimalPDF is a one-page PDF whose text layer says "Gullhead Lighthouse keeper".
const minimalPDF = "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n" +
	"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n" +
	"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 144]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>endobj\n" +
	"4 0 obj<</Length 55>>stream\nBT /F1 18 Tf 20 100 Td (Gullhead Lighthouse keeper) Tj ET\nendstream endobj\n" +
	"5 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj\n" +
	"trailer<</Root 1 0 R>>\n%%EOF\n"

// readerExts are the file types the document readers handle; the fuzzer picks one.
var readerExts = []string{".md", ".txt", ".html", ".pdf"}

// FuzzReadDocument feeds the document readers (Markdown, text, HTML, PDF; in
// cmd/graphrag/docread.go) arbitrary bytes: they never panic, and what they accept is a
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
	f.Add(uint8(3), []byte(minimalPDF))
	f.Add(uint8(3), []byte("%PDF-1.7\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R/Size 99999999>>\n%%EOF"))
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		path := filepath.Join(t.TempDir(), "doc"+readerExts[int(kind)%len(readerExts)])
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		title, text, ctype, err := readDocument(path)
		if err != nil {
			return // refused: fine, as long as it did not panic
		}
		doc := events.Document{Schema: events.SchemaDocument, Corpus: "fuzz", ID: documentID("doc"), Title: title, Text: text, ContentType: ctype}
		if verr := doc.Validate(); verr != nil {
			t.Fatalf("readDocument accepted a document the pipeline refuses: %v (title %q)", verr, title)
		}
		if !utf8.ValidString(title) || strings.TrimSpace(text) == "" {
			t.Fatalf("title %q, text %q", title, text)
		}
	})
}
