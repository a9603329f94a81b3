// Package platform wires the backends a service runs on from its flags: the NATS
// connection (an embedded server in the data directory when no URL is given), the
// pipeline topology, the graph store, the vector store, the LLM client with its shared
// response cache, and the embedder (the LLM endpoint's embeddings, or the offline
// embedder). It registers a readiness check per backend and closes everything in reverse
// order. It holds no business logic: the services get plain interfaces.
package platform
