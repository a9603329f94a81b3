package llm_test

import (
	"context"
	"fmt"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/llm/llmtest"
)

func Example() {
	srv := llmtest.NewServer() // stands in for OpenAI, vLLM, Ollama...
	defer srv.Close()

	c, err := llm.New(llm.Config{BaseURL: srv.URL(), ChatModel: "gpt-4o-mini", EmbedModel: "text-embedding-3-small"},
		llm.WithCache(llm.NewMemoryCache(10_000)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	ctx := llm.ContextWithStage(context.Background(), "query")
	for range 2 {
		resp, err := c.Chat(ctx, llm.ChatRequest{System: "Answer briefly.", User: "What is GraphRAG?"})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(resp.Content, "cached:", resp.Cached)
	}
	vecs, err := c.Embed(ctx, []string{"a chunk", "another chunk"})
	if err != nil {
		fmt.Println(err)
		return
	}
	u := c.Usage()
	fmt.Println(len(vecs), "vectors; calls:", u.Calls, "cache hits:", u.CacheHits)
	// Output:
	// echo: What is GraphRAG? cached: false
	// echo: What is GraphRAG? cached: true
	// 2 vectors; calls: 2 cache hits: 1
}
