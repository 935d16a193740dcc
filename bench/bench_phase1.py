"""The phase-1 merge loop alone (``FastBackend.phase1``: the ``_merge_loop`` kernel and its driver): process CPU
time, best of ``--rounds`` runs in one process, on the first ``--mb`` MB of English counted once (default
pre-tokenizer, ``paper`` profile), after one untimed warm-up run. For comparing two versions of the kernel: run it
on each, alternating, and compare the medians; the merges' hash must be the same.

    python bench/bench_phase1.py --mb 20 --merges 30000 --rounds 5
    python bench/bench_phase1.py --quick --json phase1.json   # 5 MB, 8,000 merges
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from _corpus import SHARED, read_docs  # noqa: E402  (bench/ is on sys.path when run as a script)
from _report import add_arguments, table, write_json  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=None, help="MB of English training text (default 20; --quick: 5)")
    ap.add_argument("--merges", type=int, default=None, help="merges to learn (default 30000; --quick: 8000)")
    ap.add_argument("--rounds", type=int, default=5)
    add_arguments(ap)
    args = ap.parse_args()
    mb = args.mb if args.mb is not None else (5 if args.quick else 20)
    merges = args.merges if args.merges is not None else (8000 if args.quick else 30000)
    from fastsw.alphabet import default_alphabet
    from fastsw.pretokenizers.pretokenize import Pretokenizer
    from fastsw.trainers.bpe_fast import FastBackend
    from fastsw.trainers.train import count_corpus

    warnings.simplefilter("ignore")
    docs = read_docs(SHARED / "corpus" / "en" / "train.jsonl.gz", int(mb * 1e6))[0]
    counts = count_corpus(docs, Pretokenizer(), collect_runs=False)
    alphabet = default_alphabet("paper")
    backend = FastBackend()
    backend.phase1(counts, alphabet, "paper", min(merges, 100))  # compiles or loads the kernels
    best = float("inf")
    for _ in range(args.rounds):
        c0 = time.process_time()
        learned, _, _ = backend.phase1(counts, alphabet, "paper", merges)
        best = min(best, time.process_time() - c0)
    digest = hashlib.sha256(repr(learned).encode()).hexdigest()[:12]
    print(f"phase 1: {best:.3f} s CPU (best of {args.rounds}), {len(learned)} merges, merges hash {digest}")
    if args.json:
        rows = [["en", mb, len(learned), round(best, 3), digest]]
        columns = ["language", "MB", "merges", "phase 1 CPU s (best)", "merges hash"]
        write_json(args.json, table("Phase-1 merge loop alone", columns, rows))


if __name__ == "__main__":
    main()
