// Package calltrace records the calls of a client (a store, say) once for every
// driver: each call is a span of the global tracer provider and three measurements of
// the global meter provider, its count, its failures by error kind (errkind) and its
// duration. The graph and vector store wrappers (graphstore.Validating,
// vectorstore.Validating) record every call through it, so all stores' calls have the
// same span attributes and metric names, prefixed by the client's name.
package calltrace
