"""Lucene-class anchor for bench/index-query.ts: tantivy (Rust, block-max WAND) over the same passages and queries.

Usage: python tantivy_anchor.py FTS5_SQLITE INDEX_DIR QUERIES_JSON
  FTS5_SQLITE   the bench's SQLite file (table p: title, text) holding exactly the passages svc indexed
  INDEX_DIR     where the tantivy index is built (reused when it holds a committed index)
  QUERIES_JSON  {"shorts": [...], "claims": [...], "nfcorpus": [...], "warm": {"shorts": [...], ...}, "warmup": 10}
                (each row warms up on its "warm" list, queries it does not time; without one, on its first
                "warmup" timed queries)

Prints one JSON object: {"docs": N, "build_s": S, "rows": {"3 words, AND": {"p50": .., "p95": .., "n": ..}, ...}}.
Analysis: tantivy's English stemmer (`en_stem`: lowercase, Porter-style stemming, no stop list), title and text in
one field like svc's search_text; BM25 k1 1.2, b 0.75 (tantivy's defaults, the same as LanceDB's). Latency is
measured in-process per query (parse + top-10 search), as svc's rows are. Each kind is measured twice: the top 10
alone (doc addresses and scores), and with the stored text of those 10 read from tantivy's doc store ("…, stored
text"): svc's rows read the result page's rows (searchPages hydrates them), so the second is the like-for-like one.
"""
import json
import os
import re
import shutil
import sqlite3
import sys
import time

import tantivy


def build(db_path: str, index_dir: str) -> tuple[tantivy.Index, float]:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("body", stored=True, tokenizer_name="en_stem", index_option="freq")
    sb.add_unsigned_field("id", stored=True)
    schema = sb.build()
    marker = os.path.join(index_dir, "built-stored")  # the body stored (an index built before without it is rebuilt)
    if os.path.exists(marker):
        return tantivy.Index(schema, path=index_dir, reuse=True), 0.0
    if os.path.exists(index_dir):
        shutil.rmtree(index_dir)
    os.makedirs(index_dir)
    index = tantivy.Index(schema, path=index_dir, reuse=False)
    t0 = time.perf_counter()
    writer = index.writer(heap_size=512_000_000, num_threads=2)
    con = sqlite3.connect(db_path)
    for rowid, title, text in con.execute("SELECT rowid, title, text FROM p"):
        writer.add_document(tantivy.Document(body=f"{title}\n{text}", id=rowid))
    writer.commit()
    writer.wait_merging_threads()
    with open(marker, "w") as f:
        f.write("ok")
    return index, time.perf_counter() - t0


WORD = re.compile(r"[^\W_]+", re.UNICODE)


def terms(q: str) -> list[str]:
    # Words only: the claims hold "%", "-", ":", "(" which are query-language syntax in tantivy.
    return WORD.findall(q.lower())


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


def main() -> None:
    db_path, index_dir, queries_path = sys.argv[1:4]
    qs = json.load(open(queries_path))
    index, build_s = build(db_path, index_dir)
    index.reload()
    searcher = index.searcher()
    cases = [
        ("3 words, AND", "shorts", True),
        ("3 words, OR", "shorts", False),
        ("claim, OR", "claims", False),
        ("NFCorpus query, OR", "nfcorpus", False),
    ]
    rows = {}
    as_texts = lambda queries: [t for t in (" ".join(terms(q)) for q in queries) if t]
    def top10(t: str, conj: bool):
        return searcher.search(index.parse_query(t, ["body"], conjunction_by_default=conj), 10).hits

    def with_text(t: str, conj: bool):
        return [searcher.doc(addr)["body"][0] for _, addr in top10(t, conj)]

    for label, key, conj in cases:
        texts = as_texts(qs.get(key, []))
        if not texts:
            continue
        warm = as_texts(qs.get("warm", {}).get(key, []))
        for name, run in ((label, top10), (f"{label}, stored text", with_text)):
            for t in warm if len(warm) >= 10 else texts[: qs.get("warmup", 10)]:
                run(t, conj)
            lat = []
            for t in texts:
                t0 = time.perf_counter()
                run(t, conj)
                lat.append((time.perf_counter() - t0) * 1000)
            rows[name] = {"p50": pct(lat, 50), "p95": pct(lat, 95), "n": len(lat)}
    print(json.dumps({"docs": searcher.num_docs, "build_s": build_s, "rows": rows}))


if __name__ == "__main__":
    main()
