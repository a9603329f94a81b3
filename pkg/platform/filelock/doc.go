// Package filelock tells which process holds the lock on a file: the embedded stores
// (bbolt files) admit one process, and "timeout" is all bbolt says when another holds
// one. On Linux it reads /proc/locks and the holder's command line; elsewhere it knows
// nothing, and callers fall back to waiting for the lock.
package filelock
