"""Shared by the benchmarks: where the shared corpora and the generated data are, and reading a prefix of a corpus.

Environment variables:

* ``FASTSW_SHARED``: the shared corpora (default: ``shared`` next to the repository checkout);
* ``FASTSW_DATA``: where benchmarks write the inputs they generate (corpus prefixes, synthetic text, shards);
  default: ``fastsw/bench-data`` in the user cache folder (``$XDG_CACHE_HOME``, else ``~/.cache``).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

SHARED = Path(os.environ.get("FASTSW_SHARED", Path(__file__).resolve().parents[2] / "shared"))


def _user_cache() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) if xdg else Path.home() / ".cache"


DATA = Path(os.environ["FASTSW_DATA"]) if os.environ.get("FASTSW_DATA") else _user_cache() / "fastsw" / "bench-data"


def read_docs(path: Path, limit_bytes=None, skip_bytes: int = 0):
    """The ``text`` of each JSONL line (``.gz`` or not) after skipping ``skip_bytes``
    of documents, until ``limit_bytes`` of UTF-8 are read; returns ``(docs, bytes)``."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    docs, size, skipped = [], 0, 0
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            text = json.loads(line)["text"]
            n = len(text.encode("utf-8"))
            if skipped < skip_bytes:
                skipped += n
                continue
            docs.append(text)
            size += n
            if limit_bytes is not None and size >= limit_bytes:
                break
    return docs, size
