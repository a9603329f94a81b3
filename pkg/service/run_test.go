package service

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// journal records lifecycle events from several components in order.
type journal struct {
	mu     sync.Mutex
	events []string
}

func (j *journal) add(e string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, e)
}

func (j *journal) get() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.events)
}

// recorder is a Component that journals its calls and can fail on Start.
type recorder struct {
	name     string
	j        *journal
	startErr error
	started  chan struct{} // closed when Start is called, if non-nil
	stopped  chan struct{} // closed when Stop is called, if non-nil
}

func (r *recorder) Name() string { return r.name }

func (r *recorder) Start(context.Context) error {
	r.j.add("start " + r.name)
	if r.started != nil {
		close(r.started)
	}
	return r.startErr
}

func (r *recorder) Stop(context.Context) error {
	r.j.add("stop " + r.name)
	if r.stopped != nil {
		close(r.stopped)
	}
	return nil
}

func TestRunOrder(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name    string
		failAt  int // index whose Start fails; -1 for none
		trigger string
		want    []string
		wantErr error
	}{
		{
			name: "cancel stops in reverse", failAt: -1, trigger: "cancel",
			want: []string{"start a", "start b", "start c", "stop c", "stop b", "stop a"},
		},
		{
			name: "signal stops in reverse", failAt: -1, trigger: "signal",
			want: []string{"start a", "start b", "start c", "stop c", "stop b", "stop a"},
		},
		{
			name: "start error stops the started ones", failAt: 1,
			want:    []string{"start a", "start b", "stop a"},
			wantErr: errBoom,
		},
		{
			name: "first start error", failAt: 0,
			want:    []string{"start a"},
			wantErr: errBoom,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &journal{}
			lastStarted := make(chan struct{})
			var comps []Component
			for i, name := range []string{"a", "b", "c"} {
				r := &recorder{name: name, j: j}
				if i == tt.failAt {
					r.startErr = errBoom
				}
				if i == 2 {
					r.started = lastStarted
				}
				comps = append(comps, r)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			sig := make(chan os.Signal, 2)
			go func() {
				if tt.trigger == "" {
					return
				}
				<-lastStarted
				if tt.trigger == "signal" {
					sig <- syscall.SIGTERM
				} else {
					cancel()
				}
			}()
			err := run(ctx, nil, time.Second, sig, comps)
			if tt.wantErr == nil && err != nil {
				t.Fatalf("run: %v", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("run error = %v, want %v", err, tt.wantErr)
			}
			if got := j.get(); !slices.Equal(got, tt.want) {
				t.Errorf("events = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRunNilComponent(t *testing.T) {
	j := &journal{}
	err := run(t.Context(), nil, time.Second, nil, []Component{&recorder{name: "a", j: j}, nil})
	if err == nil || !strings.Contains(err.Error(), "component 1 is nil") {
		t.Errorf("run = %v, want a nil component error", err)
	}
	if len(j.get()) != 0 {
		t.Errorf("events = %v, want nothing started", j.get())
	}
}

func TestRunComponentFailure(t *testing.T) {
	j := &journal{}
	errLoop := errors.New("consumer lost its stream")
	fail := make(chan struct{})
	loop := Loop("consumer", func(ctx context.Context) error {
		select {
		case <-fail:
			return errLoop
		case <-ctx.Done():
			return nil
		}
	})
	comps := []Component{
		&recorder{name: "a", j: j},
		loop,
		Func("b", func(context.Context) error { j.add("start b"); close(fail); return nil },
			func(context.Context) error { j.add("stop b"); return nil }),
	}
	err := run(t.Context(), nil, time.Second, make(chan os.Signal), comps)
	if !errors.Is(err, errLoop) {
		t.Fatalf("run error = %v, want the loop's error", err)
	}
	if want := []string{"start a", "start b", "stop b", "stop a"}; !slices.Equal(j.get(), want) {
		t.Errorf("events = %v, want %v", j.get(), want)
	}
}

func TestRunStartContextCancelledOnShutdown(t *testing.T) {
	var startCtx context.Context
	started := make(chan struct{})
	c := Func("keeps ctx", func(ctx context.Context) error {
		startCtx = ctx
		close(started)
		return nil
	}, nil)
	sig := make(chan os.Signal, 1)
	go func() { <-started; sig <- os.Interrupt }()
	if err := run(t.Context(), nil, time.Second, sig, []Component{c}); err != nil {
		t.Fatalf("run: %v", err)
	}
	var se SignalError
	if !errors.As(context.Cause(startCtx), &se) || se.Signal != os.Interrupt {
		t.Errorf("start ctx cause = %v, want the signal", context.Cause(startCtx))
	}
}

func TestRunCancelledDuringStart(t *testing.T) {
	j := &journal{}
	ctx, cancel := context.WithCancel(t.Context())
	comps := []Component{
		Func("a", func(context.Context) error { j.add("start a"); cancel(); return nil },
			func(context.Context) error { j.add("stop a"); return nil }),
		&recorder{name: "b", j: j},
	}
	if err := run(ctx, nil, time.Second, nil, comps); err != nil {
		t.Fatalf("run: %v", err)
	}
	if want := []string{"start a", "stop a"}; !slices.Equal(j.get(), want) {
		t.Errorf("events = %v, want %v", j.get(), want)
	}
}

// cancelOnStart is a last component that begins shutdown once all started.
func cancelOnStart(cancel context.CancelFunc) Component {
	return Func("cancel on start", func(context.Context) error { cancel(); return nil }, nil)
}

// deadlineStopper reports its Stop ctx's deadline and, if block is set,
// blocks until that ctx is done.
type deadlineStopper struct {
	block     bool
	deadlines chan deadline
}

type deadline struct {
	at  time.Time
	set bool
}

func (d *deadlineStopper) Start(context.Context) error { return nil }

func (d *deadlineStopper) Stop(ctx context.Context) error {
	at, set := ctx.Deadline()
	d.deadlines <- deadline{at, set}
	if !d.block {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func TestRunShutdownTimeout(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		block   bool // only with a short timeout: blocking waits it out
		want    time.Duration
	}{
		{"blocking stop ends at the deadline", 50 * time.Millisecond, true, 50 * time.Millisecond},
		{"zero means default", 0, false, DefaultShutdownTimeout},
		{"negative means default", -time.Second, false, DefaultShutdownTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &deadlineStopper{block: tt.block, deadlines: make(chan deadline, 1)}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			before := time.Now()
			err := run(ctx, nil, tt.timeout, nil, []Component{d, cancelOnStart(cancel)})
			after := time.Now()
			if tt.block && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("run error = %v, want DeadlineExceeded from Stop", err)
			}
			if !tt.block && err != nil {
				t.Errorf("run: %v", err)
			}
			got := <-d.deadlines
			if !got.set {
				t.Fatal("Stop ctx had no deadline")
			}
			// The deadline was computed between before and after: assert on
			// it, not on how long run took.
			if got.at.Before(before.Add(tt.want)) || got.at.After(after.Add(tt.want)) {
				t.Errorf("Stop deadline %v not within [%v, %v] + %s", got.at, before, after, tt.want)
			}
		})
	}
}

// stuckStopper ignores its ctx in Stop until released.
type stuckStopper struct {
	release chan struct{}
	calls   chan struct{}
}

func (s *stuckStopper) Start(context.Context) error { return nil }

func (s *stuckStopper) Stop(context.Context) error {
	s.calls <- struct{}{}
	<-s.release
	return nil
}

func TestRunAbandonsStuckStop(t *testing.T) {
	j := &journal{}
	stuck := &stuckStopper{release: make(chan struct{}), calls: make(chan struct{}, 1)}
	defer close(stuck.release)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a := &recorder{name: "a", j: j, stopped: make(chan struct{})}
	err := run(ctx, nil, 20*time.Millisecond, nil, []Component{a, stuck, cancelOnStart(cancel)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run error = %v, want the stuck component reported", err)
	}
	// The earlier component is still told to stop once the stuck one is
	// abandoned, though past the deadline Run need not wait for it.
	<-a.stopped
	if want := []string{"start a", "stop a"}; !slices.Equal(j.get(), want) {
		t.Errorf("events = %v, want %v", j.get(), want)
	}
}

func TestRunSecondSignalForcesReturn(t *testing.T) {
	stuck := &stuckStopper{release: make(chan struct{}), calls: make(chan struct{}, 1)}
	defer close(stuck.release)
	sig := make(chan os.Signal)
	done := make(chan error, 1)
	started := make(chan struct{})
	last := Func("last", func(context.Context) error { close(started); return nil }, nil)
	go func() { done <- run(t.Context(), nil, time.Hour, sig, []Component{stuck, last}) }()
	<-started
	sig <- syscall.SIGTERM
	<-stuck.calls // shutdown has begun and Stop is stuck
	sig <- syscall.SIGINT
	if err := <-done; !errors.Is(err, ErrForcedShutdown) {
		t.Fatalf("run error = %v, want ErrForcedShutdown", err)
	}
}

// TestRunRealSignal sends SIGTERM to the test process: Run has registered for
// it before any Start is called, so the process is not killed.
func TestRunRealSignal(t *testing.T) {
	j := &journal{}
	started := make(chan struct{})
	r := &recorder{name: "a", j: j, started: started}
	go func() {
		<-started
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}()
	if err := Run(t.Context(), nil, time.Second, r); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := []string{"start a", "stop a"}; !slices.Equal(j.get(), want) {
		t.Errorf("events = %v, want %v", j.get(), want)
	}
}
