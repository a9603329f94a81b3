// Package service is the runtime every GraphRAG service process shares: config from
// flags, environment and the settings file (ParseFlags, RegisterConfigFlag, CommonFlags,
// Secret; WriteSettings writes the file `graphrag init` gives, whose keys, embedded as
// settings.yaml, are the only ones a file may hold), validation that names the
// flag of each invalid value (Problems, ConfigError), the effective configuration
// logged once (LogFlags), health and readiness probes (Health), an HTTP mux with
// /healthz, /readyz and /metrics (NewMux), and a lifecycle runner (Run) that starts
// Components in order and, on a signal, context cancellation or the first component
// failure, stops them in reverse order within a shutdown deadline.
//
// No main calls these one by one: pkg/platform's Main does, in this order: register
// -config, the common flags, the flags of the backends the process needs and the
// service's own; ParseFlags (flags, then environment, then the settings file); Validate
// them all, failing before anything starts (WithSources names the file's line of a bad
// value); LogFlags, with where each value came from; open the
// backends; NewMux; Run the HTTP server and the service's components. A main stays
// thin (services/extractor/cmd/extractor):
//
//	func run(ctx context.Context, args []string) error {
//		cfg := extractor.DefaultConfig()
//		return platform.Main(ctx, args, os.Stderr, platform.Spec{
//			Name:   "extractor",
//			Needs:  platform.Needs{Bus: true, Model: true, Vectors: vectordrivers.All()},
//			Flags:  func(fs *flag.FlagSet) { cfg.RegisterFlags(fs) },
//			Config: &cfg, // its Validate runs after parsing
//			Build: func(_ context.Context, p *platform.Platform, _ *http.ServeMux, log *slog.Logger) ([]service.Component, error) {
//				s, err := extractor.New(cfg, extractor.Deps{Bus: p.Bus, Vectors: p.Vectors, Embedder: p.Embedder, LLM: p.LLM, Logger: log})
//				return []service.Component{s}, err
//			},
//		})
//	}
//
// Nothing here calls os.Exit or log.Fatal: errors are returned to main, which prints
// them and exits 1.
package service
