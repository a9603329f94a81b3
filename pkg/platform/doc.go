// Package platform wires the backends a service runs on from its flags: the NATS
// connection and the pipeline topology, the graph store, the vector store, the LLM client
// with its shared response cache, and the embedder (the LLM endpoint's embeddings, or the
// offline embedder). It registers a readiness check per backend and closes everything in
// reverse order. It holds no business logic: the services get plain interfaces.
//
// It imports no store driver and no NATS server. A main passes, in Needs, the drivers its
// service uses (packages graphdrivers and vectordrivers) and, for `graphrag up` only, an
// embedded NATS server (package natsserver), so that each binary links only those
// (docs/adr/0016-binaries-link-their-drivers.md). The same Needs decide which backend
// flags a binary registers: only those of the backends it uses. Main reads the settings
// file of -config (GRAPHRAG_CONFIG) after the flags and the environment, validates every
// flag before anything opens, and logs the effective configuration once
// (docs/adr/0052-configuration-is-validated-not-repaired.md,
// docs/adr/0061-one-settings-file-for-every-binary.md).
package platform
