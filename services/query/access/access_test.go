package access

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParseTokens(t *testing.T) {
	good := `# team tokens
plain-token
reader read demo,notes
writer   write  notes
boss admin *
`
	toks, err := ParseTokens(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"plain-token": "admin on *", "reader": "read on demo,notes", "writer": "write on notes", "boss": "admin on *"}
	if len(toks) != len(want) {
		t.Fatalf("got %d tokens, want %d: %+v", len(toks), len(want), toks)
	}
	for _, tk := range toks {
		if got := tk.Grant.String(); got != want[tk.Secret] {
			t.Errorf("%s: grant %q, want %q", tk.Secret, got, want[tk.Secret])
		}
	}
	for name, bad := range map[string]string{
		"two fields":    "tok read\n",
		"four fields":   "tok read demo extra\n",
		"bad scope":     "tok owner demo\n",
		"bad corpus":    "tok read Demo!\n",
		"no corpus":     "tok read ,\n",
		"duplicate":     "tok\ntok read demo\n",
		"scope is case": "tok READ demo\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseTokens(strings.NewReader(bad))
			if err == nil || !strings.Contains(err.Error(), "line ") {
				t.Errorf("ParseTokens(%q) = %v, want an error naming the line", bad, err)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	reader := WithGrant(context.Background(), Grant{Scope: Read, Corpora: []string{"demo", "notes"}})
	writer := WithGrant(context.Background(), Grant{Scope: Write, Corpora: []string{"notes"}})
	admin := WithGrant(context.Background(), Everything)
	open := context.Background()
	tests := []struct {
		name   string
		ctx    context.Context
		corpus string
		need   Scope
		ok     bool
	}{
		{"reader reads a granted corpus", reader, "demo", Read, true},
		{"reader cannot read another corpus", reader, "secret", Read, false},
		{"reader cannot write", reader, "notes", Write, false},
		{"writer reads its corpus", writer, "notes", Read, true},
		{"writer writes its corpus", writer, "notes", Write, true},
		{"writer cannot drop", writer, "notes", Admin, false},
		{"writer cannot write another corpus", writer, "demo", Write, false},
		{"admin on * drops anything", admin, "anything", Admin, true},
		{"no grant: authentication off", open, "anything", Admin, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.ctx, tc.corpus, tc.need, "touch")
			if (err == nil) != tc.ok {
				t.Fatalf("Check = %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				var d *Denied
				if !errors.Is(err, ErrForbidden) || !errors.As(err, &d) {
					t.Fatalf("error %v does not match ErrForbidden / *Denied", err)
				}
				msg := err.Error()
				for _, part := range []string{tc.corpus, tc.need.String(), "the token has"} {
					if !strings.Contains(msg, part) {
						t.Errorf("reason %q does not mention %q", msg, part)
					}
				}
			}
		})
	}
	if Visible(reader, "secret") || !Visible(reader, "notes") {
		t.Error("Visible disagrees with the read scope")
	}
}
