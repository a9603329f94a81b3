package llm

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// embedKey is the content address of one text's embedding.
func embedKey(model, text string) string {
	h := sha256.New()
	h.Write([]byte("v1\x00" + model + "\x00"))
	h.Write([]byte(text))
	return "embed." + hex.EncodeToString(h.Sum(nil))
}

// Vectors are cached as little-endian float32s: 4 bytes a dimension.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte) ([]float32, bool) {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil, false
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, true
}

// Embed returns one vector per text, in the order of texts. Cached texts are
// not sent; identical texts are sent once; the rest go in batches of
// Config.EmbedBatchSize, concurrently within the client's limits. Any failed
// batch fails the call.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.cfg.EmbedModel == "" {
		return nil, fmt.Errorf("%w: no EmbedModel configured", ErrInvalidConfig)
	}
	stage := stageOf(ctx, "")
	out := make([][]float32, len(texts))
	keys := make([]string, len(texts))
	pending := make(map[string][]int) // text -> positions still without a vector
	var todo []string                 // distinct texts to send, first-seen order
	hits := 0
	for i, t := range texts {
		keys[i] = embedKey(c.cfg.EmbedModel, t)
		if idx, seen := pending[t]; seen {
			pending[t] = append(idx, i)
			continue
		}
		if b, ok := c.cacheGet(ctx, keys[i]); ok {
			if v, ok := decodeVector(b); ok {
				out[i] = v
				hits++
				continue
			}
		}
		pending[t] = []int{i}
		todo = append(todo, t)
	}
	c.recordHits(ctx, "embed", stage, hits)
	if len(todo) == 0 {
		return out, nil
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for start := 0; start < len(todo); start += c.cfg.EmbedBatchSize {
		batch := todo[start:min(start+c.cfg.EmbedBatchSize, len(todo))]
		wg.Go(func() {
			vecs, err := c.embedBatch(ctx, stage, batch)
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
					cancel() // the call fails anyway: stop spending on it
				}
				mu.Unlock()
				return
			}
			// Each text belongs to one batch, so batches write disjoint
			// elements of out; pending is only read here.
			for j, t := range batch {
				for _, i := range pending[t] {
					out[i] = vecs[j]
				}
				c.cachePut(ctx, keys[pending[t][0]], encodeVector(vecs[j]))
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	c.noteDimension(out)
	return out, nil
}

func (c *Client) embedBatch(ctx context.Context, stage string, batch []string) ([][]float32, error) {
	chars := 0
	for _, t := range batch {
		chars += len(t)
	}
	est := estimateTokens(chars)
	start := time.Now()
	var vecs [][]float32
	var usage openai.Usage
	_, err := c.do(ctx, callSpec{kind: "embed", stage: stage, estTokens: est}, func(actx context.Context) error {
		resp, err := c.embedAPI.CreateEmbeddings(actx, openai.EmbeddingRequestStrings{
			Input: batch, Model: openai.EmbeddingModel(c.cfg.EmbedModel),
		})
		if err != nil {
			return err
		}
		v, err := orderEmbeddings(resp.Data, len(batch))
		if err != nil {
			return err
		}
		vecs, usage = v, resp.Usage
		return nil
	})
	c.recordCall(ctx, "embed", stage, start, usage.PromptTokens, 0, err)
	c.reconcileTokens(est, usage.TotalTokens)
	return vecs, err
}

// orderEmbeddings places each returned vector by its index: the API does not
// promise to answer in input order.
func orderEmbeddings(data []openai.Embedding, n int) ([][]float32, error) {
	if len(data) != n {
		return nil, badResponse{fmt.Sprintf("embeddings: got %d vectors for %d inputs", len(data), n)}
	}
	out := make([][]float32, n)
	dim := -1
	for _, e := range data {
		if e.Index < 0 || e.Index >= n || out[e.Index] != nil {
			return nil, badResponse{fmt.Sprintf("embeddings: bad or repeated index %d", e.Index)}
		}
		if len(e.Embedding) == 0 || (dim >= 0 && len(e.Embedding) != dim) {
			return nil, badResponse{fmt.Sprintf("embeddings: vector %d has dimension %d", e.Index, len(e.Embedding))}
		}
		dim = len(e.Embedding)
		out[e.Index] = e.Embedding
	}
	return out, nil
}

func (c *Client) noteDimension(vecs [][]float32) {
	if len(vecs) == 0 || len(vecs[0]) == 0 {
		return
	}
	c.dimMu.Lock()
	defer c.dimMu.Unlock()
	if c.dim == 0 {
		c.dim = len(vecs[0])
	}
}

// Dimension returns the embedding dimension of EmbedModel, from the first
// successful Embed or, failing that, one probe call. It is remembered; a
// failed probe is not, so a later call tries again.
func (c *Client) Dimension(ctx context.Context) (int, error) {
	c.dimMu.Lock()
	d := c.dim
	c.dimMu.Unlock()
	if d > 0 {
		return d, nil
	}
	vecs, err := c.Embed(ctx, []string{"dimension probe"})
	if err != nil {
		return 0, fmt.Errorf("probing embedding dimension: %w", err)
	}
	return len(vecs[0]), nil
}
