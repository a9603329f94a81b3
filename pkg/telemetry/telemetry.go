package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphrag/graphrag/pkg/errkind"
)

// ErrInvalidConfig is returned by Setup for a Config it cannot use.
var ErrInvalidConfig = errkind.New(errkind.Invalid, "telemetry: invalid config")

// DefaultMetricInterval is how often metrics are pushed over OTLP.
const DefaultMetricInterval = 30 * time.Second

// DefaultShutdownTimeout bounds Shutdown when its context has no earlier deadline:
// with a collector that cannot be reached, the last flush must not hold the process.
const DefaultShutdownTimeout = 5 * time.Second

// ErrShutdownTimeout is reported by Shutdown when the flush did not finish in time; the
// exports still under way were cut off.
var ErrShutdownTimeout = errors.New("telemetry: shutdown timed out; pending spans and metrics were dropped")

// Config says how a process reports telemetry.
type Config struct {
	// ServiceName is the service.name resource attribute (required).
	ServiceName string
	// ServiceVersion is the service.version resource attribute.
	ServiceVersion string
	// OTLPEndpoint is an OTLP/gRPC collector as host:port or as a URL
	// (http:// implies an insecure connection). Empty disables OTLP export:
	// spans are still created and sampled, so logs carry trace ids.
	OTLPEndpoint string
	// OTLPInsecure disables TLS (an http:// endpoint URL implies it).
	OTLPInsecure bool
	// SampleRatio is the fraction of new root traces sampled, in [0, 1].
	// Zero means 1 (sample everything): an unset field must not silently
	// drop every trace. Child spans follow their parent's decision.
	SampleRatio float64
	// ExportTimeout bounds each OTLP export, retries included; zero keeps
	// the exporters' default (10s). Shutdown returns when its context ends,
	// but an export already under way runs on until this timeout.
	ExportTimeout time.Duration
	// MetricInterval is the OTLP metric push period; zero means
	// DefaultMetricInterval. Prometheus scrapes are pulled and unaffected.
	MetricInterval time.Duration
	// ShutdownTimeout bounds Shutdown (DefaultShutdownTimeout when 0).
	ShutdownTimeout time.Duration
	// Logger receives, as structured warnings, the errors the OpenTelemetry SDK
	// reports in the background (a collector that cannot be reached); nil: the
	// slog default logger. They are never printed as plain text.
	Logger *slog.Logger
}

// Telemetry owns the providers Setup installed. Its zero value is not usable.
type Telemetry struct {
	tracerProvider  *sdktrace.TracerProvider
	meterProvider   *sdkmetric.MeterProvider
	registry        *prometheus.Registry
	shutdownTimeout time.Duration
	// exporters are the OTLP exporters' Shutdown functions: called with an ended
	// context, they cut off the exports under way.
	exporters []func(context.Context) error

	shutdownOnce sync.Once
	shutdownErr  error
}

// Setup builds the tracer and meter providers described by cfg and installs
// them, with the W3C TraceContext and Baggage propagators, as the otel
// globals. Call Shutdown to flush and release them.
func Setup(ctx context.Context, cfg Config) (*Telemetry, error) {
	if cfg.ServiceName == "" {
		return nil, fmt.Errorf("%w: ServiceName is required", ErrInvalidConfig)
	}
	if cfg.SampleRatio < 0 || cfg.SampleRatio > 1 {
		return nil, fmt.Errorf("%w: SampleRatio %v is outside [0, 1]", ErrInvalidConfig, cfg.SampleRatio)
	}
	ratio := cfg.SampleRatio
	if ratio == 0 {
		ratio = 1
	}
	interval := cfg.MetricInterval
	if interval <= 0 {
		interval = DefaultMetricInterval
	}

	attrs := []attribute.KeyValue{semconv.ServiceName(cfg.ServiceName)}
	if cfg.ServiceVersion != "" {
		attrs = append(attrs, semconv.ServiceVersion(cfg.ServiceVersion))
	}
	// Explicit attributes come last so they win over OTEL_RESOURCE_ATTRIBUTES.
	res, err := resource.New(ctx,
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attrs...),
	)
	if err != nil {
		return nil, fmt.Errorf("building telemetry resource: %w", err)
	}

	// Exporters hold gRPC connections: release those already made if a
	// later step fails.
	var cleanups []func(context.Context) error
	fail := func(err error) (*Telemetry, error) {
		for _, c := range cleanups {
			err = errors.Join(err, c(ctx))
		}
		return nil, err
	}

	traceOpts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))),
	}
	if cfg.OTLPEndpoint != "" {
		exp, err := otlptracegrpc.New(ctx, traceExporterOptions(cfg)...)
		if err != nil {
			return fail(fmt.Errorf("creating OTLP trace exporter for %s: %w", cfg.OTLPEndpoint, err))
		}
		cleanups = append(cleanups, exp.Shutdown)
		traceOpts = append(traceOpts, sdktrace.WithBatcher(exp))
	}

	// A private registry, so tests and several Setup calls never collide on
	// the global one, and /metrics shows exactly what this process records.
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return fail(fmt.Errorf("registering Go runtime collector: %w", err))
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return fail(fmt.Errorf("registering process collector: %w", err))
	}
	promExp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return fail(fmt.Errorf("creating Prometheus exporter: %w", err))
	}
	meterOpts := []sdkmetric.Option{
		sdkmetric.WithResource(res),
		sdkmetric.WithReader(promExp),
	}
	if cfg.OTLPEndpoint != "" {
		exp, err := otlpmetricgrpc.New(ctx, metricExporterOptions(cfg)...)
		if err != nil {
			return fail(fmt.Errorf("creating OTLP metric exporter for %s: %w", cfg.OTLPEndpoint, err))
		}
		cleanups = append(cleanups, exp.Shutdown)
		meterOpts = append(meterOpts, sdkmetric.WithReader(
			sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(interval))))
	}

	t := &Telemetry{
		tracerProvider:  sdktrace.NewTracerProvider(traceOpts...),
		meterProvider:   sdkmetric.NewMeterProvider(meterOpts...),
		registry:        reg,
		shutdownTimeout: cfg.ShutdownTimeout,
		exporters:       cleanups,
	}
	if t.shutdownTimeout <= 0 {
		t.shutdownTimeout = DefaultShutdownTimeout
	}
	otel.SetErrorHandler(errorLogger(cfg.Logger))
	otel.SetTracerProvider(t.tracerProvider)
	otel.SetMeterProvider(t.meterProvider)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(
		propagation.TraceContext{}, propagation.Baggage{}))
	return t, nil
}

