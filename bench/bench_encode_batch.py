"""fastsw's batch encoders against tiktoken's, and against fastsw's former batch path.

    python bench/bench_encode_batch.py                    # o200k_base, 4 MB English
    python bench/bench_encode_batch.py --vocab cl100k_base --langs th zh

For one tiktoken vocabulary (the rank files of ``bpe-openai``), on the first ``--mb`` MB of English training text
and the held-out text of ``--langs``: tiktoken ``encode_ordinary`` per document and ``encode_ordinary_batch``;
fastsw the same two plus ``encode_batch_to_numpy`` and "former batch": ``USE_SCAN_UTF8 = False`` (a ``pretoken_ends``
call, join and ``encode`` per slice under the GIL) and the lists made after all threads finish (one flat list,
then a slice per document), as the batch path was before. 2 threads. Ids are asserted equal to tiktoken's first.
Wall time, best of ``--rounds`` interleaved rounds, each repeating the set until it lasts ~0.3 s; MB/s of UTF-8.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import fastsw  # noqa: E402
from _corpus import SHARED, read_docs  # noqa: E402
from fastsw.encoding import encode_fast as FE  # noqa: E402
from fastsw.io import tiktoken_vocab as tv  # noqa: E402

THREADS = 2


def main() -> None:
    import tiktoken

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vocab", default="o200k_base", choices=["o200k_base", "cl100k_base"])
    ap.add_argument("--mb", type=float, default=4.0)
    ap.add_argument("--langs", nargs="*", default=[])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    pat = {"o200k_base": "o200k", "cl100k_base": "cl100k"}[args.vocab]
    tok = fastsw.Tokenizer.load_tiktoken(tv.bpe_openai_rank_file(args.vocab), pattern=pat)
    enc = tiktoken.Encoding(
        args.vocab, pat_str=tv.PATTERNS[pat], mergeable_ranks={t: r for r, t in enumerate(tok.vocab)}, special_tokens={}
    )
    fast = tok._fast()
    sets = {f"en {args.mb:g} MB": read_docs(SHARED / "corpus/en/train.jsonl.gz", int(args.mb * 1e6))[0]}
    for lang in args.langs:
        sets[lang] = read_docs(SHARED / f"corpus/{lang}/heldout.jsonl")[0]

    def former_batch(docs):
        FE.USE_SCAN_UTF8 = False
        try:
            ids, offsets = fast.encode_to_numpy(docs, THREADS)
        finally:
            FE.USE_SCAN_UTF8 = True
        flat, bounds = fast.to_list(ids), offsets.tolist()
        return [flat[a:b] for a, b in zip(bounds, bounds[1:])]

    print(f"{args.vocab}, {THREADS} threads, MB/s (wall time, best of {args.rounds} interleaved rounds)")
    for label, docs in sets.items():
        size = sum(len(d.encode("utf-8")) for d in docs)
        fns = {
            "tiktoken single": lambda: [enc.encode_ordinary(d) for d in docs],
            "tiktoken batch": lambda: enc.encode_ordinary_batch(docs, num_threads=THREADS),
            "fastsw single": lambda: [tok.encode_ordinary(d) for d in docs],
            "fastsw batch": lambda: tok.encode_ordinary_batch(docs, num_threads=THREADS),
            "fastsw to_numpy": lambda: tok.encode_batch_to_numpy(docs, num_threads=THREADS, disallowed_special=()),
            "fastsw former batch": lambda: former_batch(docs),
        }
        want = enc.encode_ordinary_batch(docs, num_threads=THREADS)
        for name in ("fastsw single", "fastsw batch", "fastsw former batch"):
            if fns[name]() != want:
                sys.exit(f"{name} differs from tiktoken on {label}")
        t0 = time.perf_counter()
        fns["tiktoken single"]()
        inner = max(1, int(0.3 / max(time.perf_counter() - t0, 1e-6)))
        best = {name: float("inf") for name in fns}
        for _ in range(args.rounds):
            for name, fn in fns.items():
                t0 = time.perf_counter()
                for _ in range(inner):
                    fn()
                best[name] = min(best[name], (time.perf_counter() - t0) / inner)
        mb = {name: size / 1e6 / t for name, t in best.items()}
        print(f"{label} ({size / 1e6:.2f} MB): " + ", ".join(f"{k} {v:.1f}" for k, v in mb.items()))
        print(
            f"   single fastsw / tiktoken {mb['fastsw single'] / mb['tiktoken single']:.2f}; batch fastsw / tiktoken "
            f"{mb['fastsw batch'] / mb['tiktoken batch']:.2f} (to_numpy {mb['fastsw to_numpy'] / mb['tiktoken batch']:.2f}, "
            f"former batch {mb['fastsw former batch'] / mb['tiktoken batch']:.2f})"
        )


if __name__ == "__main__":
    main()
