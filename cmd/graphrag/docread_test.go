package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{"unsupported", "d.docx", "x", "", "", errUnsupported, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, text, ctype, err := readDocument(write(tc.file, tc.body))
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
		if _, _, _, err := readDocument(write(bad.name, bad.body)); err == nil {
			t.Errorf("%s accepted", bad.name)
		}
	}
}

func TestDocumentID(t *testing.T) {
	for in, want := range map[string]string{
		"a.md":       "a.md",
		"dir/b c.md": "dir/b_c.md",
		"../x.md":    "x.md",
		"été/ü.md":   "t_/_.md",
	} {
		if got := documentID(in); got != want {
			t.Errorf("documentID(%q) = %q, want %q", in, got, want)
		}
	}
}
