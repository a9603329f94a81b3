package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		retryAfter string
		retryMS    string
		want       time.Duration
		wantOK     bool
	}{
		{name: "seconds", retryAfter: "3", want: 3 * time.Second, wantOK: true},
		{name: "zero", retryAfter: "0", want: 0, wantOK: true},
		{name: "spaces", retryAfter: " 5 ", want: 5 * time.Second, wantOK: true},
		{name: "http date", retryAfter: now.Add(90 * time.Second).Format(http.TimeFormat), want: 90 * time.Second, wantOK: true},
		{name: "rfc850 date", retryAfter: now.Add(time.Minute).Format(time.RFC850), want: time.Minute, wantOK: true},
		{name: "past date", retryAfter: now.Add(-time.Minute).Format(http.TimeFormat), want: 0, wantOK: true},
		{name: "milliseconds win", retryAfter: "9", retryMS: "250", want: 250 * time.Millisecond, wantOK: true},
		{name: "fractional milliseconds", retryMS: "1.5", want: 1500 * time.Microsecond, wantOK: true},
		{name: "bad milliseconds fall back", retryAfter: "2", retryMS: "soon", want: 2 * time.Second, wantOK: true},
		{name: "empty", wantOK: false},
		{name: "negative", retryAfter: "-1", wantOK: false},
		{name: "garbage", retryAfter: "later", wantOK: false},
		{name: "huge", retryAfter: "99999999999", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseRetryAfter(tt.retryAfter, tt.retryMS, now)
			if ok != tt.wantOK || (ok && got != tt.want) {
				t.Errorf("parseRetryAfter(%q, %q) = %v, %v; want %v, %v", tt.retryAfter, tt.retryMS, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)
	for _, s := range []string{"1", "120", "Wed, 21 Oct 2015 07:28:00 GMT", "", "-5", "1e3", "NaN"} {
		f.Add(s, "")
		f.Add("", s)
	}
	f.Fuzz(func(t *testing.T, ra, ms string) {
		d, ok := parseRetryAfter(ra, ms, now)
		if ok && d < 0 {
			t.Fatalf("negative delay %v for %q/%q", d, ra, ms)
		}
		if !ok && d != 0 {
			t.Fatalf("delay %v reported with ok=false", d)
		}
	})
}

func TestBackoff(t *testing.T) {
	base, max := 100*time.Millisecond, time.Second
	tests := []struct {
		retry    int
		min, max time.Duration
	}{
		{1, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 100 * time.Millisecond, 200 * time.Millisecond},
		{3, 200 * time.Millisecond, 400 * time.Millisecond},
		{5, 500 * time.Millisecond, time.Second}, // capped
		{60, 500 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		t.Run(time.Duration(tt.retry).String(), func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for range 200 {
				d := backoff(tt.retry, base, max)
				if d < tt.min || d > tt.max {
					t.Fatalf("backoff(%d) = %v, want in [%v, %v]", tt.retry, d, tt.min, tt.max)
				}
				seen[d] = true
			}
			if len(seen) < 2 {
				t.Errorf("backoff(%d) has no jitter", tt.retry)
			}
		})
	}
}

func TestKeysAreValidKVKeys(t *testing.T) {
	valid := func(k string) bool {
		if k == "" || k[0] == '.' || k[len(k)-1] == '.' {
			return false
		}
		for _, r := range k {
			if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '.' {
				return false
			}
		}
		return true
	}
	keys := map[string]string{
		"chat":  chatKey("m", []Message{{Role: "user", Content: "Ünïcode * > ."}}, nil, nil, 0, 0),
		"embed": embedKey("m", "text with spaces and * > wildcards"),
	}
	for name, k := range keys {
		t.Run(name, func(t *testing.T) {
			if !valid(k) {
				t.Errorf("key %q is not a valid KV key", k)
			}
		})
	}
	if chatKey("m", []Message{{Role: "user", Content: "a"}}, nil, nil, 0, 0) ==
		chatKey("m", []Message{{Role: "user", Content: "a"}}, nil, nil, 0, 10) {
		t.Error("max tokens does not change the key")
	}
}
