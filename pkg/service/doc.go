// Package service is the runtime every GraphRAG service main shares: config
// from flags and environment (ParseFlags, CommonFlags, Secret, LogConfig),
// health and readiness probes (Health), an HTTP mux with /healthz, /readyz and
// /metrics (NewMux), and a lifecycle runner (Run) that starts Components in
// order and, on a signal, context cancellation or the first component failure,
// stops them in reverse order within a shutdown deadline.
//
// A main stays thin:
//
//	fs := flag.NewFlagSet("grapher", flag.ContinueOnError)
//	var common service.CommonFlags
//	common.Register(fs)
//	if err := service.ParseFlags(fs, os.Args[1:], "GRAPHER"); err != nil { ... }
//	logger := common.Logger(os.Stderr)
//	service.LogConfig(logger, common)
//	health := service.NewHealth()
//	mux := service.NewMux(health, tel)
//	return service.Run(ctx, logger, common.ShutdownTimeout,
//		consumer, service.HTTPServer(common.HTTPAddr, mux))
//
// Nothing here calls os.Exit or log.Fatal: errors are returned to main.
package service