func isURL(endpoint string) bool { return strings.Contains(endpoint, "://") }

func traceExporterOptions(cfg Config) []otlptracegrpc.Option {
	var opts []otlptracegrpc.Option
	if isURL(cfg.OTLPEndpoint) {
		opts = append(opts, otlptracegrpc.WithEndpointURL(cfg.OTLPEndpoint))
	} else {
		opts = append(opts, otlptracegrpc.WithEndpoint(cfg.OTLPEndpoint))
	}
	if cfg.OTLPInsecure {
		opts = append(opts, otlptracegrpc.WithInsecure())
	}
	if cfg.ExportTimeout > 0 {
		opts = append(opts, otlptracegrpc.WithTimeout(cfg.ExportTimeout))
	}
	return opts
}

func metricExporterOptions(cfg Config) []otlpmetricgrpc.Option {
	var opts []otlpmetricgrpc.Option
	if isURL(cfg.OTLPEndpoint) {
		opts = append(opts, otlpmetricgrpc.WithEndpointURL(cfg.OTLPEndpoint))
	} else {
		opts = append(opts, otlpmetricgrpc.WithEndpoint(cfg.OTLPEndpoint))
	}
	if cfg.OTLPInsecure {
		opts = append(opts, otlpmetricgrpc.WithInsecure())
	}
	if cfg.ExportTimeout > 0 {
		opts = append(opts, otlpmetricgrpc.WithTimeout(cfg.ExportTimeout))
	}
	return opts
}

// TracerProvider returns the provider Setup installed globally.
func (t *Telemetry) TracerProvider() trace.TracerProvider { return t.tracerProvider }

// MeterProvider returns the provider Setup installed globally.
func (t *Telemetry) MeterProvider() metric.MeterProvider { return t.meterProvider }

// Registry returns the private Prometheus registry behind MetricsHandler,
// for collectors that are not OpenTelemetry instruments.
func (t *Telemetry) Registry() *prometheus.Registry { return t.registry }

// MetricsHandler serves the process's metrics in the Prometheus exposition
// format. A nil *Telemetry serves 404, so callers need not special-case it.
func (t *Telemetry) MetricsHandler() http.Handler {
	if t == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{Registry: t.registry})
}

// errorLogger sends the SDK's background errors (failed exports) to logger, or to the
// slog default logger when it is nil, as structured warnings.
func errorLogger(logger *slog.Logger) otel.ErrorHandler {
	return otel.ErrorHandlerFunc(func(err error) {
		l := logger
		if l == nil {
			l = slog.Default()
		}
		l.Warn("opentelemetry export failed", slog.String("component", "telemetry"), slog.Any("err", err))
	})
}

// Shutdown flushes pending spans and metrics and releases the exporters, within ctx
// and at most the configured shutdown timeout: past it, the exports under way are cut
// off and the error matches ErrShutdownTimeout. It is safe to call more than once;
// later calls return the first call's result.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.shutdownOnce.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, t.shutdownTimeout)
		defer cancel()
		var traceErr, meterErr error
		var wg sync.WaitGroup
		// Both flush at once: the bound is for the whole, not for each.
		wg.Go(func() { traceErr = t.tracerProvider.Shutdown(ctx) })
		wg.Go(func() { meterErr = t.meterProvider.Shutdown(ctx) })
		wg.Wait()
		var errs []error
		if traceErr != nil {
			errs = append(errs, fmt.Errorf("shutting down tracer provider: %w", traceErr))
		}
		if meterErr != nil {
			errs = append(errs, fmt.Errorf("shutting down meter provider: %w", meterErr))
		}
		if ctx.Err() != nil {
			// The providers returned, but their exports may still be waiting for the
			// collector: an exporter shut down with an ended context cancels them.
			ended, end := context.WithCancel(context.WithoutCancel(ctx))
			end()
			for _, stop := range t.exporters {
				_ = stop(ended)
			}
			errs = append(errs, fmt.Errorf("%w (after %s)", ErrShutdownTimeout, t.shutdownTimeout))
		}
		t.shutdownErr = errors.Join(errs...)
	})
	return t.shutdownErr
}
