#!/usr/bin/env python3
"""Modularity and CPU time against the iteration count, pkg/leiden and python-igraph.

The measurements behind the default of 2 iterations (docs/adr/0018-leiden-defaults.md).
Same protocol as peers.py (same files, one modularity function, seeds 1..runs); prints
a Markdown table. Usage, after `make bench-peers` has built the helper and the graphs:

  ~/.cache/graphrag-bench-peers/venv/bin/python scripts/bench-peers/sweep.py \\
    --helper ~/.cache/graphrag-bench-peers/benchpeers \\
    --graph sparse-10k=~/.cache/graphrag-bench-peers/graphs/sparse-10k.edges ...
"""

import argparse
import os
import random
import statistics
import sys

import igraph as ig

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from peers import GoHelper, read_edges, timed

ITERATIONS = [1, 2, 3, 4, 0]  # 0: until an iteration changes nothing


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--helper", required=True)
    ap.add_argument("--graph", action="append", required=True, help="name=path")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    helper = GoHelper(os.path.expanduser(args.helper))
    print("| graph | iterations | pkg/leiden Q | pkg/leiden CPU ms | igraph Q | igraph CPU ms |")
    print("|---|---|---|---|---|---|")
    try:
        for spec in args.graph:
            name, path = spec.split("=", 1)
            path = os.path.expanduser(path)
            n, pairs, weights = read_edges(path)
            g = ig.Graph(n=n, edges=pairs, directed=False)
            g.es["weight"] = weights
            helper.load(path)
            for it in ITERATIONS:
                ours, theirs = ([], []), ([], [])
                for seed in range(1, args.runs + 1):
                    _, cpu, m, _ = helper.runner(max_iterations=it)(seed, 1)
                    ours[0].append(g.modularity(m, weights="weight"))
                    ours[1].append(cpu)
                    random.seed(seed)
                    _, cpu, c = timed(lambda: g.community_leiden(
                        objective_function="modularity", weights="weight", n_iterations=it if it else -1))
                    theirs[0].append(g.modularity(c.membership, weights="weight"))
                    theirs[1].append(cpu)
                med = statistics.median
                print(f"| {name} | {it or 'until stable'} | {med(ours[0]):.5f} | {med(ours[1]) * 1000:.1f} | "
                      f"{med(theirs[0]):.5f} | {med(theirs[1]) * 1000:.1f} |", flush=True)
                print(f"  {name} {it} load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)
    finally:
        helper.close()


if __name__ == "__main__":
    main()
