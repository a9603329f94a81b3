package bus

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"

	"github.com/graphrag/graphrag/pkg/errkind"
)

func TestBackoffSchedule(t *testing.T) {
	spec := ConsumerSpec{Backoff: []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}}
	tests := []struct {
		deliveries uint64
		want       time.Duration
	}{
		{0, time.Second}, // defensive: the server counts from 1
		{1, time.Second},
		{2, 2 * time.Second},
		{3, 3 * time.Second},
		{4, 3 * time.Second},
		{1000, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.deliveries), func(t *testing.T) {
			if got := spec.backoff(tt.deliveries); got != tt.want {
				t.Fatalf("backoff(%d) = %s, want %s", tt.deliveries, got, tt.want)
			}
		})
	}
}

func TestSpecDefaults(t *testing.T) {
	s, err := ConsumerSpec{Stream: "S", Durable: "d", DeadLetterSubject: "dlq"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if s.AckWait != DefaultAckWait || s.MaxDeliver != DefaultMaxDeliver || s.Workers != 1 || !slices.Equal(s.Backoff, DefaultBackoff) {
		t.Fatalf("defaults not applied: %+v", s)
	}
}

func TestHeaderCarrier(t *testing.T) {
	h := nats.Header{}
	c := headerCarrier(h)
	c.Set("traceparent", "00-abc-def-01")
	c.Set("tracestate", "k=v")
	if got := c.Get("traceparent"); got != "00-abc-def-01" {
		t.Fatalf("Get = %q", got)
	}
	if got := h.Get("traceparent"); got != "00-abc-def-01" {
		t.Fatalf("Set did not write through to nats.Header: %q", got)
	}
	keys := c.Keys()
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"traceparent", "tracestate"}) {
		t.Fatalf("Keys = %v", keys)
	}
	if got := c.Get("missing"); got != "" {
		t.Fatalf("Get(missing) = %q", got)
	}
}

