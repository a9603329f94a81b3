package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/graphrag/graphrag/pkg/leiden"
	"github.com/graphrag/graphrag/pkg/leiden/internal/edgelist"
	"github.com/graphrag/graphrag/pkg/proccpu"
	"github.com/graphrag/graphrag/pkg/wgraph"
)

// request is one command of the serve protocol, one JSON object per line.
type request struct {
	Op   string `json:"op"`   // "load" or "run"
	Path string `json:"path"` // load: edge list
	// run: options on top of the defaults (nil keeps the default).
	Seed          *uint64  `json:"seed"`
	MaxIterations *int     `json:"max_iterations"`
	Tolerance     *float64 `json:"tolerance"`
	Membership    string   `json:"membership"` // run: file for the final partition, one id per line
	Repeat        int      `json:"repeat"`     // run: consecutive calls timed together (default 1)
}

type response struct {
	Error       string  `json:"error,omitempty"`
	Nodes       int     `json:"nodes,omitempty"`
	Edges       int     `json:"edges,omitempty"`
	Seconds     float64 `json:"seconds,omitempty"`     // wall time per call
	CPUSeconds  float64 `json:"cpu_seconds,omitempty"` // process CPU time per call (all threads, GC included)
	Iterations  int     `json:"iterations,omitempty"`
	Communities int     `json:"communities,omitempty"`
	Modularity  float64 `json:"modularity,omitempty"` // pkg/leiden's own figure, for a cross-check
}

// serve answers requests until in ends. A failed request gets an error
// response; only I/O failures end the loop.
func serve(ctx context.Context, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	enc := json.NewEncoder(out)
	var g *wgraph.Graph
	for sc.Scan() {
		var req request
		var resp response
		var err error
		if err = json.Unmarshal(sc.Bytes(), &req); err == nil {
			switch req.Op {
			case "load":
				g, err = edgelist.ReadFile(req.Path)
				if err == nil {
					resp.Nodes, resp.Edges = g.N(), g.EdgeCount()
				}
			case "run":
				resp, err = runLeiden(ctx, g, req)
			default:
				err = fmt.Errorf("unknown op %q", req.Op)
			}
		}
		if err != nil {
			resp = response{Error: err.Error()}
		}
		if err := enc.Encode(resp); err != nil {
			return fmt.Errorf("writing response: %w", err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading requests: %w", err)
	}
	return nil
}

// runLeiden times req.Repeat consecutive leiden.Run calls on the loaded graph
// (after a GC, so that earlier garbage is not charged to them) and writes the
// final partition; equal options give equal partitions.
func runLeiden(ctx context.Context, g *wgraph.Graph, req request) (response, error) {
	if g == nil {
		return response{}, errors.New("run before load")
	}
	var opts []leiden.Option
	if req.Seed != nil {
		opts = append(opts, leiden.WithSeed(*req.Seed))
	}
	if req.MaxIterations != nil {
		opts = append(opts, leiden.WithMaxIterations(*req.MaxIterations))
	}
	if req.Tolerance != nil {
		opts = append(opts, leiden.WithTolerance(*req.Tolerance))
	}
	calls := max(req.Repeat, 1)
	runtime.GC()
	cpu := proccpu.Used()
	start := time.Now()
	var res leiden.Result
	for range calls {
		var err error
		if res, err = leiden.Run(ctx, g, opts...); err != nil {
			return response{}, fmt.Errorf("running leiden: %w", err)
		}
	}
	elapsed := time.Since(start) / time.Duration(calls)
	cpu = (proccpu.Used() - cpu) / time.Duration(calls)
	top := res.Levels[len(res.Levels)-1]
	if req.Membership != "" {
		if err := writeMembership(req.Membership, top.Membership); err != nil {
			return response{}, err
		}
	}
	return response{Seconds: elapsed.Seconds(), CPUSeconds: cpu.Seconds(), Iterations: res.Iterations, Communities: top.Count,
		Modularity: res.Modularity[len(res.Modularity)-1]}, nil
}

func writeMembership(path string, membership []int) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing membership: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	w := bufio.NewWriter(f)
	var b []byte
	for _, c := range membership {
		b = strconv.AppendInt(b[:0], int64(c), 10)
		b = append(b, '\n')
		_, _ = w.Write(b) // bufio keeps the first error; Flush returns it
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing membership %s: %w", path, err)
	}
	return nil
}
