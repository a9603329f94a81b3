//go:build !integration

// The integration run counts every skipped test as a failure, and this one needs a
// dataset the repository does not hold: it is left out there (the integration tests
// cover the HotpotQA deletion through GRAPHRAG_TEST_HOTPOTQA in
// lifecycle_integration_test.go) and runs by hand, e.g.
// GRAPHRAG_TEST_HOTPOTQA=../shared/datasets/hotpotqa go test -run TestDeleteAndRestoreHotpotQA .

package main

import (
	"os"
	"testing"
)

// TestDeleteAndRestoreHotpotQA does the same on the HotpotQA development set
// (GRAPHRAG_TEST_HOTPOTQA names its directory, e.g. ../shared/datasets/hotpotqa): it
// deletes one passage that is no question's gold passage and checks 20 questions whose
// gold passages are elsewhere.
func TestDeleteAndRestoreHotpotQA(t *testing.T) {
	dir := os.Getenv("GRAPHRAG_TEST_HOTPOTQA")
	if dir == "" {
		t.Skip("GRAPHRAG_TEST_HOTPOTQA is not set (the development set is not in the repository)")
	}
	docs, qs := readDataset(t, dir)
	p := testPlatform(t, t.TempDir())
	st := startStack(t, p, coldConfig()) // deleteAndRestore compares communities
	deleteAndRestore(t, p, st, "hotpot", docs, qs, func(d corpusDump) string { return sharingVictim(d, qs) })
}
