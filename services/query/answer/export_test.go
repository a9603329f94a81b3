package answer

import "github.com/graphrag/graphrag/services/query/evidence"

// ReduceReservation is what the map budget holds back for the reduce call before any
// map call: its system prompt and its prompt without partial answers.
func ReduceReservation(q string) int {
	return estimateTokens(reduceSystem) + estimateTokens(reducePrompt(q, nil, Style{}))
}

// MapReservation is what the map budget reserves to map report c: its prompt and a full
// partial answer in the reduce prompt.
func MapReservation(c evidence.Community, q string, mapMaxTokens int) int {
	return estimateTokens(mapSystem) + estimateTokens(mapPrompt(c, q)) + mapMaxTokens + perPartial
}
