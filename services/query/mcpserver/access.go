package mcpserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/graphrag/graphrag/services/query/access"
)

// grantInfo is where the grant travels in the SDK's token info (GrantMiddleware).
const grantInfo = "graphrag.grant"

// GrantMiddleware hands the grant the HTTP guard put in a request's context
// (access.WithGrant) to the tools, through the SDK's bearer-token info: the SDK gives a
// tool call the token info of its HTTP request. Without a grant (authentication off)
// the request passes unchanged and every tool is allowed.
func GrantMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g, ok := access.FromContext(r.Context())
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		verify := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
			return &auth.TokenInfo{Scopes: []string{g.String()}, Extra: map[string]any{grantInfo: g}}, nil
		}
		auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next).ServeHTTP(w, r)
	})
}

// withGrant returns ctx with the grant of the request's token, when it has one.
func withGrant(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req == nil || req.Extra == nil || req.Extra.TokenInfo == nil {
		return ctx
	}
	if g, ok := req.Extra.TokenInfo.Extra[grantInfo].(access.Grant); ok {
		return access.WithGrant(ctx, g)
	}
	return ctx
}

// check refuses a tool call on a corpus the client's token may not read.
func (t *tools) check(ctx context.Context, req *mcp.CallToolRequest, corpus string) error {
	if err := access.Check(withGrant(ctx, req), corpus, access.Read, "read"); err != nil {
		return fmt.Errorf("refused: %w", err)
	}
	return nil
}
