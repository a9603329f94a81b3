// Package explore is the web console's read-model over the stores: the typeahead over
// a corpus's entity names (a key index built from a whole-graph snapshot, cached per
// corpus), an entity's neighbourhood and passages, one passage by id, and the community
// hierarchy with its reports. The HTTP API's exploration routes and the MCP explore tool
// serve it. An entity is asked for by name; a name a curation merged or renamed away
// (pkg/curation) answers with the entity it is now when the Reader has the corpus's
// curated aliases (WithAliases).
//
// It reads the graph and vector stores through its own reader interfaces and never the
// query engine: browsing is not retrieval. It shares the engine's vocabulary (Entity,
// Relationship, the request errors) so that both answer in one JSON shape.
package explore
