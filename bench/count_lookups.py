"""The rank-table lookups of the merge loops with ``o200k_base``: how many, and how many of their pairs have both
ids below a bound (those below ``encode_kernels._DIRECT_IDS`` are one load in the table's direct region).

    python bench/count_lookups.py fi            # one language's held-out text
    python bench/count_lookups.py fi de zh      # several

Per document (the miss cache holds a piece once per kernel call), each distinct pretoken that misses the
whole-pretoken shortcut starts from its ids (``_initial_ids``, with the character table) and is merged by the scan
loop run as plain Python (``_merge_scan.py_func``), which looks its pairs up through ``_filtered_lookup``: a
counting wrapper takes that name's place for the run. Every piece goes through the scan loop (the kernel gives
pieces of more than 16 ids to the tree, the same ids with slightly different lookups), so the counts are the scan
loop's. No timing: the counts are the same on any computer.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _corpus import SHARED, read_docs  # noqa: E402
from bench_tiktoken import fastsw_and_tiktoken  # noqa: E402
from fastsw.encoding import encode_kernels as K  # noqa: E402

BOUNDS = (256, 512, 1024, 2048, 4096, 16384, 65536)


def shortcut_id(fast, piece: bytes) -> int:
    """The whole-pretoken shortcut's id of ``piece``, or -1 (the kernel's own tables and lookups)."""
    data = np.frombuffer(piece + b"\0" * 8, np.uint8)
    n = len(piece)
    if n <= 8:
        key = K._pack(data, 0, n)
        return int(K._short_lookup(fast.sc_short, key, n, K._short_hash(key, n)))
    return int(K._long_lookup(fast.sc_long, fast.tb, data, 0, n, K._long_hash(data, 0, n)))


def count(lang: str, tok) -> None:
    fast = tok._fast()
    by_max: Counter = Counter()  # the larger id of each looked-up pair -> lookups
    merged: Counter = Counter()  # ... -> lookups that found a merge

    def counting_lookup(table, bits, use_bits, left, right):
        v = real(table, bits, use_bits, left, right)
        by_max[max(int(left), int(right))] += 1
        merged[max(int(left), int(right))] += v >= 0
        return v

    real = K._filtered_lookup
    pieces = missed = distinct = 0
    K._filtered_lookup = counting_lookup
    try:
        for doc in read_docs(SHARED / f"corpus/{lang}/heldout.jsonl")[0]:
            seen = set()
            for p in tok.pretokenizer.pretokenize(doc):
                pieces += 1
                b = p.encode()
                if shortcut_id(fast, b) >= 0:
                    continue
                missed += 1
                if b in seen:
                    continue
                seen.add(b)
                distinct += 1
                data = np.frombuffer(b, np.uint8)
                out = np.zeros(len(b) + 1, np.int32)
                n = K._initial_ids.py_func(data, 0, len(b), fast.byte_ids, fast.chars, out, 0)
                K._merge_scan.py_func(out, 0, n, fast.r_table, np.empty(max(n, 1), np.int64), fast.s_bits, 0)
    finally:
        K._filtered_lookup = real
    total = sum(by_max.values())
    found = sum(merged.values())
    print(
        f"{lang}: {pieces} pretokens, {missed} miss the shortcut ({missed / pieces:.0%}), {distinct} distinct per "
        f"document; {total} lookups ({total / max(distinct, 1):.1f} per piece), {found} with a merge"
    )
    for bound in BOUNDS:
        share = sum(v for k, v in by_max.items() if k < bound) / max(total, 1)
        print(f"  both ids below {bound:6d}: {share:6.1%} of the lookups")


def main() -> None:
    tok, _ = fastsw_and_tiktoken("o200k_base")
    for lang in sys.argv[1:] or ["fi"]:
        count(lang, tok)


if __name__ == "__main__":
    main()
