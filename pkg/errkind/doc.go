// Package errkind gives the platform's errors one small set of kinds, so that the code
// deciding what a failure means (the HTTP API choosing a status, the bus choosing
// between a retry and a dead letter) asks for a kind instead of listing every
// package's sentinel.
//
// A package keeps its own sentinels, with their names and messages, and makes each a
// value of a kind with New or Public; errors.Is matches them as before. Wrap and Errorf
// give any error a kind without changing its message or what it wraps.
//
// Kinds, and who reads them:
//   - NotFound, Invalid, Conflict: what the caller asked for is absent, malformed, or
//     raced another writer. A transport answers them (404, 400, 409) only for Public
//     errors: a store's NotFound speaks to the code that called the store, and reaching
//     a client untranslated it is a failure of the service.
//   - Unavailable: a dependency is down; the bus naks the message and never
//     dead-letters it for that, and the HTTP API answers a Public one with 503.
//   - Permanent: retrying cannot help; the bus dead-letters the message at once.
//
// An error type of another package takes part by implementing ErrorKind() Kind, and,
// for a Public kind, PublicKind() bool returning true.
//
// The bus reads Unavailable and Permanent anywhere in an error's chain (Is), as
// errors.Is did before. pkg/bus makes errors of those two kinds for the pipeline, and
// the store drivers make Unavailable ones with Down: a DependencyError names the store
// that is down, which the HTTP API may say (503) where it may not say the cause.
package errkind
