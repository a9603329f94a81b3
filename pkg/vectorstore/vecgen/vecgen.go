package vecgen

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

// Config shapes a corpus. The zero value is not useful; start from Default.
type Config struct {
	Dim          int
	ChunksPerDoc int     // chunks of one document, consecutive in the corpus
	DocsPerTopic int     // documents per topic on average
	Alpha        float64 // spectrum decay: variance of direction i ∝ i^-Alpha
	Mean         float64 // weight of the component all vectors share
	Topic        float64 // spread of topic centres
	Doc          float64 // spread of documents around their topic
	Chunk        float64 // spread of chunks around their document
	Query        float64 // spread of queries around their document
	Seed         uint64
}

// Default is calibrated on real sentence embeddings (see the package doc).
func Default(dim int) Config {
	return Config{Dim: dim, ChunksPerDoc: 7, DocsPerTopic: 10, Alpha: 0.6, Mean: 0.95, Topic: 0.06, Doc: 0.06, Chunk: 0.07, Query: 0.08, Seed: 1}
}

// Corpus is a generated collection of chunk vectors.
type Corpus struct {
	cfg     Config
	r       *rand.Rand
	shape   []float64 // per-direction standard deviation
	mean    []float64
	topics  [][]float64
	docs    [][]float64 // document centres (mean included)
	Vectors [][]float32 // unit vectors, chunks of a document consecutive
}

// New generates n chunk vectors.
func New(cfg Config, n int) *Corpus {
	c := &Corpus{cfg: cfg, r: rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))}
	c.shape = make([]float64, cfg.Dim)
	for i := range c.shape {
		c.shape[i] = math.Pow(float64(i+1), -cfg.Alpha/2)
	}
	c.mean = make([]float64, cfg.Dim)
	c.gauss(c.mean, 1, false)
	scale(c.mean, cfg.Mean/norm(c.mean))
	nDocs := (n + cfg.ChunksPerDoc - 1) / cfg.ChunksPerDoc
	c.topics = make([][]float64, max(1, nDocs/cfg.DocsPerTopic))
	for i := range c.topics {
		c.topics[i] = make([]float64, cfg.Dim)
		c.gauss(c.topics[i], cfg.Topic, true)
	}
	c.Vectors = make([][]float32, 0, n)
	c.Extend(n)
	return c
}

// Extend appends n chunk vectors of new documents on the corpus's topics.
func (c *Corpus) Extend(n int) {
	for end := len(c.Vectors) + n; len(c.Vectors) < end; {
		d := make([]float64, c.cfg.Dim)
		c.gauss(d, c.cfg.Doc, true)
		t := c.topics[c.r.IntN(len(c.topics))]
		for i := range d {
			d[i] += t[i] + c.mean[i]
		}
		c.docs = append(c.docs, d)
		for k := 0; k < c.cfg.ChunksPerDoc && len(c.Vectors) < end; k++ {
			c.Vectors = append(c.Vectors, c.chunk(d))
		}
	}
}

// Queries returns k questions about documents of the corpus: points around
// a document, a little farther from its chunks than they are from each
// other, as real questions are.
func (c *Corpus) Queries(k int) [][]float32 {
	out := make([][]float32, k)
	for i := range out {
		out[i] = c.around(c.docs[c.r.IntN(len(c.docs))], c.cfg.Query)
	}
	return out
}

func (c *Corpus) chunk(doc []float64) []float32 { return c.around(doc, c.cfg.Chunk) }

func (c *Corpus) around(doc []float64, spread float64) []float32 {
	v := make([]float64, len(doc))
	c.gauss(v, spread, true)
	for i := range v {
		v[i] += doc[i]
	}
	inv := 1 / norm(v)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x * inv)
	}
	return out
}

// gauss fills v with Gaussian noise of standard deviation sd, shaped by the
// spectrum when shaped is set.
func (c *Corpus) gauss(v []float64, sd float64, shaped bool) {
	for i := range v {
		s := sd
		if shaped {
			s *= c.shape[i]
		}
		v[i] = c.r.NormFloat64() * s
	}
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func scale(v []float64, f float64) {
	for i := range v {
		v[i] *= f
	}
}

// LoadF32 reads vectors of dim float32 values each, stored back to back in
// little-endian order, and normalizes them.
func LoadF32(path string, dim int) ([][]float32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading vectors: %w", err)
	}
	if dim <= 0 || len(b)%(4*dim) != 0 {
		return nil, fmt.Errorf("reading vectors: %s holds %d bytes, not a whole number of %d-d float32 vectors", path, len(b), dim)
	}
	out := make([][]float32, len(b)/(4*dim))
	for i := range out {
		v := make([]float64, dim)
		for j := range v {
			v[j] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[(i*dim+j)*4:])))
		}
		n := norm(v)
		if n == 0 {
			return nil, fmt.Errorf("reading vectors: vector %d of %s is zero", i, path)
		}
		out[i] = make([]float32, dim)
		for j, x := range v {
			out[i][j] = float32(x / n)
		}
	}
	return out, nil
}
