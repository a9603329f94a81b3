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
)

// guard applies authentication, the per-client rate limit and the request deadline.
func (a *API) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		client := clientAddr(r)
		if len(a.cfg.Tokens) > 0 {
			tok, ok := bearer(r)
			if !ok || !a.validToken(tok) {
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
		}
		if a.limits != nil && !a.limits.allow(client) {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusTooManyRequests, apiError{Error: "rate limit exceeded"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), a.cfg.Timeout)
		defer cancel()
		r.Body = http.MaxBytesReader(w, r.Body, a.cfg.MaxBodyBytes)
		h(w, r.WithContext(ctx))
	}
}

func (a *API) validToken(tok string) bool {
	ok := 0
	for _, t := range a.cfg.Tokens {
		ok |= subtle.ConstantTimeCompare([]byte(t), []byte(tok))
	}
	return ok == 1
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
