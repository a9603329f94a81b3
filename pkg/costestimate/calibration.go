package costestimate

// Most of the estimate is computed, not calibrated: the chunks, the extraction prompts
// (package prompts rendered on each chunk), the graph the offline extractor finds in
// them (what the counting endpoint of pkg/llm/llmtest answers with), its description
// summaries, entity texts and communities (package community, with the grapher's
// defaults) and the report contexts rendered from them. What no graph tells is how long
// a model's report is; these ratios were measured by running graphrag eval against the
// counting endpoints (chatcount, embedcount) on MuSiQue and HotpotQA
// (docs/benchmarks.md, "Cost estimate before indexing").
const (
	// reportAnswerTokens: completion tokens of one report (measured 424 and 425 a call).
	reportAnswerTokens = 424
	// reportTextPerAnswer: embedding tokens of a report's full text per completion
	// token of its answer (measured 362 and 360 a report, so 0.85).
	reportTextPerAnswer = 0.85
	// extractiveReportText: embedding tokens of an extractive report (no chat model;
	// 597,621 tokens for 2,412 MuSiQue reports).
	extractiveReportText = 248
	// summaryPerFull: a report's title and summary per token of its full text, with
	// -report-embed summary (136 and 134 tokens a report against 362 and 360);
	// extractiveSummaryPerFull the same of an extractive report (328,449 against
	// 597,621 tokens on MuSiQue).
	summaryPerFull           = 0.375
	extractiveSummaryPerFull = 0.55
	// reportTextsPerRequest: report texts of one embedding request. The summarizer
	// writes reports in groups and embeds a group at a time; measured 13.3 to 14.0.
	reportTextsPerRequest = 13.5
)
