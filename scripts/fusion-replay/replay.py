#!/usr/bin/env python3
"""Replay local search's fusion on the lists of a `graphrag eval -details FILE -candidates` run.

Every candidate passage carries its rank and score in each list (dense, lexical, graph,
subject), so another fusion can be scored on the same retrieval without re-running it:

    python3 scripts/fusion-replay/replay.py run.details [more.details ...]

prints R@2 / R@5 of the graph strategy as stored, of the fusions below, and of the text
lists alone. The candidates are the fused list's first `top_k` passages (100 with
-candidates): a list cut there has other standard scores than the full list, so replayed
figures can differ from a real run by a few hundredths.
"""
import collections
import json
import statistics
import sys

K = 60  # RRF k, the engine's default
CONFIDENT_Z = 2.0  # engine.confidentZ


def load(path):
    """Questions of the graph strategy: gold documents, candidate documents, lists."""
    out = []
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            if d.get("strategy") != "graph" or "candidates" not in d:
                continue
            lists = collections.defaultdict(list)
            for i, c in enumerate(d["candidates"]):
                for h in c["lists"]:
                    lists[h["list"]].append((h["rank"], h["score"], i))
            for items in lists.values():
                items.sort()
            out.append((d["gold"], [c["document"] for c in d["candidates"]], lists))
    return out


def rrf(weighted):
    """RRF over (weight, ids best first); ties by best rank."""
    score, best = collections.defaultdict(float), {}
    for w, ids in weighted:
        for r, i in enumerate(ids, 1):
            score[i] += w / (K + r)
            best[i] = min(best.get(i, r), r)
    return sorted(score, key=lambda i: (-score[i], best[i], i))


def text(lists):
    """The text lists fused by summed standard scores: (ids best first, score)."""
    score, best = collections.defaultdict(float), {}
    for name in ("dense", "lexical"):
        items = lists.get(name, [])
        if not items:
            continue
        xs = [s for _, s, _ in items]
        mean, sd = statistics.mean(xs), statistics.pstdev(xs)
        for r, s, i in items:
            score[i] += (s - mean) / sd if sd > 0 else 0.0
            best[i] = min(best.get(i, r), r)
    return sorted(score, key=lambda i: (-score[i], best[i], i)), score


def ids(lists, name):
    return [i for _, _, i in lists.get(name, [])]


def two_text(lists):
    return bool(lists.get("dense")) and bool(lists.get("lexical"))


def rrf_fusion(lists):
    """Before ADR 0071: the fused text list joins the walk and subject lists by RRF."""
    if not two_text(lists):
        return rrf([(1, ids(lists, n)) for n in ("dense", "lexical", "graph", "subject")])
    return rrf([(2, text(lists)[0]), (1, ids(lists, "graph")), (1, ids(lists, "subject"))])


def confident_first(z):
    """ADR 0071: passages with a mean standard score ≥ z first, the rest by RRF."""
    def fuse(lists):
        order = rrf_fusion(lists)
        if not two_text(lists):
            return order
        t, score = text(lists)
        head = [i for i in t if score[i] >= 2 * z]  # 2: the two lists' summed weight
        placed = set(head)
        return head + [i for i in order if i not in placed]
    return fuse


def recall(questions, fuse, ks=(2, 5)):
    total = {k: 0.0 for k in ks}
    for gold, docs, lists in questions:
        ranked, seen = [], set()
        for i in fuse(lists):
            if docs[i] not in seen:
                seen.add(docs[i])
                ranked.append(docs[i])
        for k in ks:
            total[k] += len(set(gold) & set(ranked[:k])) / len(gold)
    return " / ".join(f"{total[k] / max(1, len(questions)):.3f}" for k in ks)


def main(paths):
    fusions = [
        ("stored", lambda lists: sorted({i for v in lists.values() for _, _, i in v})),
        ("rrf (before ADR 0071)", rrf_fusion),
        *((f"confident first, z >= {z}", confident_first(z)) for z in (1.5, 2.0, 2.5, 3.0)),
        ("text lists alone", lambda lists: text(lists)[0]),
    ]
    for path in paths:
        questions = load(path)
        print(f"{path}: {len(questions)} questions, R@2 / R@5")
        for name, fuse in fusions:
            print(f"  {name:28s} {recall(questions, fuse)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: replay.py DETAILS [DETAILS ...] (graphrag eval -details FILE -candidates)")
    main(sys.argv[1:])
