package httpapi

import (
	"context"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/graphstore/neo4jgraph"
	"github.com/graphrag/graphrag/pkg/vectorstore"
	"github.com/graphrag/graphrag/pkg/vectorstore/milvusstore"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// neo4jDown is the error a Neo4j graph store returns for a server that refuses
// connections: the driver's own types, classified by the driver.
func neo4jDown() error {
	return neo4jgraph.Unavailable(&neo4j.TransactionExecutionLimit{Cause: "timeout (exceeded max retry time: 30s)",
		Errors: []error{&neo4j.ConnectivityError{Inner: &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 7687}, Err: syscall.ECONNREFUSED}}}})
}

// downGraph is a graph store whose server is down: every read the engine makes fails.
type downGraph struct{ graphstore.Store }

func (downGraph) Entity(context.Context, string, string) (graphstore.Entity, error) {
	return graphstore.Entity{}, neo4jDown()
}

func (downGraph) Entities(context.Context, string, []string, ...graphstore.ReadOption) ([]graphstore.Entity, error) {
	return nil, neo4jDown()
}

func (downGraph) RelationshipsOf(context.Context, string, []string, int) ([]graphstore.Relationship, error) {
	return nil, neo4jDown()
}

func (downGraph) RelationshipsAmong(context.Context, string, []string, ...graphstore.ReadOption) ([]graphstore.Relationship, error) {
	return nil, neo4jDown()
}

func (downGraph) ChunkEntities(context.Context, string, []string) (map[string][]string, error) {
	return nil, neo4jDown()
}

func (downGraph) Neighborhood(context.Context, string, []string, int, int) ([]graphstore.Neighbor, error) {
	return nil, neo4jDown()
}

func (downGraph) Communities(context.Context, string, int) ([]graphstore.Community, error) {
	return nil, neo4jDown()
}

func (downGraph) Stats(context.Context, string) (graphstore.Stats, error) {
	return graphstore.Stats{}, neo4jDown()
}

// downVectors is a Milvus vector store whose server is down, with the gRPC client's
// error classified by the driver.
type downVectors struct{ vectorstore.Store }

func milvusDown() error {
	return milvusstore.Unavailable(status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 10.1.2.3:19530: connect: connection refused"`))
}

func (downVectors) Search(context.Context, string, []float32, int, vectorstore.Filter) ([]vectorstore.Hit, error) {
	return nil, milvusDown()
}

func (downVectors) SearchText(context.Context, string, string, int, vectorstore.Filter) ([]vectorstore.Hit, error) {
	return nil, milvusDown()
}

func (downVectors) Get(context.Context, string, []string) ([]vectorstore.Record, error) {
	return nil, milvusDown()
}

func (downVectors) Count(context.Context, string) (int, error) { return 0, milvusDown() }

// A query while a store is down answers 503 with Retry-After, naming the store that is
// down in the API's words and nothing of the driver's error (no address, no type), on
// the query, retrieve and chat routes.
func TestHTTPStoreOutageIs503(t *testing.T) {
	st := querytest.Demo(t)
	for _, tc := range []struct {
		name, dependency string
		graph            graphstore.Store
		vectors          vectorstore.Store
	}{
		{"graph store", graphstore.Dependency, downGraph{st.Graph}, st.Vectors},
		{"vector store", vectorstore.Dependency, st.Graph, downVectors{st.Vectors}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serveEngine(t, DefaultConfig(), engine.Deps{Graph: tc.graph, Vectors: tc.vectors, Embedder: st.Embedder}, nil)
			for _, path := range []string{"/v1/query", "/v1/retrieve"} {
				resp, body := call(t, srv, http.MethodPost, path, "", `{"corpus":"demo","query":"Who designed the Analytical Engine?","mode":"local"}`)
				if resp.StatusCode != http.StatusServiceUnavailable {
					t.Fatalf("%s: status %d, body %s: want 503", path, resp.StatusCode, body)
				}
				if ra := resp.Header.Get("Retry-After"); ra != retryAfterUnavailable {
					t.Errorf("%s: Retry-After %q, want %q", path, ra, retryAfterUnavailable)
				}
				msg := apiErrorOf(t, resp, body)
				if !strings.HasPrefix(msg, "the "+tc.dependency+" is unavailable") {
					t.Errorf("%s: error %q, want the %s named", path, msg, tc.dependency)
				}
				for _, internal := range []string{"10.1.2.3", "Connectivity", "connection refused", "TransactionExecutionLimit", "grpc", "transport"} {
					if strings.Contains(msg, internal) {
						t.Errorf("%s: error %q says %q", path, msg, internal)
					}
				}
				checkAPITerms(t, body)
			}
			resp, body := call(t, srv, http.MethodPost, "/v1/chat/completions", "",
				`{"model":"demo","messages":[{"role":"user","content":"Who designed the Analytical Engine?"}]}`)
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != retryAfterUnavailable ||
				!strings.Contains(string(body), "the "+tc.dependency+" is unavailable") || strings.Contains(string(body), "10.1.2.3") {
				t.Errorf("chat: status %d, Retry-After %q, body %s: want 503 naming the %s", resp.StatusCode, resp.Header.Get("Retry-After"), body, tc.dependency)
			}
		})
	}
}
