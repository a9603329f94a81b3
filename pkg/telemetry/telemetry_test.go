package telemetry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func setup(t *testing.T, cfg Config) *Telemetry {
	t.Helper()
	tel, err := Setup(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	t.Cleanup(func() {
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return tel
}

func TestSetupValidation(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{"no service name", Config{}, true},
		{"negative ratio", Config{ServiceName: "x", SampleRatio: -0.1}, true},
		{"ratio above one", Config{ServiceName: "x", SampleRatio: 1.5}, true},
		{"zero ratio means all", Config{ServiceName: "x"}, false},
		{"half", Config{ServiceName: "x", SampleRatio: 0.5}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel, err := Setup(t.Context(), tt.cfg)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("Setup error = %v, want ErrInvalidConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Setup: %v", err)
			}
			if err := tel.Shutdown(t.Context()); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		})
	}
}

func TestSetupInstallsGlobals(t *testing.T) {
	tel := setup(t, Config{ServiceName: "globals"})
	if otel.GetTracerProvider() != tel.TracerProvider() {
		t.Error("global tracer provider is not the one Setup built")
	}
	if otel.GetMeterProvider() != tel.MeterProvider() {
		t.Error("global meter provider is not the one Setup built")
	}

	// Without an endpoint spans are still sampled, so they can be correlated.
	ctx, span := otel.Tracer("test").Start(t.Context(), "op")
	defer span.End()
	if !span.SpanContext().IsSampled() {
		t.Error("span not sampled with the default ratio")
	}

	carrier := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, carrier)
	if got := carrier.Get("traceparent"); !strings.Contains(got, span.SpanContext().TraceID().String()) {
		t.Errorf("traceparent = %q, want it to carry trace id %s", got, span.SpanContext().TraceID())
	}
}

func TestMetricsHandlerServesGlobalCounter(t *testing.T) {
	tel := setup(t, Config{ServiceName: "metrics-test", ServiceVersion: "v9"})

	counter, err := otel.Meter("github.com/graphrag/graphrag/pkg/telemetry/test").
		Int64Counter("graphrag_test_documents")
	if err != nil {
		t.Fatalf("creating counter: %v", err)
	}
	counter.Add(t.Context(), 3)

	srv := httptest.NewServer(tel.MetricsHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading /metrics: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want 200", resp.StatusCode)
	}
	for _, want := range []string{
		"graphrag_test_documents_total{",
		"} 3\n",
		"go_goroutines ", // Go runtime metrics from the private registry
		`service_name="metrics-test"`,
		`service_version="v9"`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
}

func TestNilTelemetry(t *testing.T) {
	var tel *Telemetry
	rec := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil MetricsHandler status = %d, want 404", rec.Code)
	}
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Errorf("nil Shutdown: %v", err)
	}
}

func TestShutdownTwice(t *testing.T) {
	tel, err := Setup(t.Context(), Config{ServiceName: "twice"})
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	for i := range 2 {
		if err := tel.Shutdown(t.Context()); err != nil {
			t.Fatalf("Shutdown call %d: %v", i+1, err)
		}
	}
}

// collector is an OTLP/gRPC receiver on loopback that records what arrives.
type collector struct {
	coltracepb.UnimplementedTraceServiceServer

	mu      sync.Mutex
	spans   []string
	metrics []string
}

func (c *collector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans = append(c.spans, s.GetName())
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// metricsReceiver is a separate type because both services name their RPC Export.
type metricsReceiver struct {
	colmetricpb.UnimplementedMetricsServiceServer
	c *collector
}

func (m *metricsReceiver) Export(_ context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, mt := range sm.GetMetrics() {
				m.c.metrics = append(m.c.metrics, mt.GetName())
			}
		}
	}
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

func startCollector(t *testing.T) (*collector, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listening: %v", err)
	}
	c := &collector{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, c)
	colmetricpb.RegisterMetricsServiceServer(srv, &metricsReceiver{c: c})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return c, lis.Addr().String()
}

func TestOTLPExport(t *testing.T) {
	tests := []struct {
		name     string
		endpoint func(addr string) string
		insecure bool
	}{
		{"host port insecure", func(a string) string { return a }, true},
		{"http url", func(a string) string { return "http://" + a }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, addr := startCollector(t)
			tel, err := Setup(t.Context(), Config{
				ServiceName:  "otlp-test",
				OTLPEndpoint: tt.endpoint(addr),
				OTLPInsecure: tt.insecure,
			})
			if err != nil {
				t.Fatalf("Setup: %v", err)
			}
			_, span := otel.Tracer("test").Start(t.Context(), "exported-span")
			span.End()
			counter, err := otel.Meter("test").Int64Counter("exported_counter")
			if err != nil {
				t.Fatalf("creating counter: %v", err)
			}
			counter.Add(t.Context(), 1)

			// Shutdown flushes both the batch span processor and the
			// periodic metric reader, so everything has arrived after it.
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			if err := tel.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if !contains(c.spans, "exported-span") {
				t.Errorf("collector spans = %v, want exported-span", c.spans)
			}
			if !contains(c.metrics, "exported_counter") {
				t.Errorf("collector metrics = %v, want exported_counter", c.metrics)
			}
		})
	}
}

func contains(list []string, s string) bool {
	return slices.Contains(list, s)
}

// TestShutdownUnreachableCollector: with nowhere to flush to, Shutdown gives
// up when its context ends instead of hanging, and reports it.
func TestShutdownUnreachableCollector(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listening: %v", err)
	}
	addr := lis.Addr().String()
	_ = lis.Close() // nothing listens there any more

	tel, err := Setup(t.Context(), Config{
		ServiceName: "unreachable", OTLPEndpoint: addr, OTLPInsecure: true,
		ExportTimeout: 100 * time.Millisecond, // so the abandoned export ends before goleak looks
	})
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	_, span := otel.Tracer("test").Start(t.Context(), "lost-span")
	span.End()

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := tel.Shutdown(ctx); err == nil {
		t.Error("Shutdown reported success with an unreachable collector")
	}
	if err := tel.Shutdown(t.Context()); err == nil {
		t.Error("second Shutdown should repeat the first result")
	}
}
