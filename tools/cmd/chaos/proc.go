package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/graphrag/graphrag/pkg/natsembed"
)

// proc is a supervised process: started again after every exit it did not ask for
// (a kill -9, a start that failed because NATS was down), after restartDelay, as a
// Kubernetes Deployment or systemd would.
type proc struct {
	name    string
	bin     string
	args    []string
	logPath string
	// ready reports whether the process serves (its NATS port, /readyz).
	ready func(ctx context.Context) bool
	// restartDelay is how long a process stays down after it exited.
	restartDelay func() time.Duration

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd has exited
	stopping bool
	starts   int
	cpu      time.Duration // user and system time of every exited process
	done     chan struct{} // closed when supervision ends
}

// start runs the process and supervises it until stop.
func (p *proc) start() error {
	p.done = make(chan struct{})
	exited, err := p.launch()
	if err != nil {
		close(p.done)
		return err
	}
	go p.supervise(exited)
	return nil
}

// launch starts the process; the channel is closed when it has exited.
func (p *proc) launch() (chan struct{}, error) {
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log of %s: %w", p.name, err)
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = cleanEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	fmt.Fprintf(logf, "=== chaos: starting %s at %s\n", p.name, time.Now().Format(time.RFC3339Nano))
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("starting %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		p.mu.Lock()
		p.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		p.mu.Unlock()
		close(exited)
	}()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.starts++
	p.mu.Unlock()
	return exited, nil
}

// supervise waits for the process to exit and starts it again unless it is stopping.
func (p *proc) supervise(exited chan struct{}) {
	defer close(p.done)
	for {
		<-exited
		if p.isStopping() {
			return
		}
		time.Sleep(p.restartDelay())
		if p.isStopping() {
			return
		}
		next, err := p.launch()
		for err != nil {
			time.Sleep(time.Second)
			next, err = p.launch()
		}
		exited = next
		if p.isStopping() {
			// stop may have read the previous process: end this one here.
			p.mu.Lock()
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			p.mu.Unlock()
			<-exited
			return
		}
	}
}

func (p *proc) isStopping() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopping
}

// kill sends SIGKILL: no shutdown code runs; the supervisor starts it again. It
// reports false when the process was not running (it is down, waiting for its restart).
func (p *proc) kill() bool {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return false
	}
	select {
	case <-exited:
		return false
	default:
	}
	return cmd.Process.Kill() == nil
}

// stop ends supervision and the process: SIGTERM, then SIGKILL after grace.
func (p *proc) stop(grace time.Duration) error {
	p.mu.Lock()
	p.stopping = true
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		<-p.done
		return nil
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within %s of SIGTERM", p.name, grace)
	}
}

// waitReady waits until the process serves.
func (p *proc) waitReady(ctx context.Context) error {
	for !p.ready(ctx) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (log %s)", p.name, ctx.Err(), p.logPath)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// restarts is how many times the process was started again.
func (p *proc) restarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(p.starts-1, 0)
}

// cpuTime is the CPU time (user and system) of the process's runs that have exited.
func (p *proc) cpuTime() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cpu
}

// cleanEnv is the environment without GRAPHRAG_ variables, which processes would read
// as flags.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GRAPHRAG_") {
			env = append(env, kv)
		}
	}
	return env
}

// freePort picks a free loopback port.
func freePort() (int, error) {
	ports, err := natsembed.FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// listening reports whether something accepts connections on addr.
func listening(addr string) func(context.Context) bool {
	return func(context.Context) bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	}
}

// readyz reports whether the process's /readyz answers 200.
func readyz(addr string) func(context.Context) bool { return httpOK("http://" + addr + "/readyz") }

// healthz reports whether a NATS server's monitoring endpoint says it is healthy: with
// JetStream, current with its cluster's meta group and with every stream and consumer it
// holds a replica of.
func healthz(addr string) func(context.Context) bool { return httpOK("http://" + addr + "/healthz") }

// httpOK reports whether a GET of url answers 200 within 2 s.
func httpOK(url string) func(context.Context) bool {
	return func(ctx context.Context) bool {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}
