package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestBinariesLinkOnlyTheirDrivers guards docs/adr/0016: each service binary links the
// store drivers its service uses and no NATS server; only this CLI links everything.
func TestBinariesLinkOnlyTheirDrivers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const (
		natsServer = "github.com/nats-io/nats-server/v2/server"
		neo4j      = "github.com/neo4j/neo4j-go-driver/v5/neo4j"
		milvus     = "github.com/graphrag/graphrag/pkg/vectorstore/milvusstore"
		bolt       = "github.com/graphrag/graphrag/pkg/graphstore/boltgraph"
		vectors    = "github.com/graphrag/graphrag/pkg/vectorstore/embedded"
	)
	cases := []struct {
		main          string
		want, notWant []string
	}{
		{"../../services/extractor/cmd/extractor", []string{milvus, vectors}, []string{natsServer, neo4j, bolt}},
		{"../../services/grapher/cmd/grapher", []string{milvus, vectors, neo4j, bolt}, []string{natsServer}},
		{"../../services/summarizer/cmd/summarizer", []string{milvus, vectors, neo4j, bolt}, []string{natsServer}},
		{"../../services/query/cmd/query", []string{milvus, vectors, neo4j, bolt}, []string{natsServer}},
		{".", []string{natsServer, milvus, vectors, neo4j, bolt}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.main, func(t *testing.T) {
			out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", tc.main).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", tc.main, err)
			}
			deps := strings.Fields(string(out))
			for _, p := range tc.want {
				if !slices.Contains(deps, p) {
					t.Errorf("does not link %s", p)
				}
			}
			for _, p := range tc.notWant {
				if slices.Contains(deps, p) {
					t.Errorf("links %s", p)
				}
			}
		})
	}
}
