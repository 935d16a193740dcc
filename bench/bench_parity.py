"""Parity-aware BPE training time against fastsw BPE on the same 12-language text (issue #10's target: PA-BPE
<= 2x BPE at vocab 32768).

Reads the first ``--mb`` MB of each ``../shared/corpus/<lang>/train.jsonl.gz`` (12 languages) into memory, dev =
``parallel/xquad.dev.*`` where the language has one (``--ratio 1`` for every language otherwise: XQuAD has no fi,
fr, ja, ko, my), then trains, in this process, once each: ``bpe`` on the numba backend (after a warm-up),
``bpe`` on the python reference backend, ``parity-bpe`` (its phase 1 is the reference
:func:`fastsw.parity.learn_parity_merges` on either backend). Wall time from ``training_info["seconds"]`` and
``time.perf_counter_ns``; ``--profile`` prints the top functions of the parity run (cProfile).

    python bench/bench_parity.py --mb 1 --vocab 8192 [--profile]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from _corpus import SHARED, read_docs  # noqa: E402  (bench/ is on sys.path when run as a script)

import fastsw  # noqa: E402

LANGS = ["ar", "de", "en", "fi", "fr", "hi", "ja", "ko", "my", "ru", "th", "zh"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--skip-python-bpe", action="store_true")
    args = ap.parse_args()
    limit = int(args.mb * 1e6)
    train = {lang: read_docs(SHARED / "corpus" / lang / "train.jsonl.gz", limit)[0] for lang in LANGS}
    dev_langs = [l for l in LANGS if (SHARED / "corpus" / "parallel" / f"xquad.dev.{l}.jsonl").exists()]
    dev_train = {l: train[l] for l in dev_langs}
    dev = {l: read_docs(SHARED / "corpus" / "parallel" / f"xquad.dev.{l}.jsonl")[0] for l in dev_langs}
    size = sum(len(d.encode()) for docs in train.values() for d in docs)
    print(f"{len(LANGS)} languages, {size / 1e6:.2f} MB; dev languages (XQuAD): {', '.join(dev_langs)}")

    def run(label, inputs, **kw):
        t0 = time.perf_counter_ns()
        tok = fastsw.train(inputs, vocab_size=args.vocab, **kw)
        wall = (time.perf_counter_ns() - t0) / 1e9
        sec = tok.training_info["seconds"]
        print(f"{label:45s} wall {wall:7.2f} s  phase1 {sec['phase1']:7.2f} s  merges {tok.n_regular}")
        return tok, sec["phase1"]

    fastsw.train(["warm up the kernels"], vocab_size=300, backend="numba")
    rows = []
    for name, inputs, extra in (("12 languages, ratio 1 each", train, {"ratios": {l: 1 for l in LANGS}}),
                                (f"{len(dev_langs)} XQuAD languages, dev texts", dev_train, {"dev": dev})):
        print(f"-- {name}")
        _, bpe_fast = run("bpe (numba)", inputs, algo="bpe", backend="numba")
        bpe_py = None
        if not args.skip_python_bpe:
            _, bpe_py = run("bpe (python reference)", inputs, algo="bpe", backend="python")
        prof = cProfile.Profile() if args.profile else None
        if prof:
            prof.enable()
        _, parity = run("parity-bpe (reference phase 1)", inputs, algo="parity-bpe", backend="numba", **extra)
        if prof:
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(8)
        rows.append((name, bpe_fast, bpe_py, parity))
    print(f"\n| text | vocab | BPE numba phase 1 (s) | BPE python phase 1 (s) | PA-BPE phase 1 (s) | PA-BPE / BPE numba |")
    print("|---|---|---|---|---|---|")
    for name, fast, py, par in rows:
        print(f"| {name} | {args.vocab} | {fast:.2f} | {'-' if py is None else f'{py:.2f}'} | {par:.2f} | "
              f"{par / fast:.0f}x |")


if __name__ == "__main__":
    main()
