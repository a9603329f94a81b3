package bus_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
)

// TestReadStream reads stored messages by subject from a sequence on, stops where the
// caller says or at the limit, and returns at once at the end of the stream.
func TestReadStream(t *testing.T) {
	e := newEnv(t)
	ctx := testCtx(t)
	for i := range 5 {
		for _, subj := range []string{"ev.a", "ev.b"} {
			if _, err := e.b.Publish(ctx, subj, fmt.Appendf(nil, "%s-%d", subj, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := func(subject string, start uint64, limit int, stopAt string) ([]string, bool) {
		t.Helper()
		var got []string
		truncated, err := e.b.ReadStream(ctx, evStream, subject, start, limit, func(m bus.StoredMessage) bool {
			got = append(got, string(m.Data))
			if m.Seq == 0 || m.Time.IsZero() || (m.Subject != subject && subject != "ev.*") {
				t.Errorf("message %+v lacks its sequence, time or subject", m)
			}
			return string(m.Data) != stopAt
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, truncated
	}
	if got, tr := read("ev.a", 0, 100, ""); len(got) != 5 || got[0] != "ev.a-0" || got[4] != "ev.a-4" || tr {
		t.Errorf("all of ev.a: %v (truncated %v)", got, tr)
	}
	if got, _ := read("ev.b", 6, 100, ""); len(got) != 3 || got[0] != "ev.b-2" {
		t.Errorf("ev.b from sequence 6: %v, want ev.b-2..4", got)
	}
	if got, tr := read("ev.a", 0, 2, ""); len(got) != 2 || !tr {
		t.Errorf("limit 2: %v (truncated %v)", got, tr)
	}
	if got, tr := read("ev.*", 0, 100, "ev.b-1"); len(got) != 4 || tr {
		t.Errorf("stopped at ev.b-1: %v (truncated %v)", got, tr)
	}
	if _, err := e.b.ReadStream(ctx, "NOPE", "x", 0, 1, nil); !errors.Is(err, bus.ErrNotFound) {
		t.Errorf("an unknown stream: %v, want ErrNotFound", err)
	}
}

func TestReadKV(t *testing.T) {
	e := newEnv(t)
	ctx := testCtx(t)
	kv, err := e.b.EnsureKV(ctx, "state", 0)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Second)
	if err := kv.Put(ctx, "doc.a", []byte("one")); err != nil {
		t.Fatal(err)
	}
	r, err := e.b.ReadKV(ctx, "state", "doc.a")
	if err != nil || string(r.Value) != "one" || r.Revision == 0 || r.Created.Before(before) {
		t.Errorf("ReadKV = %+v, %v", r, err)
	}
	if _, err := e.b.ReadKV(ctx, "state", "doc.b"); !errors.Is(err, bus.ErrNotFound) {
		t.Errorf("a missing key: %v, want ErrNotFound", err)
	}
	if _, err := e.b.ReadKV(ctx, "nobucket", "doc.a"); !errors.Is(err, bus.ErrNotFound) {
		t.Errorf("a missing bucket: %v, want ErrNotFound", err)
	}
}
