// Package extractsettings holds a corpus's extraction settings: the entity types the
// model may use, a description of the corpus's domain, worked examples and an optional
// replacement of the extraction system prompt. Settings are validated as a whole,
// stored under a version number in the pipeline's state bucket
// (schema.ExtractionSettingsKey) and read by the extractor for every chunk it extracts
// with a model; the extraction event records the version it was prompted with.
//
// Changing the settings re-extracts nothing: Reindex publishes the chunks of every
// indexed document of a corpus again, so that the extractor extracts them under the
// current settings and the grapher replaces each chunk's contribution (a chunk merged
// again replaces its earlier extraction). Propose asks a chat model for settings from
// a sample of a corpus's passages. docs/adr/0068-extraction-settings-per-corpus.md
// records the choices.
package extractsettings
