package llm

import (
	"sync"
	"time"
)

// maxTimeoutScale bounds how far the time budget of one attempt grows beyond
// Config.Timeout.
const maxTimeoutScale = 16

// budget sets the time one attempt may take. A fixed timeout stalls a slow model for
// good: an answer that needs longer than the timeout is cancelled and asked again with
// the same prompt and the same timeout, forever (at 2–4 tokens/s a 1,500-token report
// needs several minutes against a 2-minute timeout). So the budget follows the model:
//
//   - chat: twice the time the longest answer allowed (max_tokens) takes at the
//     completion speed observed on successful calls (seconds per token, moving
//     average), never less than Config.Timeout;
//   - an attempt that times out doubles the budget of the call's next attempt, and
//     raises the client's speed estimate so that calls started meanwhile get as much;
//   - never more than maxTimeoutScale × Config.Timeout: past that the call fails with
//     ErrTimeout, and the caller falls back (an extractive report, offline extraction).
type budget struct {
	base time.Duration

	mu       sync.Mutex
	perToken float64 // seconds per completion token; 0 until observed
}

// attempt is the budget of an attempt of a call allowed maxTokens completion tokens
// (0 for embeddings), after timedOut of its attempts timed out.
func (b *budget) attempt(maxTokens, timedOut int) time.Duration {
	d := b.base
	if maxTokens > 0 {
		b.mu.Lock()
		perToken := b.perToken
		b.mu.Unlock()
		if est := time.Duration(2 * float64(maxTokens) * perToken * float64(time.Second)); est > d {
			d = est
		}
	}
	for range timedOut {
		d *= 2
	}
	return min(d, maxTimeoutScale*b.base)
}

// minObservedTokens keeps short answers, whose time is mostly the prompt's, from
// passing for a very slow model.
const minObservedTokens = 64

// observe learns from a successful chat attempt that produced tokens in took. The
// estimate rises at once to a slower sample and comes down slowly: a budget too large
// only delays noticing a hung call, one too small throws work away.
func (b *budget) observe(took time.Duration, tokens int) {
	if tokens <= 0 || took <= 0 {
		return
	}
	sample := took.Seconds() / float64(max(tokens, minObservedTokens))
	b.mu.Lock()
	defer b.mu.Unlock()
	if sample >= b.perToken {
		b.perToken = sample
		return
	}
	b.perToken = 0.9*b.perToken + 0.1*sample
}

// timedOut learns from an attempt of a call allowed maxTokens that ran out of budget:
// the model is slower than maxTokens in budget/2 (the estimate the budget came from).
func (b *budget) timedOut(maxTokens int, budget time.Duration) {
	if maxTokens <= 0 {
		return
	}
	floor := budget.Seconds() / float64(maxTokens)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.perToken = max(b.perToken, floor)
}
