package docread

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/events"
)

func TestReadDocument(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, file, body string
		title, ctype     string
		wantErr          error
		contains         string
	}{
		{"markdown title", "a.md", "# The Title\n\nBody text.", "The Title", "text/markdown", nil, "Body text."},
		{"text first line", "02_b.txt", "The Wreck\n\nIt sank in 1887.", "The Wreck", "text/plain", nil, "1887"},
		{"text sentence first", "03_sellen_valley.txt", "It sank in 1887.\nMore.", "sellen valley", "text/plain", nil, "1887"},
		{"html", "c.html", "<html><head><title>Page</title><script>x()</script></head><body><h1>Head</h1><p>Para one.</p><nav>Home | About</nav></body></html>", "Page", "text/markdown", nil, "# Head"},
		{"unsupported", "d.docx", "x", "", "", ErrUnsupported, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadFile(write(tc.file, tc.body))
			title, text, ctype := d.Title, d.Text, d.ContentType
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if title != tc.title || ctype != tc.ctype {
				t.Fatalf("title %q type %q, want %q %q", title, ctype, tc.title, tc.ctype)
			}
			if !strings.Contains(text, tc.contains) {
				t.Fatalf("text %q lacks %q", text, tc.contains)
			}
		})
	}
	for _, bad := range []struct{ name, body string }{{"empty.txt", "  \n "}, {"bin.txt", "a\x00b"}, {"latin1.txt", "caf\xe9"}} {
		if _, err := ReadFile(write(bad.name, bad.body)); err == nil {
			t.Errorf("%s accepted", bad.name)
		}
	}
}

func TestID(t *testing.T) {
	long := strings.Repeat("é", 150) + ".md" // 303 bytes
	for _, tc := range []struct{ in, want string }{
		{"a.md", "a.md"},
		{"dir/b c.md", "dir/b c.md"},
		{"../x.md", "x.md"},
		{"été/ü.md", "été/ü.md"},
		{"My Notes/Réunion 2024 (final).md", "My Notes/Réunion 2024 (final).md"},
		{"会议/记录 第1次.md", "会议/记录 第1次.md"},
		{"Re\u0301union.md", "Réunion.md"}, // decomposed, as macOS names it
		{"_index.md", "_index.md"},
		{"-rf.md", "rf.md"},
		{" a.md ", "a.md"},
		{"a\tb\x01.md", "a_b_.md"},
		{"caf\xe9.md", "caf_.md"},
		{"...", "doc-" + events.Hash("...")[:16]},
		{long, strings.Repeat("é", 91) + "-" + events.Hash(long)[:16]},
	} {
		got := ID(tc.in)
		if got != tc.want {
			t.Errorf("ID(%q) = %q, want %q", tc.in, got, tc.want)
		}
		d := events.Document{Schema: events.SchemaDocument, Corpus: "c", ID: got, Text: "x"}
		if err := d.Validate(); err != nil {
			t.Errorf("ID(%q) = %q, which the pipeline refuses: %v", tc.in, got, err)
		}
		if again := ID(got); again != got {
			t.Errorf("ID(ID(%q)) = %q, want %q", tc.in, again, got)
		}
	}
}

// minimalPDF builds a one-page PDF whose text layer is text (ASCII, no parentheses),
// with a correct cross-reference table.
func minimalPDF(text string) []byte {
	content := "BT /F1 12 Tf 72 720 Td (" + text + ") Tj ET"
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// TestRead reads content given as bytes, as the upload route does: the same result
// as ReadFile, a PDF's text layer, and clear errors.
func TestRead(t *testing.T) {
	pdfDoc, err := Read("03_lighthouse-report.pdf", minimalPDF("Gullhead Lighthouse was built in 1871"))
	if err != nil {
		t.Fatalf("reading a PDF: %v", err)
	}
	if !strings.Contains(pdfDoc.Text, "Gullhead Lighthouse was built in 1871") || pdfDoc.ContentType != "text/plain" || pdfDoc.Title == "" {
		t.Errorf("PDF read as %+v", pdfDoc)
	}
	if _, err := Read("broken.pdf", []byte("%PDF-1.4 not really")); err == nil || !strings.Contains(err.Error(), "PDF") {
		t.Errorf("a broken PDF: %v, want an error naming the PDF", err)
	}
	html := "<html><head><title>Page</title></head><body><h2>Part</h2><p>Text.</p></body></html>"
	d, err := Read("page.HTML", []byte(html))
	if err != nil || d.Title != "Page" || !strings.Contains(d.Text, "## Part") {
		t.Errorf("HTML read as %+v, %v", d, err)
	}
	if _, err := Read("notes.docx", []byte("x")); !errors.Is(err, ErrUnsupported) {
		t.Errorf("a .docx: %v, want ErrUnsupported", err)
	}
	if !Supported("A.MD") || Supported("a.md.exe") {
		t.Error("Supported judges by the extension, case-insensitively")
	}
}
