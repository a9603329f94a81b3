// Package monitoring holds no code: its tests check the monitoring assets beside it, the
// Prometheus alert rules (prometheus/alerts.yaml, with promtool's unit tests in
// prometheus/alerts_test.yaml) and the Grafana dashboard (grafana/graphrag.json), with
// promtool (Debian's prometheus package), and check that every metric they use is one
// docs/operations.md documents.
package monitoring
