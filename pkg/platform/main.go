package platform

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/KimMachineGun/automemlimit/memlimit"

	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/pkg/telemetry"
)

// Version is stamped at build time (-ldflags "-X .../platform.Version=...").
var Version = "dev"

// EnvPrefix prefixes the environment variables of every flag: -nats-url is GRAPHRAG_NATS_URL.
const EnvPrefix = "GRAPHRAG"

// Spec describes one service process for Main.
type Spec struct {
	Name  string
	Needs Needs
	// Flags registers the service's own flags (values captured by the caller).
	Flags func(fs *flag.FlagSet)
	// Config is the service's config struct. When it has a Validate method (every
	// service's Config does), Main calls it after parsing and Tune, with the common and
	// backend flags' own, and fails before anything starts.
	Config any
	// Build creates the service's components once the backends are open. mux already
	// serves /healthz, /readyz and /metrics; a service may add routes.
	Build func(ctx context.Context, p *Platform, mux *http.ServeMux, log *slog.Logger) ([]service.Component, error)
	// Tune adjusts the parsed flags before validation (e.g. a default that depends on
	// another flag); optional.
	Tune func(c *service.CommonFlags, b *BackendFlags)
}

// Main is the whole life of a service process: flags and env, logging, telemetry,
// backends, the HTTP server (health, readiness, metrics, service routes), the service's
// components, and graceful shutdown on SIGINT/SIGTERM. mains are one call to it.
func Main(ctx context.Context, args []string, stderr io.Writer, spec Spec) error {
	var common service.CommonFlags
	var backend BackendFlags
	fs := flag.NewFlagSet(spec.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	service.RegisterConfigFlag(fs)
	common.Register(fs)
	backend.Register(fs, spec.Needs)
	if spec.Flags != nil {
		spec.Flags(fs)
	}
	if err := service.ParseFlags(fs, args, EnvPrefix); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if spec.Tune != nil {
		spec.Tune(&common, &backend)
	}
	if err := validate(&common, &backend, spec.Config); err != nil {
		return service.WithSources(fs, err)
	}
	if common.CPUProfile != "" {
		stop, err := StartCPUProfile(common.CPUProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	log := common.Logger(stderr).With("service", spec.Name)
	SetMemoryLimit(log, memlimit.FromCgroup)
	tcfg := common.TelemetryConfig("graphrag-"+spec.Name, Version)
	tcfg.Logger = log // export failures as structured lines, not the SDK's plain text
	tel, err := telemetry.Setup(ctx, tcfg)
	if err != nil {
		return fmt.Errorf("setting up telemetry: %w", err)
	}
	defer func() { _ = tel.Shutdown(context.WithoutCancel(ctx)) }()
	service.LogFlags(log, fs) //nolint:contextcheck // one log line at start: nothing in ctx to carry

	p, err := Open(ctx, common, backend, spec.Needs, "graphrag-"+spec.Name, log)
	if err != nil {
		return err
	}
	defer func() { _ = p.Close() }()
	if common.HeapProfile != "" {
		HeapProfileOnSignal(ctx, common.HeapProfile, log)
		// Before the stores close (deferred calls run last first): their memory counts.
		defer func() {
			if err := WriteHeapProfile(common.HeapProfile); err != nil {
				log.Error("heap profile not written", "err", err)
			}
		}()
	}
	mux := service.NewMux(p.Health, tel)
	comps, err := spec.Build(ctx, p, mux, log)
	if err != nil {
		return err
	}
	// The HTTP server starts first (liveness answers during start-up) and stops last.
	all := append([]service.Component{service.HTTPServerWithLimits(common.HTTPAddr, mux, common.HTTPLimits())}, comps...)
	if common.DrainDelay > 0 { // stopped first: readiness fails while everything still serves
		all = append(all, service.NewDrain(p.Health, common.DrainDelay))
	}
	return service.Run(ctx, log, common.ShutdownTimeout, all...)
}

// validate reports every invalid flag of a process at once: the common ones, the
// backends' and, when it has a Validate method, the service's config's.
func validate(common *service.CommonFlags, backend *BackendFlags, cfg any) error {
	errs := []error{common.Validate(), backend.Validate()}
	if v, ok := cfg.(interface{ Validate() error }); ok {
		errs = append(errs, v.Validate())
	}
	return errors.Join(errs...)
}
