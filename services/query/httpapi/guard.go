package httpapi

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/graphrag/graphrag/services/query/access"
)

// guard applies authentication, the per-client rate limit, the scope the route needs
// on its {corpus} (routeScope), the body limit and the request deadline. The request's
// context carries the token's grant (access.FromContext) for the checks a handler makes
// itself (a corpus named in the body).
func (a *API) guard(h http.HandlerFunc) http.HandlerFunc { return a.guardBody(a.cfg.MaxBodyBytes, h) }

// guardBody is guard with another body limit (uploads).
func (a *API) guardBody(limit int64, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		client := clientAddr(r)
		ctx := r.Context()
		if a.authenticating() {
			tok, ok := bearer(r)
			grant, valid := a.grantOf(tok)
			if !ok || !valid {
				// Failed attempts spend the caller's address bucket, so guessing tokens is
				// rate limited too.
				if a.limits != nil && !a.limits.allow(client) {
					w.Header().Set("Retry-After", "1")
					writeJSON(w, http.StatusTooManyRequests, apiError{Error: "rate limit exceeded"})
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="graphrag"`)
				writeJSON(w, http.StatusUnauthorized, apiError{Error: "missing or invalid bearer token"})
				return
			}
			client = "token:" + tok
			ctx = access.WithGrant(ctx, grant)
		}
		if a.limits != nil && !a.limits.allow(client) {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusTooManyRequests, apiError{Error: "rate limit exceeded"})
			return
		}
		if corpus := r.PathValue("corpus"); corpus != "" {
			rs := a.routeScope(r)
			if err := access.Check(ctx, corpus, rs.need, rs.action); err != nil {
				writeJSON(w, http.StatusForbidden, apiError{Error: err.Error()})
				return
			}
		}
		ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
		defer cancel()
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		h(w, r.WithContext(ctx))
	}
}

// scopeNeed is the scope a route needs on its {corpus}, and the words for a refusal.
type scopeNeed struct {
	need   access.Scope
	action string
}

// routeScopes are the routes that need more than their method implies (see routeScope).
var routeScopes = map[string]scopeNeed{
	"POST /v1/corpora/{corpus}/documents":        {access.Write, "publish documents to"},
	"DELETE /v1/corpora/{corpus}/documents/{id}": {access.Write, "delete documents of"},
	"DELETE /v1/corpora/{corpus}":                {access.Admin, "drop"},
	"GET /v1/corpora/{corpus}/export":            {access.Read, "export"},
	"POST /v1/corpora/{corpus}/curation":         {access.Write, "curate the graph of"},
	"DELETE /v1/corpora/{corpus}/curation/{id}":  {access.Write, "undo curation of"},
}

// routeScope is the scope a request needs on its {corpus}: the route's own if it has
// one, else read for GET and HEAD and write for the methods that change things. A
// route added without an entry is therefore guarded by its method.
func (a *API) routeScope(r *http.Request) scopeNeed {
	if s, ok := routeScopes[r.Pattern]; ok {
		return s
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return scopeNeed{access.Read, "read"}
	}
	return scopeNeed{access.Write, "change"}
}

func (a *API) authenticating() bool { return len(a.cfg.Tokens)+len(a.cfg.Scoped) > 0 }

// grantOf returns the grant of a token, comparing it with every accepted token in
// constant time.
func (a *API) grantOf(tok string) (access.Grant, bool) {
	var g access.Grant
	ok := 0
	for _, t := range a.cfg.Tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			g, ok = access.Everything, 1
		}
	}
	for _, t := range a.cfg.Scoped {
		if subtle.ConstantTimeCompare([]byte(t.Secret), []byte(tok)) == 1 {
			g, ok = t.Grant, 1
		}
	}
	return g, ok == 1
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) <= len(p) || !strings.EqualFold(h[:len(p)], p) {
		return "", false
	}
	return strings.TrimSpace(h[len(p):]), true
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// clientLimits is a token bucket per client, forgetting idle clients.
type clientLimits struct {
	mu    sync.Mutex
	r     rate.Limit
	burst int
	m     map[string]*clientLimit
	sweep time.Time
}

type clientLimit struct {
	l    *rate.Limiter
	seen time.Time
}

func newClientLimits(r rate.Limit, burst int) *clientLimits {
	return &clientLimits{r: r, burst: burst, m: map[string]*clientLimit{}, sweep: time.Now()}
}

func (c *clientLimits) allow(client string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if now.Sub(c.sweep) > time.Minute {
		for k, v := range c.m {
			if now.Sub(v.seen) > 10*time.Minute {
				delete(c.m, k)
			}
		}
		c.sweep = now
	}
	cl, ok := c.m[client]
	if !ok {
		cl = &clientLimit{l: rate.NewLimiter(c.r, c.burst)}
		c.m[client] = cl
	}
	cl.seen = now
	return cl.l.AllowN(now, 1)
}
