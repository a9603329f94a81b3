"""Reads a `graphrag export` of one corpus with networkx (GraphML) and pyarrow
(Parquet) and checks it against the export's summary and Microsoft GraphRAG's
table layout. Usage: check.py DIR EXPECTED_JSON (DIR holds graphml/ and parquet/)."""

import json
import os
import sys

import networkx as nx
import pyarrow as pa
import pyarrow.parquet as pq

STR_LIST = pa.list_(pa.string())
INT_LIST = pa.list_(pa.int64())

# Microsoft GraphRAG's *_FINAL_COLUMNS (graphrag/data_model/schemas.py) with the
# types its indexer writes; the export may add columns after them.
TABLES = {
    "entities": [("id", pa.string()), ("human_readable_id", pa.int64()), ("title", pa.string()), ("type", pa.string()),
                 ("description", pa.string()), ("text_unit_ids", STR_LIST), ("frequency", pa.int64()), ("degree", pa.int64())],
    "relationships": [("id", pa.string()), ("human_readable_id", pa.int64()), ("source", pa.string()), ("target", pa.string()),
                      ("description", pa.string()), ("weight", pa.float64()), ("combined_degree", pa.int64()),
                      ("text_unit_ids", STR_LIST)],
    "communities": [("id", pa.string()), ("human_readable_id", pa.int64()), ("community", pa.int64()), ("level", pa.int64()),
                    ("parent", pa.int64()), ("children", INT_LIST), ("title", pa.string()), ("entity_ids", STR_LIST),
                    ("relationship_ids", STR_LIST), ("text_unit_ids", STR_LIST), ("period", pa.string()), ("size", pa.int64())],
    "community_reports": [("id", pa.string()), ("human_readable_id", pa.int64()), ("community", pa.int64()), ("level", pa.int64()),
                          ("parent", pa.int64()), ("children", INT_LIST), ("title", pa.string()), ("summary", pa.string()),
                          ("full_content", pa.string()), ("rank", pa.float64()), ("rating_explanation", pa.string()),
                          ("findings", pa.list_(pa.struct([("explanation", pa.string()), ("summary", pa.string())]))),
                          ("full_content_json", pa.string()), ("period", pa.string()), ("size", pa.int64())],
    "text_units": [("id", pa.string()), ("human_readable_id", pa.int64()), ("text", pa.string()), ("n_tokens", pa.int64()),
                   ("document_id", pa.string())],
}
COUNTS = {"entities": "entities", "relationships": "relationships", "communities": "communities",
          "community_reports": "reports", "text_units": "chunks"}

failures = []


def check(ok, msg):
    if not ok:
        failures.append(msg)


def same_type(got, want):
    # A list's element field may be named "element" or "item": compare value types.
    if pa.types.is_list(want):
        return pa.types.is_list(got) and same_type(got.value_type, want.value_type)
    if pa.types.is_struct(want):
        return pa.types.is_struct(got) and all(
            got.get_field_index(f.name) >= 0 and same_type(got.field(f.name).type, f.type) for f in want)
    return got == want


def check_parquet(d, want):
    tables = {}
    for name, cols in TABLES.items():
        t = pq.read_table(os.path.join(d, name + ".parquet"))
        tables[name] = t
        got = [(f.name, f.type) for f in t.schema][: len(cols)]
        check([c for c, _ in got] == [c for c, _ in cols], f"{name}: columns {[c for c, _ in got]}, want {[c for c, _ in cols]}")
        for (c, gt), (_, wt) in zip(got, cols):
            check(same_type(gt, wt), f"{name}.{c}: type {gt}, want {wt}")
        check(t.num_rows == want[COUNTS[name]], f"{name}: {t.num_rows} rows, want {want[COUNTS[name]]}")
    ents = tables["entities"].to_pylist()
    titles = {e["title"] for e in ents}
    ids = {e["id"] for e in ents}
    check(len(titles) == len(ents), "entity titles are not unique")
    for r in tables["relationships"].to_pylist():
        check(r["source"] in titles and r["target"] in titles, f"relationship {r['id']} names an unknown entity")
    comms = tables["communities"].to_pylist()
    by_number = {c["community"]: c for c in comms}
    for c in comms:
        check(set(c["entity_ids"]) <= ids, f"community {c['community']} lists unknown entities")
        if c["parent"] != -1:
            p = by_number.get(c["parent"])
            check(p is not None and p["level"] == c["level"] - 1 and c["community"] in p["children"],
                  f"community {c['community']}: parent {c['parent']} is not one level coarser and its parent")
        else:
            check(c["level"] == 0, f"community {c['community']} has no parent below level 0")
    units = tables["text_units"].to_pylist()
    check(all(u["document_id"] and u["n_tokens"] > 0 for u in units), "a text unit lacks its document or tokens")


def check_graphml(d, want):
    g = nx.read_graphml(os.path.join(d, "graph.graphml"))
    check(g.is_directed(), "the GraphML graph is not directed")
    check(g.number_of_nodes() == want["entities"], f"GraphML: {g.number_of_nodes()} nodes, want {want['entities']}")
    check(g.number_of_edges() == want["relationships"], f"GraphML: {g.number_of_edges()} edges, want {want['relationships']}")
    for n, attrs in g.nodes(data=True):
        check(isinstance(attrs.get("pagerank"), float) and attrs.get("label"), f"node {n}: attributes {attrs}")
    for u, v, attrs in g.edges(data=True):
        check(isinstance(attrs.get("weight"), float), f"edge {u}->{v}: weight {attrs.get('weight')!r}")
    levels = sum(1 for k in next(iter(g.nodes(data=True)))[1] if k.startswith("community_")) if g.number_of_nodes() else 0
    print(f"GraphML (networkx {nx.__version__}): {g.number_of_nodes()} nodes, {g.number_of_edges()} edges, {levels} community levels")


def main():
    root, want = sys.argv[1], json.loads(sys.argv[2])
    check_graphml(os.path.join(root, "graphml"), want)
    check_parquet(os.path.join(root, "parquet"), want)
    print(f"Parquet (pyarrow {pa.__version__}): {', '.join(TABLES)} match Microsoft GraphRAG's columns and types")
    if failures:
        print("\n".join("FAIL: " + f for f in failures))
        sys.exit(1)


main()
