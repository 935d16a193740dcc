"""Two checkouts of fastsw against each other with ``o200k_base``, one thread, on the 12 languages' held-out text.

    python bench/compare_checkouts.py OTHER_CHECKOUT                  # the other checkout against this one
    python bench/compare_checkouts.py BASE NEW --langs fi de --rounds 31

One process per checkout (each imports its own ``fastsw``; build its extension and warm its kernels first, e.g.
``python -c "from fastsw.encoding import encode_fast; encode_fast.warmup()"`` in it, or it measures the
dispatcher's path) runs ``encode_ordinary`` per document, then tiktoken's, over one language's documents a few
times and reports the CPU time of its thread. The two processes take turns, round by round (the order flips each
round), so whatever else the computer runs falls on both alike. Per language: the median over the rounds of the
time ratio NEW / BASE of fastsw (below 1: NEW is faster), with its quartiles, and each checkout's median of
fastsw / tiktoken's speed within its own rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LANGS = ["en", "de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]
#: passes over a language's held-out documents per turn (about 20-40 ms of fastsw's time each)
PASSES = {
    "en": 4,
    "de": 3,
    "fr": 3,
    "ru": 6,
    "fi": 30,
    "ar": 60,
    "ko": 12,
    "zh": 8,
    "ja": 6,
    "th": 4,
    "hi": 60,
    "my": 120,
}

WORKER = """
import sys, time
sys.path.insert(0, sys.argv[1])
import bench_tiktoken as B
from _corpus import SHARED, read_docs
tok, enc = B.fastsw_and_tiktoken("o200k_base")
docs_of = {}
print("ready", flush=True)
for line in sys.stdin:
    lang, passes = line.split()
    if lang not in docs_of:
        docs_of[lang] = read_docs(SHARED / f"corpus/{lang}/heldout.jsonl")[0]
        if [tok.encode_ordinary(d) for d in docs_of[lang]] != [enc.encode_ordinary(d) for d in docs_of[lang]]:
            raise SystemExit(f"{lang}: fastsw's ids differ from tiktoken's")
    docs = docs_of[lang]
    times = []
    for encode in (tok.encode_ordinary, enc.encode_ordinary):
        t0 = time.thread_time()
        for _ in range(int(passes)):
            for d in docs:
                encode(d)
        times.append((time.thread_time() - t0) / int(passes))
    print(*times, flush=True)
"""


def worker(checkout: Path) -> subprocess.Popen:
    """A process that imports the ``fastsw`` of ``checkout`` (through that checkout's own ``bench/``, whose scripts put
    their checkout first on ``sys.path``) and times a language's documents on request."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(checkout / "bench")],
        cwd=checkout,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit(f"{checkout}: the worker did not start")
    return proc


def turn(proc: subprocess.Popen, lang: str) -> tuple:
    """``(fastsw seconds, tiktoken seconds)`` of one pass over ``lang``'s documents in ``proc``."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"{lang} {PASSES[lang]}\n")
    proc.stdin.flush()
    fast, tik = map(float, proc.stdout.readline().split())
    return fast, tik


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+", type=Path, help="BASE [NEW] (NEW: this checkout)")
    parser.add_argument("--langs", nargs="+", default=LANGS, choices=LANGS)
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args()
    base, new = (args.checkouts + [HERE.parent])[:2]
    procs = {"base": worker(base.resolve()), "new": worker(new.resolve())}
    try:
        for lang in args.langs:
            got: dict = {"base": [], "new": []}
            for r in range(args.rounds + 1):  # round 0 warms up (and checks the ids)
                for who in ("base", "new") if r % 2 == 0 else ("new", "base"):
                    t = turn(procs[who], lang)
                    if r:
                        got[who].append(t)
            ratios = [n[0] / b[0] for b, n in zip(got["base"], got["new"])]
            q1, _, q3 = statistics.quantiles(ratios, n=4)
            speed = {who: statistics.median(t / f for f, t in got[who]) for who in got}
            print(
                f"{lang}: fastsw time new / base median {statistics.median(ratios):.3f} (quartiles {q1:.3f}-{q3:.3f});"
                f" fastsw / tiktoken base {speed['base']:.2f}, new {speed['new']:.2f}",
                flush=True,
            )
    finally:
        for proc in procs.values():
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()


if __name__ == "__main__":
    main()
