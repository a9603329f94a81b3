package llmtest

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// budget is the per-window token and request budget of WithTokenBudget and
// WithRequestBudget, in fixed windows counted from the server's start.
type budget struct {
	tokens, requests int // per window; 0: unlimited
	window           time.Duration
	start            time.Time

	mu      sync.Mutex
	windows []WindowUsage // one per window that served or refused anything
}

// WindowUsage is what the endpoint served in one budget window.
type WindowUsage struct {
	Index    int64 // windows since the server started, from 0
	Tokens   int   // tokens served (requests refused cost nothing)
	Requests int   // requests served
	Refused  int   // requests answered 429 for lack of budget
}

// take charges cost tokens and one request to the window at now if they fit, or says
// how long until the next window starts.
func (b *budget) take(now time.Time, cost int) (wait time.Duration, ok bool) {
	idx := int64(now.Sub(b.start) / b.window)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens == 0 && b.requests == 0 {
		return 0, true // lifted by SetBudget
	}
	if n := len(b.windows); n == 0 || b.windows[n-1].Index != idx {
		b.windows = append(b.windows, WindowUsage{Index: idx})
	}
	w := &b.windows[len(b.windows)-1]
	// A request larger than a whole window is served alone in a fresh window, as
	// providers serve a request up to the whole per-minute limit.
	fitsTokens := b.tokens == 0 || w.Tokens+cost <= b.tokens || w.Tokens == 0
	fitsRequests := b.requests == 0 || w.Requests < b.requests
	if !fitsTokens || !fitsRequests {
		w.Refused++
		next := b.start.Add(time.Duration(idx+1) * b.window)
		return next.Sub(now), false
	}
	w.Tokens += cost
	w.Requests++
	return 0, true
}

// BudgetUsage returns, in order, the budget windows in which the endpoint served or
// refused a request (none without WithTokenBudget or WithRequestBudget). The achieved
// rate of a client is the tokens served per window against the budget: the fake's own
// accounting, whatever the speed of the machine running it.
func (s *Server) BudgetUsage() []WindowUsage {
	if s.budget == nil {
		return nil
	}
	s.budget.mu.Lock()
	defer s.budget.mu.Unlock()
	return append([]WindowUsage(nil), s.budget.windows...)
}

// cost is what a request takes from the token budget: its prompt tokens, and for chat
// the tokens of the answer it is about to get (the fake knows it in advance).
func (s *Server) cost(req Request) int {
	if req.Chat != nil {
		n := tokens(s.cfg.chatReply(*req.Chat))
		for _, m := range req.Chat.Messages {
			n += tokens(m.Content)
		}
		return n
	}
	n := 0
	switch in := req.Embed.Input.(type) {
	case string:
		n = tokens(in)
	case []any:
		for _, v := range in {
			if str, ok := v.(string); ok {
				n += tokens(str)
			}
		}
	}
	return n
}

// refuseOverBudget answers 429 as OpenAI does when a rate limit is reached: Retry-After
// in whole seconds (rounded up) and Retry-After-Ms.
func (s *Server) refuseOverBudget(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
	// Rounded up: a client coming back on the dot must find the next window started.
	w.Header().Set("Retry-After-Ms", strconv.FormatInt(int64(max((wait+time.Millisecond-1)/time.Millisecond, 1)), 10))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	tok, req := s.budget.limits()
	_, _ = fmt.Fprintf(w, `{"error":{"message":"rate limit reached: budget of %d tokens and %d requests per %s (0: none)","type":"tokens","code":"rate_limit_exceeded"}}`,
		tok, req, s.budget.window)
}

func (b *budget) limits() (tokens, requests int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens, b.requests
}

// SetBudget changes the token and request budgets per window (0: none) from the next
// request on, as an endpoint whose quota is raised or cut does. It panics on a server
// started without WithTokenBudget or WithRequestBudget, or given a negative budget.
func (s *Server) SetBudget(tokens, requests int) {
	if s.budget == nil {
		panic("llmtest: SetBudget on a server without a budget (WithTokenBudget, WithRequestBudget)")
	}
	if tokens < 0 || requests < 0 {
		panic(fmt.Sprintf("llmtest: SetBudget(%d, %d): budgets must not be negative", tokens, requests))
	}
	s.budget.mu.Lock()
	defer s.budget.mu.Unlock()
	s.budget.tokens, s.budget.requests = tokens, requests
}
