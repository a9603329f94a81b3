// Package proccpu reads the CPU time the process has used, for benchmarks that
// compare runs on shared machines and for `graphrag eval`'s report: CPU time (user and
// system, all threads, so the garbage collector's work counts) varies less with other
// processes' load than wall time does.
package proccpu
