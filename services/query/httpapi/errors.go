package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/services/query/clienterror"
	"github.com/graphrag/graphrag/services/query/engine"
)

// failure is what the API answers for an error: the status and a message in the API's
// own terms. Package clienterror decides what the client is told, as it does for the
// MCP tools: the caller's mistakes (a Public kind of errkind, the engine's sentinels, a
// refusal) with their text; a failure of the service (a store, the model endpoint) by
// what failed, with the trace id that leads to the logged details, never with the
// backend's text: no Go type, no internal collection name, no upstream message reaches
// a client. A store's or the bus's kind is meant for the code that called the store:
// reaching the API untranslated, it is a failure of the service (500), like any error
// without a kind. The API adds its own: a body too large, too slow or of the wrong type.
func failure(ctx context.Context, err error) (int, string) {
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, errUnsupportedMedia):
		return http.StatusUnsupportedMediaType, err.Error()
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is too large (limit %d bytes)", mbe.Limit)
	case errors.Is(err, service.ErrBodyTimeout):
		return http.StatusRequestTimeout, "the request body did not arrive in time"
	}
	t := clienterror.Of(ctx, err)
	return statusOf[t.Class], t.Message
}

// statusOf is the status of each class of clienterror. A cancelled request's client is
// gone; it is answered, and logged, as a failure.
var statusOf = map[clienterror.Class]int{
	clienterror.Internal:    http.StatusInternalServerError,
	clienterror.Invalid:     http.StatusBadRequest,
	clienterror.Forbidden:   http.StatusForbidden,
	clienterror.NotFound:    http.StatusNotFound,
	clienterror.Conflict:    http.StatusConflict,
	clienterror.Unavailable: http.StatusServiceUnavailable,
	clienterror.Upstream:    http.StatusBadGateway,
	clienterror.Timeout:     http.StatusGatewayTimeout,
	clienterror.Canceled:    http.StatusInternalServerError,
}

// retryAfterUnavailable is the Retry-After of a 503 (seconds): about how often the
// stages probe a store that is down (pipeline.Dependencies), so a client that waits it
// out asks again about when the service can know the store is back.
const retryAfterUnavailable = "10"

// setRetryAfter tells the client of a 503 when to try again.
func setRetryAfter(w http.ResponseWriter, status int) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfterUnavailable)
	}
}

// bodyError says what is wrong with a request body that does not decode, in the terms
// of the API's JSON (field names, JSON kinds), not those of the Go types behind it.
func bodyError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return engine.BadRequestf("body: is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return engine.BadRequestf("body: ends before the JSON object does")
	case errors.As(err, &syn):
		return engine.BadRequestf("body: is not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return engine.BadRequestf("body: must be a JSON object, not %s", jsonValue(typ.Value))
		}
		return engine.BadRequestf("body: %s must be %s, not %s", typ.Field, jsonKind(typ.Type), jsonValue(typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return engine.BadRequestf("body: unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return engine.BadRequestf("body: is not a valid request")
}

// jsonValue names what encoding/json found ("number", "number 1.5", "array").
func jsonValue(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return "the number " + n
	}
	switch v {
	case "array", "object":
		return "an " + v
	case "bool":
		return "a boolean"
	}
	return "a " + v
}

// jsonKind names the JSON kind a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// JSONErrors answers the errors h writes as plain text (the MCP transport's 4xx for a
// wrong method or a missing header) in the API's JSON error shape, so that every route
// of the service fails the same way. JSON answers and streams pass through unchanged.
func JSONErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pw := &plainErrorWriter{ResponseWriter: w}
		h.ServeHTTP(pw, r)
		if pw.status != 0 {
			writeJSON(w, pw.status, apiError{Error: strings.TrimSpace(pw.body.String())})
		}
	})
}

type plainErrorWriter struct {
	http.ResponseWriter
	status int // a plain-text error being collected; 0 otherwise
	body   bytes.Buffer
	header bool
}

func (w *plainErrorWriter) WriteHeader(status int) {
	if w.header {
		return
	}
	w.header = true
	if status >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *plainErrorWriter) Write(b []byte) (int, error) {
	if !w.header {
		w.WriteHeader(http.StatusOK)
	}
	if w.status != 0 {
		if w.body.Len() < 4096 {
			w.body.Write(b)
		}
		// The JSON answer replaces the text; written once the handler is done.
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes through for streams; a collected error is written by finish.
func (w *plainErrorWriter) Flush() {
	if w.status != 0 {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *plainErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
