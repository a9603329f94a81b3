package docread

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
	"golang.org/x/net/html"
	"golang.org/x/text/unicode/norm"

	"github.com/graphrag/graphrag/pkg/events"
)

// ErrUnsupported marks a file type the reader does not read.
var ErrUnsupported = errors.New("unsupported file type")

// MaxBytes bounds what is read of one file: the largest document text an event may
// carry (inline or through the object store).
const MaxBytes = events.MaxDocumentBytes

// Extensions are the file name extensions Read accepts, lower case.
var Extensions = []string{".md", ".markdown", ".txt", ".text", ".html", ".htm", ".pdf"}

// Document is what a file holds, ready for an events.Document.
type Document struct {
	Title       string
	Text        string
	ContentType string // events.ContentTypeMarkdown or events.ContentTypeText
}

// Supported reports whether Read accepts a file of this name (by its extension).
func Supported(name string) bool {
	return slices.Contains(Extensions, strings.ToLower(filepath.Ext(name)))
}

// ReadFile reads the file at path; see Read.
func ReadFile(path string) (Document, error) {
	if !Supported(path) {
		return Document{}, unsupported(path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return Document{}, err
	}
	if st.Size() > MaxBytes {
		return Document{}, fmt.Errorf("file is %d bytes, limit %d", st.Size(), MaxBytes)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return Document{}, err
	}
	return Read(filepath.Base(path), raw)
}

func unsupported(name string) error {
	return fmt.Errorf("%w %q (want %s)", ErrUnsupported, filepath.Ext(name), strings.Join(Extensions, ", "))
}

// Read turns the content of a file named name (its extension says how to read it; its
// base name is the title of last resort) into a document: Markdown and text as they
// are, HTML to text (headings kept as Markdown headings), PDF to its text layer. It
// fails with ErrUnsupported for another extension, and for content that is too large,
// empty, or not UTF-8 text.
func Read(name string, raw []byte) (Document, error) {
	ext := strings.ToLower(filepath.Ext(name))
	if !Supported(name) {
		return Document{}, unsupported(name)
	}
	if len(raw) > MaxBytes {
		return Document{}, fmt.Errorf("file is %d bytes, limit %d", len(raw), MaxBytes)
	}
	var d Document
	var err error
	switch ext {
	case ".pdf":
		d.Text, err = pdfText(raw)
		d.ContentType = events.ContentTypeText
	case ".html", ".htm":
		d.Title, d.Text = htmlText(raw)
		d.ContentType = events.ContentTypeMarkdown
	case ".md", ".markdown":
		d.Text, d.ContentType = string(raw), events.ContentTypeMarkdown
	default:
		d.Text, d.ContentType = string(raw), events.ContentTypeText
	}
	if err != nil {
		return Document{}, err
	}
	if !utf8.ValidString(d.Text) || strings.ContainsRune(d.Text, 0) {
		return Document{}, errors.New("not valid UTF-8 text (binary content?)")
	}
	if strings.TrimSpace(d.Text) == "" {
		return Document{}, errors.New("no text")
	}
	d.Title = title(d, name)
	return d, nil
}

// title is the document's own title if it has one, else one made of the file name.
func title(d Document, name string) string {
	t := d.Title
	if t == "" {
		t = markdownTitle(d.Text)
	}
	if t == "" && d.ContentType == events.ContentTypeText {
		t = firstLineTitle(d.Text)
	}
	if t == "" {
		base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
		base = numberPrefix.ReplaceAllString(base, "")
		t = strings.TrimSpace(strings.NewReplacer("_", " ", "-", " ").Replace(base))
	}
	return cleanTitle(t)
}

// cleanTitle makes a title the event accepts, whatever the file held (an HTML <title> in
// another encoding, a heading of any length): valid UTF-8 on one line, within
// events.MaxTitleBytes, cut at a character.
func cleanTitle(t string) string {
	t = strings.Join(strings.Fields(strings.ToValidUTF8(strings.ReplaceAll(t, "\x00", " "), "")), " ")
	if len(t) <= events.MaxTitleBytes {
		return t
	}
	cut := events.MaxTitleBytes
	for cut > 0 && !utf8.RuneStart(t[cut]) {
		cut--
	}
	return t[:cut]
}

var headingRE = regexp.MustCompile(`(?m)^#\s+(.+?)\s*#*\s*$`)

func markdownTitle(text string) string {
	if m := headingRE.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// numberPrefix is an ordering prefix of a file name ("03_", "12-").
var numberPrefix = regexp.MustCompile(`^\d+[_\-. ]+`)

// firstLineTitle takes a plain-text document's first line as its title when it looks
// like one: short, and not ending like a sentence.
func firstLineTitle(text string) string {
	line, _, _ := strings.Cut(strings.TrimLeft(text, " \t\r\n"), "\n")
	line = strings.TrimSpace(line)
	if line == "" || len(line) > 100 || strings.ContainsAny(line[len(line)-1:], ".!?:;,") {
		return ""
	}
	return line
}

// ID derives a document's id from a path relative to what the user named (or an
// uploaded file's name): the path itself, with '/' between directories and in NFC (so
// a name stored decomposed, as macOS writes it, and the same name typed are one id).
// Only what an id may not hold (events.IDPattern) changes: a byte that is not UTF-8
// and a control character become '_', white space and . / \ - at the start and white
// space at the end are dropped, and a path longer than events.MaxIDBytes keeps its
// beginning and a hash of the whole. ID of an id is that id.
func ID(rel string) string {
	id := strings.ToValidUTF8(filepath.ToSlash(rel), "_")
	id = strings.Map(func(r rune) rune {
		if isControl(r) {
			return '_'
		}
		return r
	}, norm.NFC.String(id))
	id = strings.TrimLeftFunc(id, func(r rune) bool { return r <= ' ' || strings.ContainsRune("./\\-", r) })
	id = strings.TrimRightFunc(id, func(r rune) bool { return r <= ' ' })
	if id == "" {
		return "doc-" + events.Hash(rel)[:16]
	}
	if len(id) > events.MaxIDBytes {
		cut := events.MaxIDBytes - 17
		for cut > 0 && !utf8.RuneStart(id[cut]) {
			cut--
		}
		id = id[:cut] + "-" + events.Hash(rel)[:16]
	}
	return id
}

// isControl reports the characters events.IDPattern refuses anywhere: C0, DEL and C1.
func isControl(r rune) bool { return r < ' ' || (r >= 0x7f && r <= 0x9f) }

func htmlText(raw []byte) (title, text string) {
	z := html.NewTokenizer(bytes.NewReader(raw))
	var b strings.Builder
	skip := 0
	inTitle := false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return strings.TrimSpace(title), collapseBlankLines(b.String())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			switch tag {
			case "script", "style", "noscript", "svg", "nav", "footer":
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
			case "title":
				inTitle = tt == html.StartTagToken
			case "h1", "h2", "h3", "h4", "h5", "h6":
				if tt == html.StartTagToken {
					b.WriteString("\n\n" + strings.Repeat("#", int(tag[1]-'0')) + " ")
				} else {
					b.WriteString("\n\n")
				}
			case "p", "div", "section", "article", "br", "li", "tr", "table", "ul", "ol", "blockquote", "pre":
				b.WriteString("\n")
			}
		case html.TextToken:
			if skip > 0 {
				continue
			}
			t := string(z.Text())
			if inTitle {
				title += t
				continue
			}
			b.WriteString(strings.Join(strings.Fields(t), " "))
			if strings.HasSuffix(t, " ") {
				b.WriteString(" ")
			}
		}
	}
}

var blankLines = regexp.MustCompile(`\n{3,}`)

func collapseBlankLines(s string) string {
	return strings.TrimSpace(blankLines.ReplaceAllString(s, "\n\n"))
}

func pdfText(raw []byte) (_ string, err error) {
	// The PDF reader panics on some malformed files: one such file must not end a
	// publish of a whole directory, nor an upload.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading PDF: malformed file (%v)", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return "", fmt.Errorf("reading PDF: %w", err)
	}
	rd, err := r.GetPlainText()
	if err != nil {
		return "", fmt.Errorf("extracting PDF text: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(rd, MaxBytes))
	if err != nil {
		return "", fmt.Errorf("extracting PDF text: %w", err)
	}
	return string(b), nil
}
