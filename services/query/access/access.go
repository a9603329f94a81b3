package access

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/graphrag/graphrag/pkg/events"
)

// Scope is what a token may do on a corpus; each scope includes the ones below it.
type Scope int

// Scopes, weakest first.
const (
	// Read: questions, retrieval, exploration, listings, status, export.
	Read Scope = iota + 1
	// Write: Read, and publishing and deleting documents.
	Write
	// Admin: Write, and dropping a whole corpus.
	Admin
)

var scopeNames = map[Scope]string{Read: "read", Write: "write", Admin: "admin"}

func (s Scope) String() string {
	if n, ok := scopeNames[s]; ok {
		return n
	}
	return fmt.Sprintf("scope(%d)", int(s))
}

// ParseScope reads "read", "write" or "admin".
func ParseScope(s string) (Scope, error) {
	for sc, n := range scopeNames {
		if n == s {
			return sc, nil
		}
	}
	return 0, fmt.Errorf("scope %q is not read, write or admin", s)
}

// AllCorpora is the corpus list of a grant on every corpus.
const AllCorpora = "*"

// Grant is what one token may do: Scope on Corpora (AllCorpora for every corpus).
type Grant struct {
	Scope   Scope
	Corpora []string
}

// Everything is the grant of a plain token: admin on every corpus.
var Everything = Grant{Scope: Admin, Corpora: []string{AllCorpora}}

// All reports whether the grant covers every corpus.
func (g Grant) All() bool { return slices.Contains(g.Corpora, AllCorpora) }

// Covers reports whether the grant names corpus (whatever its scope).
func (g Grant) Covers(corpus string) bool { return g.All() || slices.Contains(g.Corpora, corpus) }

// Allows reports whether the grant has need (or more) on corpus.
func (g Grant) Allows(corpus string, need Scope) bool { return g.Scope >= need && g.Covers(corpus) }

func (g Grant) String() string { return g.Scope.String() + " on " + strings.Join(g.Corpora, ",") }

// ErrForbidden is matched by every Denied error (the HTTP API answers 403).
var ErrForbidden = errors.New("forbidden")

// Denied says why a grant does not allow an operation.
type Denied struct {
	Grant  Grant
	Corpus string
	Need   Scope
	// Action names what was asked ("publish documents to", "read", ...).
	Action string
}

func (d *Denied) Error() string {
	return fmt.Sprintf("this token may not %s corpus %s: that needs %s on %s, the token has %s", d.Action, d.Corpus, d.Need, d.Corpus, d.Grant)
}

// Is makes a Denied match ErrForbidden.
func (d *Denied) Is(target error) bool { return target == ErrForbidden }

type grantKey struct{}

// WithGrant returns ctx carrying the grant of the request's token.
func WithGrant(ctx context.Context, g Grant) context.Context {
	return context.WithValue(ctx, grantKey{}, g)
}

// FromContext returns the grant ctx carries; ok is false when there is none (no
// authentication): everything is allowed.
func FromContext(ctx context.Context) (g Grant, ok bool) {
	g, ok = ctx.Value(grantKey{}).(Grant)
	return g, ok
}

// Check returns nil when ctx may do need on corpus, else a *Denied saying why;
// action words the operation for the message ("read", "publish documents to").
func Check(ctx context.Context, corpus string, need Scope, action string) error {
	g, ok := FromContext(ctx)
	if !ok || g.Allows(corpus, need) {
		return nil
	}
	return &Denied{Grant: g, Corpus: corpus, Need: need, Action: action}
}

// Visible reports whether ctx may read corpus: listings show only those.
func Visible(ctx context.Context, corpus string) bool {
	return Check(ctx, corpus, Read, "read") == nil
}

// Token is an accepted bearer token and its grant.
type Token struct {
	Secret string
	Grant  Grant
}

// ParseTokens reads a tokens file: one token per line, as
//
//	TOKEN                     admin on every corpus (the older format)
//	TOKEN SCOPE CORPORA       SCOPE (read, write, admin) on CORPORA
//
// where CORPORA is "*" or a comma-separated list of corpus names. Blank lines and
// lines starting with '#' are ignored. Errors name the line.
func ParseTokens(r io.Reader) ([]Token, error) {
	var out []Token
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		t, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if first, dup := seen[t.Secret]; dup {
			return nil, fmt.Errorf("line %d: the token of line %d again (one grant per token)", n, first)
		}
		seen[t.Secret] = n
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading tokens: %w", err)
	}
	return out, nil
}

func parseLine(line string) (Token, error) {
	f := strings.Fields(line)
	switch len(f) {
	case 1:
		return Token{Secret: f[0], Grant: Everything}, nil
	case 3:
	default:
		return Token{}, fmt.Errorf("want TOKEN or TOKEN SCOPE CORPORA, got %d fields", len(f))
	}
	sc, err := ParseScope(f[1])
	if err != nil {
		return Token{}, err
	}
	var corpora []string
	for c := range strings.SplitSeq(f[2], ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		if c != AllCorpora {
			if err := events.ValidateCorpus(c); err != nil {
				return Token{}, err
			}
		}
		corpora = append(corpora, c)
	}
	if len(corpora) == 0 {
		return Token{}, errors.New("no corpus listed (use * for every corpus)")
	}
	return Token{Secret: f[0], Grant: Grant{Scope: sc, Corpora: corpora}}, nil
}
