// Package graphstoretest is the conformance suite every graphstore.Store driver
// must pass (the embedded boltgraph driver, later Neo4j). A driver's test calls Run
// with a constructor for fresh stores and a Features value saying what the backend
// supports, in the manner of watermill's pubsub tests.
package graphstoretest
