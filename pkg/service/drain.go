package service

import (
	"context"
	"errors"
	"time"
)

// ErrDraining is what /readyz reports for a process that received SIGTERM and is
// waiting out its drain delay.
var ErrDraining = errors.New("shutting down: draining")

// Drain is the first component to stop: it fails readiness, then waits delay before the
// other components (the HTTP server among them) stop. A load balancer takes a moment to
// stop routing to a process that is terminating (Kubernetes removes a terminating pod's
// endpoint asynchronously, kube-proxy and ingresses follow a little later); a listener
// closed at once refuses the requests sent in that moment. Put it last in Run's list,
// as Run stops components in reverse order.
type Drain struct {
	health *Health
	delay  time.Duration
}

// NewDrain returns the drain component for health's readiness and delay (> 0).
func NewDrain(health *Health, delay time.Duration) *Drain {
	return &Drain{health: health, delay: delay}
}

// Name names the component in logs.
func (d *Drain) Name() string { return "drain" }

// Start does nothing: the delay only matters at shutdown.
func (d *Drain) Start(context.Context) error { return nil }

// Stop fails readiness and waits the delay, or less if ctx ends first.
func (d *Drain) Stop(ctx context.Context) error {
	d.health.AddReadiness("shutdown", func(context.Context) error { return ErrDraining })
	t := time.NewTimer(d.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}
