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
// not sent; identical texts are sent once, also across the Embed calls that
// wait together (see embedLane); the rest go in batches of
// Config.EmbedBatchSize, concurrently within the client's limits. Any failed
// batch fails the call; the vectors of the batches that succeeded are cached.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, ct := startTrace(ctx, SpanEmbed, "embeddings", c.cfg.EmbedModel, stageOf(ctx, ""), AttrTexts.Int(len(texts)))
	out, err := c.embed(ctx, texts)
	ct.end(err)
	return out, err
}

func (c *Client) embed(ctx context.Context, texts []string) ([][]float32, error) {
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
	vecs, err := c.lane(stage).embed(ctx, c, stage, todo)
	// The cache is filled with this call's ctx: its scope marks whose content each
	// entry came from, even when another caller's call sent the text.
	for j, t := range todo {
		if vecs[j] == nil {
			continue
		}
		for _, i := range pending[t] {
			out[i] = vecs[j]
		}
		c.cachePut(ctx, keys[pending[t][0]], encodeVector(vecs[j]))
	}
	if err != nil {
		return nil, err
	}
	c.noteDimension(out)
	return out, nil
}

// embedLane coalesces the texts of concurrent Embed calls of one stage into shared
// requests (group commit): a call queues its texts and takes the lane; the call that
// holds it sends every text queued by then, each distinct text once, in batches of
// Config.EmbedBatchSize, and the calls whose texts it sent find their vectors when they
// get the lane. Nothing waits for a group to fill: a group is what queued while the
// previous one was sent, so a lone call is sent at once. Many small calls (a document of
// one chunk each, a few entities) become a few full batches: the endpoint answers a
// batch in about the time of one text of it, and a rate limit counts requests.
type embedLane struct {
	slot chan struct{} // held by the call sending a group

	mu    sync.Mutex
	queue []*embedReq
}

// embedReq is one call's texts waiting in a lane; vecs, err and done are set by the
// call that sends its group, before it releases the lane.
type embedReq struct {
	ctx   context.Context
	texts []string
	vecs  [][]float32
	err   error
	done  bool
	// shared says the group held other calls' texts too: a failure may not be this
	// call's, so it sends what is missing again alone.
	shared bool
}

func (c *Client) lane(stage string) *embedLane {
	c.lanesMu.Lock()
	defer c.lanesMu.Unlock()
	if c.lanes == nil {
		c.lanes = map[string]*embedLane{}
	}
	l, ok := c.lanes[stage]
	if !ok {
		l = &embedLane{slot: make(chan struct{}, 1)}
		c.lanes[stage] = l
	}
	return l
}

// embed returns the vectors of texts (distinct), sent alone or with the texts of the
// calls queued with them. On error, the vectors obtained are still returned (nil for
// the others).
func (l *embedLane) embed(ctx context.Context, c *Client, stage string, texts []string) ([][]float32, error) {
	req := &embedReq{ctx: ctx, texts: texts}
	l.mu.Lock()
	l.queue = append(l.queue, req)
	l.mu.Unlock()
	select {
	case l.slot <- struct{}{}:
	case <-ctx.Done():
		// Still queued: the next sender finds the ctx done and skips it.
		return make([][]float32, len(texts)), ctx.Err()
	}
	if !req.done {
		l.mu.Lock()
		group := l.queue
		l.queue = nil
		l.mu.Unlock()
		l.send(ctx, c, stage, group)
	}
	<-l.slot
	if req.err == nil || !req.shared {
		return req.vecs, req.err
	}
	// The group failed: maybe for another call's text (one the endpoint refuses) or the
	// sending call's ctx. Send what is missing alone, as without the lane.
	var missing []string
	var at []int
	for i, v := range req.vecs {
		if v == nil {
			missing = append(missing, texts[i])
			at = append(at, i)
		}
	}
	vecs, err := c.sendTexts(ctx, stage, missing)
	for j, i := range at {
		req.vecs[i] = vecs[j]
	}
	return req.vecs, err
}

// send sends the texts of a group's live calls, each distinct text once, with ctx (the
// sending call's), and sets every call's vectors and error. Called with the lane held.
func (l *embedLane) send(ctx context.Context, c *Client, stage string, group []*embedReq) {
	var live []*embedReq
	for _, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.vecs, r.err, r.done = make([][]float32, len(r.texts)), err, true
			continue
		}
		live = append(live, r)
	}
	at := map[string]int{}
	var todo []string
	for _, r := range live {
		for _, t := range r.texts {
			if _, ok := at[t]; !ok {
				at[t] = len(todo)
				todo = append(todo, t)
			}
		}
	}
	vecs, err := c.sendTexts(ctx, stage, todo)
	for _, r := range live {
		r.vecs = make([][]float32, len(r.texts))
		for i, t := range r.texts {
			r.vecs[i] = vecs[at[t]]
		}
		r.err, r.done, r.shared = err, true, len(live) > 1
	}
}

// sendTexts sends texts in batches of Config.EmbedBatchSize, concurrently within the
// client's limits, and returns their vectors. Any failed batch fails the call and stops
// the batches not yet sent; the vectors of those that succeeded are returned (nil for
// the others).
func (c *Client) sendTexts(ctx context.Context, stage string, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for start := 0; start < len(texts); start += c.cfg.EmbedBatchSize {
		batch := texts[start:min(start+c.cfg.EmbedBatchSize, len(texts))]
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
			// Batches write disjoint elements of out.
			copy(out[start:], vecs)
		})
	}
	wg.Wait()
	return out, firstErr
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
