"""Parity-aware BPE training time against fastsw BPE on the same multilingual text (the target: PA-BPE <= 2x BPE
at vocab 32768).

Reads the first ``--mb`` MB of each ``../shared/corpus/<lang>/train.jsonl.gz`` (12 languages; ar, fi, hi, ko and my
have less) into memory and trains, in this process, on the numba backend (after a warm-up): ordinary ``bpe`` and
``parity-bpe`` in its variants on two setups:

* all 12 languages with target ratio 1 each (``ratios=``; XQuAD has no fi, fr, ja, ko, my dev text): plain, hybrid
  (``global_merges`` = half the merges, seed 001's Table 2) and window (``window=100, alpha=2``);
* the 7 languages with an XQuAD dev text (ar, de, en, hi, ru, th, zh), dev = ``parallel/xquad.dev.*``: plain.

Each training runs ``--repeat`` times; the table shows the fastest phase 1 (wall, ``training_info["seconds"]``, and
process CPU time of the phase-1 stage), the fastest whole ``train()`` call (wall and process CPU time); the ratios
are of CPU times, which move less than wall times with whatever else the computer runs.
PA-BPE stops early when the language it chooses has no pair left seen ``min_frequency`` (2) times (a small
language such as my runs out), so each setup also trains BPE to the merge count plain PA-BPE reached ("BPE, same
merges"): the ratio at equal work. The default pre-tokenizer here is ``simple`` (with ``script``, Thai, Chinese and
Burmese pretokens are single letters: their counts reach a floor and PA-BPE stops far short of the vocabulary).
``--reference`` adds the python reference of plain PA-BPE (slow: one run);
``--profile`` prints the top functions of one plain PA-BPE run (cProfile).

    python bench/bench_parity.py --mb 1 --vocab 32768
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from _corpus import SHARED, read_docs  # noqa: E402  (bench/ is on sys.path when run as a script)

from fastsw.notes import VocabularyNotReachedWarning  # noqa: E402

LANGS = ["ar", "de", "en", "fi", "fr", "hi", "ja", "ko", "my", "ru", "th", "zh"]


PHASE1_CPU = []


def _cpu_timed(fn):
    """``fn`` recording its process CPU time in PHASE1_CPU (the kernels run in a worker thread of this process)."""

    def timed(*args, **kwargs):
        c0 = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            PHASE1_CPU.append(time.process_time() - c0)

    return timed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=1.0, help="MB of training text per language (at most)")
    ap.add_argument("--vocab", type=int, default=32768)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--pretokenizer",
        default="simple",
        choices=["script", "simple"],
        help="simple (default: GPT-4o's pattern, so Thai, Chinese, Burmese words merge and PA-BPE runs "
        "to the full vocabulary) or script (one letter per pretoken for those scripts)",
    )
    ap.add_argument("--reference", action="store_true", help="also time the python reference (plain, one run)")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    import fastsw.trainers.parity_fast
    import fastsw.trainers.bpe_fast

    # phase 1's CPU time: the stage functions train() calls on the numba backend, timed
    fastsw.trainers.bpe_fast.FastBackend.phase1 = _cpu_timed(fastsw.trainers.bpe_fast.FastBackend.phase1)
    fastsw.trainers.parity_fast.parity_phase1_packed = _cpu_timed(fastsw.trainers.parity_fast.parity_phase1_packed)
    warnings.simplefilter("ignore", VocabularyNotReachedWarning)  # PA-BPE's early stop is reported in the table
    limit = int(args.mb * 1e6)
    train = {}
    for lang in LANGS:
        train[lang], size = read_docs(SHARED / "corpus" / lang / "train.jsonl.gz", limit)
        print(f"{lang}: {size / 1e6:.2f} MB", end="  ")
    dev_langs = [l for l in LANGS if (SHARED / "corpus" / "parallel" / f"xquad.dev.{l}.jsonl").exists()]
    dev = {l: read_docs(SHARED / "corpus" / "parallel" / f"xquad.dev.{l}.jsonl")[0] for l in dev_langs}
    total = sum(len(d.encode()) for docs in train.values() for d in docs)
    print(f"\n{len(LANGS)} languages, {total / 1e6:.2f} MB; dev languages (XQuAD): {', '.join(dev_langs)}")

    def run(inputs, vocab, **kw):
        best = None
        for _ in range(args.repeat if kw.get("backend", "numba") == "numba" else 1):
            PHASE1_CPU.clear()
            c0, t0 = time.process_time(), time.perf_counter()
            tok = fastsw.train(inputs, vocab_size=vocab, pretokenizer=args.pretokenizer, **kw)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            run_ = (tok.training_info["seconds"]["phase1"], PHASE1_CPU[-1] if PHASE1_CPU else float("nan"), wall, cpu)
            best = run_ if best is None else tuple(min(a, b) for a, b in zip(best, run_))
        return best + (tok.n_regular,)

    fastsw.train(["warm up the kernels"], vocab_size=300, backend="numba")
    fastsw.train(
        {"a": ["warm up"], "b": ["up warm"]},
        algo="parity-bpe",
        ratios={"a": 1, "b": 1},
        vocab_size=300,
        backend="numba",
    )
    n_alpha = 256
    rows = []
    ratio_all = dict.fromkeys(LANGS, 1)
    setups = [
        (
            f"{len(LANGS)} languages, ratio 1 each",
            train,
            [
                ("PA-BPE", {"ratios": ratio_all}),
                ("PA-BPE hybrid", {"ratios": ratio_all, "global_merges": (args.vocab - n_alpha) // 2}),
                ("PA-BPE window", {"ratios": ratio_all, "parity_variant": "window"}),
            ],
        ),
        (f"{len(dev_langs)} XQuAD languages, dev texts", {l: train[l] for l in dev_langs}, [("PA-BPE", {"dev": dev})]),
    ]
    for name, inputs, variants in setups:
        print(f"-- {name}", flush=True)
        bpe = run(inputs, args.vocab, algo="bpe", backend="numba")
        rows.append((name, "BPE", bpe, bpe))
        print(f"   BPE: phase 1 {bpe[0]:.2f} s, merges {bpe[4]}", flush=True)
        plain = None
        for label, kw in variants:
            pa = run(inputs, args.vocab, algo="parity-bpe", backend="numba", **kw)
            rows.append((name, label, pa, bpe))
            print(f"   {label}: phase 1 {pa[0]:.2f} s, merges {pa[4]}", flush=True)
            plain = plain or pa
        if plain[4] < bpe[4]:
            same = run(inputs, n_alpha + plain[4], algo="bpe", backend="numba")
            rows.append((name, "BPE, same merges as PA-BPE", same, same))
            rows.append((name, "PA-BPE vs BPE at same merges", plain, same))
        if args.reference:
            label, kw = variants[0]
            ref = run(inputs, args.vocab, algo="parity-bpe", backend="python", **kw)
            rows.append((name, "PA-BPE, python reference", ref, bpe))
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            fastsw.train(
                inputs,
                vocab_size=args.vocab,
                algo="parity-bpe",
                backend="numba",
                pretokenizer=args.pretokenizer,
                **variants[0][1],
            )
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)

    print(
        f"\nvocab {args.vocab}, first {args.mb:g} MB per language, pre-tokenizer {args.pretokenizer}; best of "
        f"{args.repeat}\n"
    )
    print(
        "| text | tokenizer | merges | phase 1 wall (s) | phase 1 CPU (s) | train() wall (s) | train() CPU (s) | "
        "phase 1 CPU / BPE's | train() CPU / BPE's |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, label, (p1, p1cpu, wall, cpu, merges), (_, bp1cpu, _, bcpu, _) in rows:
        print(
            f"| {name} | {label} | {merges} | {p1:.2f} | {p1cpu:.2f} | {wall:.2f} | {cpu:.2f} | "
            f"{p1cpu / bp1cpu:.2f}x | {cpu / bcpu:.2f}x |"
        )


if __name__ == "__main__":
    main()
