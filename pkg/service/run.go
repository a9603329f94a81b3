package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"
)

// Component is one long-lived part of a service: a consumer, a server.
//
// Start must return once the component is taking work; work that outlives
// Start runs in goroutines the component owns. The ctx passed to Start is
// cancelled when shutdown begins, so a slow Start can be aborted; a component
// whose work must outlive that (to drain it in Stop) derives its own context
// with context.WithoutCancel and cancels it in Stop.
//
// Stop stops taking new work and drains work in flight, returning when done
// or when ctx (carrying the shutdown deadline) is done. Stop may be called
// more than once and must then do nothing harmful.
type Component interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Failer is implemented by components that can fail after Start returned (a
// server whose listener dies, a loop that returns an error). Run begins
// shutdown on the first error received from any Failed channel.
type Failer interface {
	Failed() <-chan error
}

// Namer is implemented by components that have a name for logs and errors;
// other components are named by their type.
type Namer interface {
	Name() string
}

// ErrForcedShutdown is returned by Run when a second signal arrived before
// the components finished stopping.
var ErrForcedShutdown = errors.New("forced shutdown by second signal")

// SignalError is the cause Run records when a signal started the shutdown.
type SignalError struct{ Signal os.Signal }

func (e SignalError) Error() string { return "received signal " + e.Signal.String() }

// Run starts components in order, then waits for SIGINT or SIGTERM, for ctx
// to be cancelled, or for the first component failure (see Failer). It then
// stops the started components in reverse order, all within shutdownTimeout
// (DefaultShutdownTimeout when <= 0), and returns the start or run failure
// joined with every stop error: nil after a clean shutdown by signal or
// cancellation. A component whose Stop overruns the deadline is abandoned and
// reported; the ones after it are still told to stop, with the expired
// context, but Run no longer waits for them. A second signal makes Run return ErrForcedShutdown at once,
// leaving whatever is still stopping behind, for main to exit.
func Run(ctx context.Context, logger *slog.Logger, shutdownTimeout time.Duration, components ...Component) error {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	return run(ctx, logger, shutdownTimeout, sig, components)
}

// run is Run with the signal source injected, so tests need not signal the
// test binary.
func run(ctx context.Context, logger *slog.Logger, shutdownTimeout time.Duration, sig <-chan os.Signal, components []Component) error {
	for i, c := range components {
		if c == nil {
			return fmt.Errorf("running service: component %d is nil", i)
		}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if shutdownTimeout <= 0 {
		shutdownTimeout = DefaultShutdownTimeout
	}

	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)

	// The watcher turns the first signal into a cancellation and the second
	// into a forced return; it exits when the lifecycle is over.
	finished := make(chan struct{})
	forced := make(chan os.Signal, 1)
	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		select {
		case s := <-sig:
			cancelRun(SignalError{Signal: s})
		case <-finished:
			return
		}
		select {
		case s := <-sig:
			forced <- s
		case <-finished:
		}
	}()

	result := make(chan error, 1)
	go func() {
		result <- lifecycle(ctx, runCtx, cancelRun, logger, shutdownTimeout, components)
	}()

	select {
	case err := <-result:
		close(finished)
		<-watcherDone
		return err
	case s := <-forced:
		close(finished)
		<-watcherDone
		logger.Error("second signal, exiting without waiting for components to stop", slog.String("signal", s.String()))
		return ErrForcedShutdown
	}
}

type componentFailure struct {
	name string
	err  error
}

func lifecycle(parent, runCtx context.Context, cancelRun context.CancelCauseFunc, logger *slog.Logger, shutdownTimeout time.Duration, components []Component) error {
	failures := make(chan componentFailure, len(components))
	watchDone := make(chan struct{})
	defer close(watchDone)

	var (
		started []Component
		runErr  error
	)
	for _, c := range components {
		if runCtx.Err() != nil {
			break // shutdown was requested while earlier components started
		}
		name := componentName(c)
		logger.Debug("starting component", slog.String("component", name))
		if err := c.Start(runCtx); err != nil {
			runErr = fmt.Errorf("starting %s: %w", name, err)
			logger.Error("component failed to start", slog.String("component", name), slog.Any("err", err))
			break
		}
		started = append(started, c)
		if f, ok := c.(Failer); ok {
			go watchFailure(name, f.Failed(), failures, watchDone)
		}
		logger.Info("component started", slog.String("component", name))
	}

	if runErr == nil && runCtx.Err() == nil {
		select {
		case <-runCtx.Done():
		case f := <-failures:
			runErr = fmt.Errorf("%s failed: %w", f.name, f.err)
			logger.Error("component failed", slog.String("component", f.name), slog.Any("err", f.err))
		}
	}
	// Shutdown begins: cancel the context Start calls received, whatever the
	// reason, as Component documents. A no-op when a signal or the parent
	// already cancelled it.
	if runErr != nil {
		cancelRun(runErr)
	}
	cancelRun(context.Canceled)
	logger.Info("shutting down", slog.String("reason", context.Cause(runCtx).Error()))

	// The stop context keeps the parent's values but not its cancellation:
	// the parent is usually what just got cancelled.
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(parent), shutdownTimeout)
	defer cancel()
	errs := []error{runErr}
	for _, c := range slices.Backward(started) {
		name := componentName(c)
		if err := stopWithin(stopCtx, c); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", name, err))
			logger.Error("component failed to stop cleanly", slog.String("component", name), slog.Any("err", err))
			continue
		}
		logger.Info("component stopped", slog.String("component", name))
	}
	return errors.Join(errs...)
}

func watchFailure(name string, ch <-chan error, failures chan<- componentFailure, done <-chan struct{}) {
	select {
	case err, ok := <-ch:
		if ok && err != nil {
			failures <- componentFailure{name: name, err: err}
		}
	case <-done:
	}
}

// stopWithin calls c.Stop(ctx) but returns no later than ctx's deadline, so a
// component that ignores its context cannot hold the whole shutdown hostage.
func stopWithin(ctx context.Context, c Component) error {
	done := make(chan error, 1)
	go func() { done <- c.Stop(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		select {
		case err := <-done: // it made it after all
			return err
		default:
			return fmt.Errorf("abandoned at shutdown deadline: %w", context.Cause(ctx))
		}
	}
}

func componentName(c Component) string {
	if n, ok := c.(Namer); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", c)
}
