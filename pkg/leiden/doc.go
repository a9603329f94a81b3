// Package leiden finds hierarchical communities in an undirected weighted graph
// with the Leiden algorithm of Traag, Waltman & van Eck (2019), "From Louvain
// to Leiden: guaranteeing well-connected communities", Sci. Rep. 9:5233.
//
// Each pass runs the queue-based fast local moving of nodes, refines every
// community by randomised merging of well-connected singletons (the θ
// "randomness" of the paper), and aggregates the graph on the refined partition
// while the unrefined partition seeds the next pass. Passes repeat until no
// node moves; whole iterations repeat, starting from the previous result, until
// one changes nothing or MaxIterations (default 2, as igraph and leidenalg) is
// reached: later iterations cost about as much and gain little modularity.
//
// The refined partitions of the final iteration nest into one another, so they
// form the hierarchy returned: level 0 is the finest (the refined partition of
// the first pass), the last level is the final Leiden partition, and every
// community has a parent one level up. Every community at every level is
// connected; this is verified and, should it ever fail, repaired by splitting.
//
// WithInitialMembership starts the first iteration from a given partition instead
// of singletons (leidenalg's initial_membership): re-run on a grown graph from the
// previous result, Leiden keeps the communities of the regions that did not change.
//
// Runs are deterministic: the only randomness comes from a PCG generator seeded
// with the Seed option, and community ids are numbered by their smallest node.
package leiden
