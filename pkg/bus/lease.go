package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrLeaseLost is the cause a Lease reports when it could not be renewed: another
// holder took it, or the bucket could not be reached for too long.
var ErrLeaseLost = errors.New("lease lost")

// ErrLeaseHeld is returned by AcquireLease with NoWait when another holder has the key.
var ErrLeaseHeld = errors.New("lease held by another process")

// Lease is an exclusive, expiring claim on one key of a key-value bucket whose
// entries expire (EnsureKV with a TTL; Bus.AcquireLease): the holder writes the key with
// compare-and-set and renews it every fifteenth of the bucket's TTL; if it stops
// renewing (a crash, a partition), the server expires the key and another
// process can take it. The lease counts itself lost once it has failed to
// renew for half the TTL (noticed within two thirds), before the server can
// expire the key, so two holders never believe they hold it at once unless a
// process stalls for a third of the TTL. Renewing often makes the lease outlive
// any outage of the bucket shorter than two fifths of the TTL, wherever it falls
// between renewals: on a cluster, the time the servers take to elect a new leader
// for the bucket after its leader died. It is not a fencing token: writes already
// under way when the lease is lost still land.
type Lease struct {
	kv     jetstream.KeyValue
	key    string
	holder string
	ttl    time.Duration
	log    *slog.Logger

	mu   sync.Mutex
	rev  uint64
	lost chan struct{}
	err  error

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// LeaseOptions name a lease and its holder.
type LeaseOptions struct {
	// Key is the lease's key in the bucket.
	Key string
	// Holder identifies this process in the key's value (logged by contenders). It
	// must be unique: a key holding it at a revision the lease did not see written
	// is taken for one of the lease's own renewals whose answer was lost.
	Holder string
	// Poll is how often a contender tries again (default: a fifth of the TTL, at most 1 s).
	Poll time.Duration
	// Logger receives "waiting" and "lost" messages (default slog.Default()).
	Logger *slog.Logger
	// NoWait makes AcquireLease return ErrLeaseHeld at once instead of waiting while
	// another holder has the key (one of many leases a process takes what it can of).
	NoWait bool
}

// AcquireLease blocks until it holds the lease on opts.Key in the key-value
// bucket, or ctx ends. The bucket must exist (ErrNotFound) and have a TTL: it is
// the lease's duration.
func (b *Bus) AcquireLease(ctx context.Context, bucket string, opts LeaseOptions) (*Lease, error) {
	if opts.Key == "" || opts.Holder == "" {
		return nil, fmt.Errorf("%w: a lease needs a key and a holder", ErrInvalidSpec)
	}
	kv, err := b.keyValue(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w", opts.Key, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("lease %s: reading bucket: %w", opts.Key, err)
	}
	ttl := st.TTL()
	if ttl <= 0 {
		return nil, fmt.Errorf("%w: lease %s: bucket %s has no TTL", ErrInvalidSpec, opts.Key, st.Bucket())
	}
	poll := opts.Poll
	if poll <= 0 {
		poll = min(ttl/5, time.Second)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	l := &Lease{kv: kv, key: opts.Key, holder: opts.Holder, ttl: ttl, log: log,
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	var waitingFor string
	for {
		rev, err := kv.Create(ctx, opts.Key, []byte(opts.Holder))
		if err == nil {
			l.rev = rev
			break
		}
		if errors.Is(err, jetstream.ErrKeyExists) && opts.NoWait {
			return nil, fmt.Errorf("lease %s: %w", opts.Key, ErrLeaseHeld)
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("lease %s: %w", opts.Key, ctx.Err())
			}
			log.Warn("lease: cannot reach the bucket; trying again", "key", opts.Key, "err", err)
		} else if e, gerr := kv.Get(ctx, opts.Key); gerr == nil && string(e.Value()) != waitingFor {
			waitingFor = string(e.Value())
			log.Info("lease: held by another process; waiting", "key", opts.Key, "holder", waitingFor, "expires_within", ttl)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lease %s: %w", opts.Key, ctx.Err())
		case <-time.After(poll):
		}
	}
	log.Info("lease: acquired", "key", opts.Key, "holder", opts.Holder, "ttl", ttl)
	// The lease outlives the call that acquired it: renewals keep ctx's values, not its cancellation.
	go l.renew(context.WithoutCancel(ctx), time.Now())
	return l, nil
}

// Lost is closed when the lease is lost; Err then says why.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Err is nil while the lease is held or after Release, else wraps ErrLeaseLost.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// TTL is the lease's duration (the bucket's TTL).
func (l *Lease) TTL() time.Duration { return l.ttl }

// isWrongLastSequence reports a failed compare-and-set (code 10071, or 10164 on
// replicated streams).
func isWrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// renew rewrites the key once a fifteenth of the TTL has passed since the last
// renewal, checking every thirtieth; after failing to renew for half the TTL it
// declares the lease lost, at most two thirds of the TTL after the last
// renewal the server saw (an attempt waits up to a sixth), so before the server
// can expire the key.
func (l *Lease) renew(ctx context.Context, last time.Time) {
	defer close(l.done)
	tick := time.NewTicker(l.ttl / 30)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		if time.Since(last) < l.ttl/15 {
			continue
		}
		sent := time.Now()
		rctx, cancel := context.WithTimeout(ctx, l.ttl/6)
		l.mu.Lock()
		rev := l.rev
		l.mu.Unlock()
		next, err := l.kv.Update(rctx, l.key, []byte(l.holder), rev)
		cancel()
		switch {
		case err == nil:
			l.mu.Lock()
			l.rev = next
			l.mu.Unlock()
			last = sent
		case errors.Is(err, jetstream.ErrKeyRevisionMismatch) && l.stillOwn(ctx):
			// The key still holds this holder: an earlier renewal whose answer never
			// came (lost in a leader election or a reconnection) was written after all,
			// and the next one goes from its revision; or a new stream leader refused
			// the write before it caught up. Neither is counted as a renewal: when it
			// was written is unknown, so the half-TTL rule below still applies.
			if time.Since(last) >= l.ttl/2 {
				l.fail(fmt.Errorf("%w: %s: not renewed for %s: %w", ErrLeaseLost, l.key, time.Since(last).Round(time.Millisecond), err))
				return
			}
		case errors.Is(err, jetstream.ErrKeyRevisionMismatch), errors.Is(err, jetstream.ErrKeyNotFound):
			// Expired (and perhaps taken) or overwritten: someone else may hold it now.
			l.fail(fmt.Errorf("%w: %s: %w", ErrLeaseLost, l.key, err))
			return
		case time.Since(last) >= l.ttl/2:
			l.fail(fmt.Errorf("%w: %s: not renewed for %s: %w", ErrLeaseLost, l.key, time.Since(last).Round(time.Millisecond), err))
			return
		default:
			l.log.Warn("lease: renewal failed; trying again", "key", l.key, "err", err)
		}
	}
}

// stillOwn reports whether the key holds this holder, and takes the revision it holds
// as the lease's own when it is not the one the lease last saw written.
func (l *Lease) stillOwn(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, l.ttl/6)
	defer cancel()
	e, err := l.kv.Get(ctx, l.key)
	if err != nil || string(e.Value()) != l.holder {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.Revision() != l.rev {
		l.log.Info("lease: a renewal whose answer was lost was written; going on from it", "key", l.key, "revision", e.Revision())
		l.rev = e.Revision()
	}
	return true
}

func (l *Lease) fail(err error) {
	l.mu.Lock()
	l.err = err
	l.mu.Unlock()
	l.log.Error("lease: lost", "key", l.key, "err", err)
	close(l.lost)
}

// Release stops renewing and deletes the key if this holder still has it, so a
// successor need not wait for it to expire. Calling it again does nothing.
func (l *Lease) Release(ctx context.Context) error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		if l.Err() != nil {
			return
		}
		l.mu.Lock()
		rev := l.rev
		l.mu.Unlock()
		// A wrong last revision means the key expired or was taken meanwhile:
		// nothing of ours to delete.
		if derr := l.kv.Delete(ctx, l.key, jetstream.LastRevision(rev)); derr != nil && !isWrongLastSequence(derr) {
			err = fmt.Errorf("lease %s: releasing: %w", l.key, derr)
		}
	})
	return err
}
