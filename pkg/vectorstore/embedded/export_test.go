package embedded

// CheckOpenIndex is checkOpenIndex for the external tests (conformance,
// crash recovery).
var CheckOpenIndex = checkOpenIndex
