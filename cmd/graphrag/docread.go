package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
	"golang.org/x/net/html"

	"github.com/graphrag/graphrag/pkg/events"
)

// errUnsupported marks a file type the CLI does not read.
var errUnsupported = errors.New("unsupported file type")

// maxFileBytes bounds what the CLI reads from one file.
const maxFileBytes = events.MaxDocumentBytes

// readDocument turns a file into a document: Markdown and text as they are, HTML to text
// (headings kept as Markdown headings), PDF to its text layer.
func readDocument(path string) (title, text, contentType string, err error) {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".md", ".markdown", ".txt", ".text", ".html", ".htm", ".pdf":
	default:
		return "", "", "", fmt.Errorf("%w %q (want .md, .markdown, .txt, .text, .html, .htm, .pdf)", errUnsupported, ext)
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", "", "", err
	}
	if st.Size() > maxFileBytes {
		return "", "", "", fmt.Errorf("file is %d bytes, limit %d", st.Size(), maxFileBytes)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", "", "", err
	}
	switch ext {
	case ".pdf":
		text, err = pdfText(path)
		contentType = events.ContentTypeText
	case ".html", ".htm":
		title, text = htmlText(raw)
		contentType = events.ContentTypeMarkdown
	case ".md", ".markdown":
		text, contentType = string(raw), events.ContentTypeMarkdown
	default:
		text, contentType = string(raw), events.ContentTypeText
	}
	if err != nil {
		return "", "", "", err
	}
	if !utf8.ValidString(text) || strings.ContainsRune(text, 0) {
		return "", "", "", errors.New("not valid UTF-8 text (binary content?)")
	}
	if strings.TrimSpace(text) == "" {
		return "", "", "", errors.New("no text")
	}
	if title == "" {
		title = markdownTitle(text)
	}
	if title == "" && contentType == events.ContentTypeText {
		title = firstLineTitle(text)
	}
	if title == "" {
		base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		base = numberPrefix.ReplaceAllString(base, "")
		title = strings.TrimSpace(strings.NewReplacer("_", " ", "-", " ").Replace(base))
	}
	return cleanTitle(title), text, contentType, nil
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

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9._:/@+=-]+`)

// documentID derives a stable id from a path relative to what the user named.
func documentID(rel string) string {
	id := idUnsafe.ReplaceAllString(filepath.ToSlash(rel), "_")
	id = strings.TrimLeft(id, "._/-:@+=")
	if id == "" {
		id = "doc-" + events.Hash(rel)[:16]
	}
	if len(id) > events.MaxIDBytes {
		id = id[:events.MaxIDBytes-17] + "-" + events.Hash(rel)[:16]
	}
	return id
}

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

func pdfText(path string) (_ string, err error) {
	// The PDF reader panics on some malformed files: one such file must not end a
	// publish of a whole directory.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading PDF: malformed file (%v)", r)
		}
	}()
	f, r, err := pdf.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading PDF: %w", err)
	}
	defer f.Close()
	rd, err := r.GetPlainText()
	if err != nil {
		return "", fmt.Errorf("extracting PDF text: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(rd, maxFileBytes))
	if err != nil {
		return "", fmt.Errorf("extracting PDF text: %w", err)
	}
	return string(b), nil
}
