"""Main-text anchor for bench/extract-quality.ts: trafilatura over the same decoded pages svc extracts.

Usage: python trafilatura_anchor.py PAGES_JSONL OUT_JSONL
  PAGES_JSONL  one {"html": "...", "url": "..."} per line (the HTML already decoded by svc's decodeHtml, so both
               extractors read the same text)
  OUT_JSONL    one {"text": "...", "ms": float} per input line, in the same order

Settings: trafilatura.extract(html, url=url, include_comments=False) — main text only, plain text output, fallbacks
on (the library's defaults otherwise). Time is measured per page in-process around extract() alone, as svc's is
around extractPage().
"""
import json
import sys
import time

import trafilatura


def main() -> None:
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as fin, open(dst, "w", encoding="utf-8") as fout:
        for line in fin:
            page = json.loads(line)
            t0 = time.perf_counter()
            text = trafilatura.extract(page["html"], url=page["url"], include_comments=False)
            ms = (time.perf_counter() - t0) * 1000
            fout.write(json.dumps({"text": text or "", "ms": ms}) + "\n")


if __name__ == "__main__":
    main()
