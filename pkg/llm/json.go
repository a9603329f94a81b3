package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Validator is implemented by ChatJSON targets that check more than the
// JSON shape (required fields, enums). T or *T may implement it.
type Validator interface {
	Validate() error
}

// ChatJSON asks for JSON and decodes it into T. Output that does not decode
// (or fails Validate) is asked for again, bypassing the cache, up to
// Config.JSONRetries times; then the result is an *InvalidJSONError matching
// ErrInvalidJSON. Only output that decodes is cached. Call errors are
// returned as Chat returns them.
func ChatJSON[T any](ctx context.Context, c *Client, req ChatRequest) (T, ChatResponse, error) {
	var zero T
	mode := cacheMode{read: true}
	var lastErr error
	var last ChatResponse
	attempts := 0
	for range c.cfg.JSONRetries + 1 {
		resp, key, err := c.chat(ctx, req, mode)
		if err != nil {
			return zero, resp, err
		}
		attempts++
		v, err := DecodeJSON[T](resp.Content)
		if err == nil {
			if !resp.Cached {
				c.storeChat(ctx, key, resp)
			}
			return v, resp, nil
		}
		if resp.FinishReason == "length" {
			err = fmt.Errorf("%w (output cut at max tokens)", err)
		}
		lastErr, last = err, resp
		c.o.logger.WarnContext(ctx, "llm answer is not the expected JSON, asking again",
			"stage", stageOf(ctx, req.Stage), "attempt", attempts, "error", err)
		// A cached answer that does not decode must not be served again.
		mode = cacheMode{}
	}
	return zero, last, &InvalidJSONError{Attempts: attempts, Content: last.Content, Err: lastErr}
}

// DecodeJSON decodes model output into T: one JSON value, optionally inside
// a Markdown code fence (models add them even when told not to), nothing
// after it. If T or *T implements Validator, Validate must pass too.
func DecodeJSON[T any](content string) (T, error) {
	var v T
	s := strings.TrimSpace(content)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		// Drop the info string (```json) and the closing fence.
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		} else {
			rest = ""
		}
		rest = strings.TrimSpace(rest)
		s = strings.TrimSpace(strings.TrimSuffix(rest, "```"))
	}
	if s == "" {
		return v, errors.New("decoding JSON output: empty content")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("decoding JSON output: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return v, errors.New("decoding JSON output: trailing data after the JSON value")
	}
	if err := validate(&v); err != nil {
		return v, fmt.Errorf("validating JSON output: %w", err)
	}
	return v, nil
}

func validate[T any](p *T) error {
	if val, ok := any(p).(Validator); ok {
		return val.Validate()
	}
	if rv := reflect.ValueOf(*p); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return errors.New("JSON null where a value is required")
	}
	if val, ok := any(*p).(Validator); ok {
		return val.Validate()
	}
	return nil
}
