package console

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Prefix is where Mount serves the console.
const Prefix = "/ui/"

// CSP is the console's Content-Security-Policy: scripts, styles and connections only
// from the console's own origin (no inline script or style, no eval), no plugins, no
// framing.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// Handler serves the console's files under Prefix with the security headers. Loading a
// page needs no token: every data call the page makes carries it.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic("console: the embedded static directory is missing: " + err.Error())
	}
	files := http.StripPrefix(Prefix, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		// Revalidate each load: a new binary serves new files under the same names.
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// Mount serves the console at Prefix on mux (GET and HEAD; the mux redirects /ui to
// /ui/), and redirects the root, where a browser pointed at the service lands, to it.
func Mount(mux *http.ServeMux) {
	mux.Handle("GET "+Prefix, Handler())
	mux.Handle("GET /{$}", http.RedirectHandler(Prefix, http.StatusFound))
}
