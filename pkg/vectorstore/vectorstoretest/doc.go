// Package vectorstoretest is the conformance suite every vectorstore driver
// must pass (the embedded driver now, Milvus later). A driver's test calls Run
// with a constructor and a Features value saying what the backend supports.
package vectorstoretest
