// Package console is the web console served at /ui/: static files (HTML, CSS, one
// JavaScript module and the vendored Cytoscape.js, ADR 0027) embedded in the binary, so
// building, running and testing the Go code needs no Node.js. The pages read only the
// public HTTP API, with the same bearer token as any client; the handler sends a
// Content-Security-Policy that forbids inline scripts, and the script writes every
// corpus text as text (never as HTML).
//
// The browser tests (browser_test.go, build tag "browser", `make test-ui`) drive
// headless Chromium against `graphrag up` on the sample corpus.
package console
