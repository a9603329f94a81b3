"""Loads a `graphrag export -format parquet` with Microsoft GraphRAG's own query
loaders, as its local and global search notebooks do. Usage: check_msgraphrag.py DIR
EXPECTED_JSON."""

import importlib.metadata
import json
import os
import sys

import pandas as pd
from graphrag.query.indexer_adapters import (
    read_indexer_communities,
    read_indexer_entities,
    read_indexer_relationships,
    read_indexer_reports,
    read_indexer_text_units,
)

d, want = sys.argv[1], json.loads(sys.argv[2])


def table(name):
    return pd.read_parquet(os.path.join(d, name + ".parquet"))


entities_df, communities_df, reports_df = table("entities"), table("communities"), table("community_reports")
levels = int(communities_df["level"].max()) + 1 if len(communities_df) else 0
entities = read_indexer_entities(entities_df, communities_df, community_level=None)
relationships = read_indexer_relationships(table("relationships"))
reports = read_indexer_reports(reports_df, communities_df, community_level=None)
communities = read_indexer_communities(communities_df, reports_df)
text_units = read_indexer_text_units(table("text_units"))

failures = []
if len(entities) != want["entities"]:
    failures.append(f"{len(entities)} entities, want {want['entities']}")
if len(relationships) != want["relationships"]:
    failures.append(f"{len(relationships)} relationships, want {want['relationships']}")
if len(text_units) != want["chunks"]:
    failures.append(f"{len(text_units)} text units, want {want['chunks']}")
if want["reports"] and not reports:
    failures.append("no community report loaded")
if want["entities"] and not any(e.community_ids and e.community_ids != ["-1"] for e in entities):
    failures.append("no entity is in a community")
if any(u.document_id is None for u in text_units):
    failures.append("a text unit has no document id")
read_indexer_entities(entities_df, communities_df, community_level=2)  # as the notebooks call it
for lvl in range(levels):
    read_indexer_reports(reports_df, communities_df, community_level=lvl)
print(f"Microsoft GraphRAG {importlib.metadata.version('graphrag')} loaders: {len(entities)} entities, "
      f"{len(relationships)} relationships, {len(reports)} reports, {len(communities)} communities, {len(text_units)} text units")
if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
