package llm

import (
	"testing"
	"time"
)

func TestBudget(t *testing.T) {
	b := &budget{base: 2 * time.Minute}
	if got := b.attempt(2048, 0); got != 2*time.Minute {
		t.Fatalf("before any observation: %v, want the configured timeout", got)
	}
	if got := b.attempt(0, 2); got != 8*time.Minute {
		t.Fatalf("embeddings after two timeouts: %v, want 8m", got)
	}
	if got := b.attempt(0, 10); got != maxTimeoutScale*2*time.Minute {
		t.Fatalf("after ten timeouts: %v, want the cap %v", got, maxTimeoutScale*2*time.Minute)
	}
	// 3 tokens/s: a 1,500-token report needs 500 s, and gets twice that.
	b.observe(100*time.Second, 300)
	if got := b.attempt(1500, 0); got < 900*time.Second || got > 1100*time.Second {
		t.Fatalf("at 3 tokens/s, 1500 tokens: %v, want about 1000s", got)
	}
	// Faster answers bring it down slowly; a slower one raises it at once.
	b.observe(10*time.Second, 300)
	if got := b.attempt(1500, 0); got < 800*time.Second {
		t.Fatalf("one fast answer cut the budget to %v", got)
	}
	b.observe(200*time.Second, 300)
	if got := b.attempt(1500, 0); got != maxTimeoutScale*2*time.Minute {
		t.Fatalf("a slower answer did not raise the budget to its cap: %v", got)
	}
	// A timeout says the model is slower than the budget assumed.
	c := &budget{base: time.Second}
	c.timedOut(100, 4*time.Second)
	if got := c.attempt(100, 0); got != 8*time.Second {
		t.Fatalf("after a 4s attempt of 100 tokens timed out: %v, want 8s", got)
	}
}