func TestPermanent(t *testing.T) {
	base := errors.New("bad input")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", base, false},
		{"wrapped permanent", fmt.Errorf("ctx: %w", Permanent(base)), true},
		{"sentinel", fmt.Errorf("ctx: %w", ErrPermanent), true},
		{"permanentf", Permanentf("field %s", "x"), true},
		{"struct", &PermanentError{}, true},
		{"kind", fmt.Errorf("ctx: %w", errkind.Wrap(errkind.Permanent, base)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsPermanent(tt.err); got != tt.want {
				t.Fatalf("IsPermanent(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
	if Permanent(nil) != nil {
		t.Fatal("Permanent(nil) != nil")
	}
	if !errors.Is(Permanent(base), base) {
		t.Fatal("Permanent hides the cause")
	}
}

// The retry or dead-letter choice reads error kinds, whoever made the error: the
// bus's own markers and any error of the kind errkind.Permanent or Unavailable.
func TestGiveUpByKind(t *testing.T) {
	base := errors.New("boom")
	const maxDeliver = 3
	tests := []struct {
		name       string
		err        error
		deliveries uint64
		want       bool
	}{
		{"plain, first delivery", base, 1, false},
		{"plain, last delivery", base, maxDeliver, true},
		{"Permanent, first delivery", Permanent(base), 1, true},
		{"kind Permanent, first delivery", errkind.Wrap(errkind.Permanent, base), 1, true},
		{"kind Permanent, wrapped", fmt.Errorf("merging: %w", errkind.Wrap(errkind.Permanent, base)), 1, true},
		{"Unavailable, last delivery", Unavailable(base), maxDeliver, false},
		{"Unavailable, far past the last", fmt.Errorf("x: %w", Unavailable(base)), 100, false},
		{"kind Unavailable, last delivery", errkind.Wrap(errkind.Unavailable, base), maxDeliver, false},
		{"kind Unavailable, first delivery", errkind.Wrap(errkind.Unavailable, base), 1, false},
		{"Permanent beats Unavailable", Unavailable(Permanent(base)), 1, true},
		{"other kinds count as usual", fmt.Errorf("x: %w", ErrNotFound), 1, false},
		{"other kinds, last delivery", errkind.Wrap(errkind.Invalid, base), maxDeliver, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := giveUp(tt.err, tt.deliveries, maxDeliver); got != tt.want {
				t.Fatalf("giveUp(%v, %d) = %v, want %v", tt.err, tt.deliveries, got, tt.want)
			}
		})
	}
}

func TestHeaderSafe(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "boom", "boom"},
		{"newlines", "a\r\nb\nc", "a  b c"},
		{"long", strings.Repeat("x", 3000), strings.Repeat("x", maxReasonLen)},
		{"cut rune", strings.Repeat("x", maxReasonLen-1) + "é", strings.Repeat("x", maxReasonLen-1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := headerSafe(tt.in); got != tt.want {
				t.Fatalf("headerSafe = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConnConfigMasksSecrets(t *testing.T) {
	tests := []struct {
		name    string
		cfg     ConnConfig
		secrets []string
		want    []string
	}{
		{
			name:    "password in url",
			cfg:     ConnConfig{URL: "nats://alice:hunter2@nats1:4222,nats://bob:swordfish@nats2:4222", Name: "grapher"},
			secrets: []string{"hunter2", "swordfish"},
			want:    []string{"alice", "bob", "nats1:4222", "nats2:4222", "grapher"},
		},
		{
			name:    "token in url",
			cfg:     ConnConfig{URL: "nats://s3cr3ttoken@nats:4222"},
			secrets: []string{"s3cr3ttoken"},
			want:    []string{"nats:4222"},
		},
		{
			name:    "token field",
			cfg:     ConnConfig{URL: "nats://nats:4222", Token: "tok-abcdef", CredsFile: "/etc/nats/user.creds"},
			secrets: []string{"tok-abcdef"},
			want:    []string{"token=****", "/etc/nats/user.creds"},
		},
		{
			name:    "no scheme",
			cfg:     ConnConfig{URL: "alice:hunter22@nats:4222"},
			secrets: []string{"hunter22"},
			want:    []string{"alice", "nats:4222"},
		},
		{
			name:    "unparsable url",
			cfg:     ConnConfig{URL: "nats://user:pa ss%zz@host"},
			secrets: []string{"pa ss"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.cfg.String()
			lv := tt.cfg.LogValue().String()
			for _, secret := range tt.secrets {
				if strings.Contains(s, secret) || strings.Contains(lv, secret) {
					t.Errorf("secret %q leaked: String=%q LogValue=%q", secret, s, lv)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(s, w) {
					t.Errorf("String %q lacks %q", s, w)
				}
			}
		})
	}
}

// FuzzMaskURLs: whatever the configured URL list, a password parsed from it
// never appears in the masked form.
func FuzzMaskURLs(f *testing.F) {
	for _, seed := range []string{
		"nats://a:b@h:4222", "nats://tok@h", "h:4222,nats://x:y@z", "", ",,", "nats://[::1]:4222", "%zz",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, list string) {
		out := maskURLs(list)
		for p := range strings.SplitSeq(list, ",") {
			p = strings.TrimSpace(p)
			if !strings.Contains(p, "://") {
				p = "nats://" + p
			}
			u, err := url.Parse(p)
			if err != nil || u.User == nil {
				continue
			}
			pw, ok := u.User.Password()
			if !ok {
				pw = u.User.Username()
			}
			// Short or mask-like secrets can occur by chance elsewhere.
			if len(pw) < 6 || strings.Contains(pw, "*") || !utf8.ValidString(pw) {
				continue
			}
			rest := strings.Replace(list, pw, "", 1)
			if strings.Contains(rest, pw) {
				continue // the secret also appears outside the user part
			}
			if strings.Contains(out, pw) || strings.Contains(out, url.PathEscape(pw)) || strings.Contains(out, url.QueryEscape(pw)) {
				t.Fatalf("maskURLs(%q) = %q leaks %q", list, out, pw)
			}
		}
	})
}
