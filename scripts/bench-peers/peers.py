#!/usr/bin/env python3
"""Times pkg/leiden against python-igraph, leidenalg and graspologic-native.

Every implementation runs on the same edge lists in the same run, in rounds
that interleave the implementations (so that a change of machine load hits
all of them), one warm-up round first. Each times only its own call, inside
its own process: pkg/leiden in the Go helper (`benchpeers serve`), the peers
here. Every partition is then scored by ONE function, igraph's
Graph.modularity on the same weighted graph (resolution 1), whatever the
library reports itself. Writes a Markdown report. Run by scripts/bench-peers/run.sh.
"""

import argparse
import gzip
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata

import graspologic_native as gn
import igraph as ig
import leidenalg as la

# The quality target: ours may trail the fastest peer by this much.
Q_SLACK = 0.001
# A measurement times consecutive calls (same seed) until it lasts about this long...
MIN_MEASURE = 0.25
# ...but no more than this many calls.
MAX_REPS = 100


def read_edges(path):
    """Reads an edge list of package edgelist: header, then "u v w" lines."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        head = f.readline().split()
        if head[:2] != ["#", "nodes"]:
            raise ValueError(f"{path}: bad header {head}")
        n = int(head[2])
        pairs, weights = [], []
        for line in f:
            u, v, w = line.split()
            pairs.append((int(u), int(v)))
            weights.append(float(w))
    return n, pairs, weights


class GoHelper:
    """pkg/leiden behind `benchpeers serve`, one JSON request per line."""

    def __init__(self, path):
        self.proc = subprocess.Popen([path, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.tmp = tempfile.mkdtemp(prefix="bench-peers-")
        self.own_quality = []  # pkg/leiden's own figure of each run, checked against igraph's
        self.max_q_diff = 0.0

    def call(self, **req):
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        resp = json.loads(self.proc.stdout.readline())
        if resp.get("error"):
            raise RuntimeError(f"benchpeers {req}: {resp['error']}")
        return resp

    def load(self, path):
        return self.call(op="load", path=os.path.abspath(path))

    def runner(self, **opts):
        def run(seed, reps):
            out = os.path.join(self.tmp, "membership")
            resp = self.call(op="run", seed=seed, membership=out, repeat=reps, **opts)
            with open(out) as f:
                membership = [int(x) for x in f]
            self.own_quality.append(resp["modularity"])
            return resp["seconds"], resp["cpu_seconds"], membership, resp["iterations"]
        return run

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


@dataclass
class Impl:
    name: str
    settings: str
    run: object  # (seed, calls) -> (wall seconds, CPU seconds per call, membership, iterations)
    peer: bool
    reps: int = 1  # consecutive calls per measurement, set from the warm-up call
    times: list = field(default_factory=list)
    cpu: list = field(default_factory=list)
    quality: list = field(default_factory=list)
    communities: list = field(default_factory=list)
    iterations: list = field(default_factory=list)


def timed(fn, reps=1):
    """Returns wall and process CPU seconds per call of reps calls of fn(), and the last result."""
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(reps):
        out = fn()
    return (time.perf_counter() - t0) / reps, (time.process_time() - c0) / reps, out


def peers(g, n, tuples):
    def igraph_run(seed, reps):
        def call():
            random.seed(seed)  # python-igraph draws from Python's random module
            return g.community_leiden(objective_function="modularity", weights="weight")
        sec, cpu, c = timed(call, reps)
        return sec, cpu, c.membership, 2

    def leidenalg_run(seed, reps):
        sec, cpu, p = timed(lambda: la.find_partition(g, la.ModularityVertexPartition, weights="weight", seed=seed),
                            reps)
        return sec, cpu, p.membership, 2

    def graspologic_run(seed, reps):
        sec, cpu, (_, parts) = timed(lambda: gn.leiden(edges=tuples, seed=seed), reps)
        # Nodes without edges are absent from its input: give each its own community.
        membership, nxt = [0] * n, max(parts.values(), default=-1) + 1
        for u in range(n):
            c = parts.get(str(u))
            if c is None:
                c, nxt = nxt, nxt + 1
            membership[u] = c
        return sec, cpu, membership, 1

    return [
        Impl("python-igraph", '`community_leiden(objective_function="modularity", weights=...)`: '
             "defaults n_iterations=2, beta=0.01", igraph_run, True),
        Impl("leidenalg", "`find_partition(g, ModularityVertexPartition, weights=..., seed=s)`: "
             "default n_iterations=2", leidenalg_run, True),
        Impl("graspologic-native", "`leiden(edges, seed=s)`: defaults iterations=1, randomness=0.001; "
             "builds its graph from the edge tuples inside the call", graspologic_run, True),
    ]


def bench_graph(name, path, helper, runs, stable):
    n, pairs, weights = read_edges(path)
    g = ig.Graph(n=n, edges=pairs, directed=False)
    g.es["weight"] = weights
    tuples = [(str(u), str(v), w) for (u, v), w in zip(pairs, weights)]
    info = helper.load(path)
    if info["nodes"] != n or info["edges"] != len(pairs):
        raise RuntimeError(f"{name}: Go read {info}, Python {n} nodes {len(pairs)} edges")
    impls = [Impl("pkg/leiden", "`leiden.Run(ctx, g, leiden.WithSeed(s))`: defaults", helper.runner(), False)]
    if stable:
        impls.append(Impl("pkg/leiden, until stable", "`WithMaxIterations(0)`: iterate until no node moves",
                          helper.runner(max_iterations=0), False))
    impls += peers(g, n, tuples)
    loads = [os.getloadavg()[0]]
    for rnd in range(runs + 1):  # round 0 warms up and is not counted
        order = impls[rnd % len(impls):] + impls[:rnd % len(impls)]
        for im in order:
            helper.own_quality.clear()
            sec, cpu, membership, iters = im.run(rnd, im.reps)
            q = g.modularity(membership, weights="weight")
            for own in helper.own_quality:
                helper.max_q_diff = max(helper.max_q_diff, abs(own - q))
            if rnd == 0:
                # Short calls are timed in batches so that one measurement lasts
                # MIN_MEASURE: a 5 ms call is at the mercy of one time slice.
                im.reps = max(1, min(MAX_REPS, math.ceil(MIN_MEASURE / max(sec, 1e-6))))
                continue
            im.times.append(sec)
            im.cpu.append(cpu)
            im.quality.append(q)
            im.communities.append(len(set(membership)))
            im.iterations.append(iters)
        loads.append(os.getloadavg()[0])
        print(f"  {name}: round {rnd}/{runs}, load {loads[-1]:.2f}", file=sys.stderr, flush=True)
    return {"name": name, "nodes": n, "edges": len(pairs), "impls": impls, "loads": loads}


def med(xs):
    return statistics.median(xs)


def fmt_ms(s):
    return f"{s * 1000:.1f}" if s < 10 else f"{s * 1000:.0f}"


def summary_row(res):
    peer = min((im for im in res["impls"] if im.peer), key=lambda im: med(im.times))
    ours = res["impls"][0]
    ratio = med(ours.times) / med(peer.times)
    cpu_ratio = med(ours.cpu) / med(peer.cpu)
    dq = med(ours.quality) - med(peer.quality)
    met = "yes" if ratio <= 1.0 and dq >= -Q_SLACK else "**no**"
    return (f"| {res['name']} | {res['nodes']:,} | {res['edges']:,} | {peer.name} | {fmt_ms(med(peer.times))} | "
            f"{med(peer.quality):.4f} | {fmt_ms(med(ours.times))} | {med(ours.quality):.4f} | "
            f"**{ratio:.2f}** | {cpu_ratio:.2f} | {dq:+.4f} | {met} |")


def graph_table(res):
    fastest = min(med(im.times) for im in res["impls"] if im.peer)
    lines = [f"### {res['name']}: {res['nodes']:,} nodes, {res['edges']:,} edges",
             "",
             f"Load average (1 min) during these rounds: {min(res['loads']):.2f}–{max(res['loads']):.2f}.",
             "",
             "| implementation | time ms, median (min–max) | CPU ms, median | modularity, median (min–max) "
             "| communities | iterations | calls per measurement | time / fastest peer | settings |",
             "|---|---|---|---|---|---|---|---|---|"]
    for im in res["impls"]:
        its = sorted(set(im.iterations))
        lines.append(
            f"| {im.name} | {fmt_ms(med(im.times))} ({fmt_ms(min(im.times))}–{fmt_ms(max(im.times))}) | "
            f"{fmt_ms(med(im.cpu))} | "
            f"{med(im.quality):.4f} ({min(im.quality):.4f}–{max(im.quality):.4f}) | {med(im.communities):.0f} | "
            f"{its[0] if len(its) == 1 else f'{its[0]}–{its[-1]}'} | {im.reps} | "
            f"{med(im.times) / fastest:.2f} | {im.settings} |")
    return lines


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} vCPU, {platform.system()} {platform.release()}"


def report(results, args, started, finished, all_loads, q_diff):
    v = {p: metadata.version(p) for p in ("igraph", "leidenalg", "graspologic-native")}
    out = [
        "# Leiden against its peers",
        "",
        "Generated by `make bench-peers` (`scripts/bench-peers/run.sh`); do not edit by hand.",
        "",
        f"- Command: `{args.command}`",
        f"- Commit: `{args.commit}`",
        f"- Date: {started} to {finished} (UTC)",
        f"- Machine: {machine()}; shared with other jobs, so only ratios within this run count",
        f"- Load average (1 min, sampled between rounds): {min(all_loads):.2f}–{max(all_loads):.2f}",
        f"- Software: {args.go_version}; Python {platform.python_version()}; python-igraph {v['igraph']} "
        f"(C core {ig.__version__}), leidenalg {v['leidenalg']}, graspologic-native {v['graspologic-native']}",
        "",
        "Every implementation runs on the same edge list, in rounds that interleave them (the first implementation",
        "rotates from round to round), after one warm-up round that is not counted; round r uses seed r. A",
        "measurement is the time per call of consecutive calls with that seed, as many as make it last about",
        f"{MIN_MEASURE} s after the warm-up call's time (at most {MAX_REPS}; one for slow calls). Each one",
        "times only its calls, in its own process: pkg/leiden in the Go helper `benchpeers serve` (after a GC), the",
        "peers in the Python driver (graph built before the clock starts, except graspologic-native, which takes",
        "an edge list). Modularity is recomputed for every partition by one function, igraph's",
        "`Graph.modularity(membership, weights)` at resolution 1, not taken from the libraries. The peers run",
        "with their default settings and the modularity objective (igraph's default objective is CPM).",
        f"(Cross-check: pkg/leiden's own modularity differs from igraph's by at most {q_diff:.1e}.)",
        f"Target: time ratio ≤ 1.00 against the fastest peer, modularity ≥ that peer's − {Q_SLACK}.",
        "",
        "## Summary",
        "",
        f"Medians over {args.runs} runs each. The time ratio (wall time, median against median) is the one the",
        "target is about; the CPU-time ratio (process CPU time: all threads, so Go's garbage collector counts) is",
        "given because it varies less with the load of the other jobs on the machine.",
        "",
        "| graph | nodes | edges | fastest peer | its ms | its Q | pkg/leiden ms | pkg/leiden Q "
        "| time ratio ours/fastest | CPU-time ratio | ΔQ | target met |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    out += [summary_row(r) for r in results]
    out += ["", "## Per graph", ""]
    for r in results:
        out += graph_table(r) + [""]
    out += [
        "Graphs: `sparse-*` are `wgraphtest.Sparse(edges, 10, 50, 0.2, 2026)`, the generator of the `pkg/leiden`",
        "benchmarks and of `graphrag bench` (average degree 10, planted groups of 50, 20% of edge ends uniform, unit",
        "weights); `dev-entities` is the entity graph of the development set (hotpotqa, 996 chunks), exported from an",
        "embedded index by `benchpeers export` into `pkg/leiden/testdata/dev-entities.edges.gz`.",
    ]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--helper", required=True, help="the benchpeers binary")
    ap.add_argument("--graph", action="append", required=True, help="name=path of an edge list")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-stable", dest="stable", action="store_false",
                    help="skip the pkg/leiden run until stable")
    ap.add_argument("--out", required=True)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--go-version", default="go")
    ap.add_argument("--command", default="make bench-peers")
    args = ap.parse_args()
    if args.runs < 3:
        ap.error("--runs must be at least 3 for a median")
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    helper = GoHelper(args.helper)
    results = []
    try:
        for spec in args.graph:
            name, path = spec.split("=", 1)
            print(f"{name}: {path}", file=sys.stderr, flush=True)
            results.append(bench_graph(name, path, helper, args.runs, args.stable))
    finally:
        helper.close()
    finished = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    all_loads = [x for r in results for x in r["loads"]]
    text = report(results, args, started, finished, all_loads, helper.max_q_diff)
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
