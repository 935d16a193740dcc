"""Fixed costs: short texts per call, and what a process pays before its first ids with tiktoken's vocabularies.

One command:

    python bench/bench_short.py                           # both vocabularies, 100,000 distinct snippets
    python bench/bench_short.py --quick                   # o200k_base, 20,000 snippets, 2 start-up runs
    python bench/bench_short.py --quick --json short.json # also the tables for bench/perfpage.py

Per call (one thread, one text per call): fastsw (``Tokenizer.load_tiktoken`` on the rank files of the
``bpe-openai`` package), tiktoken (a ``tiktoken.Encoding`` of the same ranks and pattern), rs-bpe and bpe-openai
(their built-in vocabularies) and HF ``tokenizers`` (the same conversion as ``bench/bench_tiktoken.py``), on

* one 29-character English sentence encoded again and again ("repeated");
* distinct snippets of 8 to 64 characters cut from the held-out text of the 12 corpus languages, shuffled,
  each encoded once per pass ("distinct": no two alike, so no cache of whole texts can help).

``encode_ordinary`` for every encoder; ``encode`` (tiktoken's special-token check) for fastsw and tiktoken. The
ids of every encoder are compared with tiktoken's on every input before anything is timed. The encoders take
turns (round-robin) for ``--rounds`` rounds; each one's best round counts, in CPU time (``time.process_time``):
CPU time moves less than wall time with whatever else the computer runs.

Start-up (each run in a new process, the median of ``--runs``): building fastsw's tokenizer with
``Tokenizer.from_tiktoken(enc)`` and with ``Tokenizer.load_tiktoken(path)``, the first time (fastsw's table cache
empty: a new ``FASTSW_CACHE_DIR``, Numba's cache kept) and warm; and from process start to the first ids of
``encode("hello world")`` (``python -c``: import, build from the same rank file, encode) for fastsw, tiktoken,
rs-bpe and bpe-openai (their built-in vocabularies), wall and CPU seconds.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _corpus import SHARED, read_docs  # noqa: E402
from _report import add_arguments, parse_args, rounded, sized, table, write_json  # noqa: E402

LANGS = ["en", "de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]
SENTENCE = "The cat sat on the mat today."  # 29 characters
ROUND_CALLS = 2000  # calls per timed block (the best block of each round counts)


def snippets(n: int, seed: int = 0) -> list:
    """``n`` distinct texts of 8 to 64 characters cut from every language's held-out text, shuffled."""
    rng = random.Random(seed)
    per_lang = -(-n // len(LANGS))
    out = []
    for lang in LANGS:
        docs, _ = read_docs(SHARED / "corpus" / lang / "heldout.jsonl")
        got = {}
        for doc in docs:
            for i in range(0, max(len(doc) - 8, 0), 13):
                s = doc[i : i + rng.randint(8, 64)]
                if len(s) >= 8:
                    got[s] = None
                    if len(got) >= per_lang:
                        break
            if len(got) >= per_lang:
                break
        out += list(got)
    out = list(dict.fromkeys(out))
    rng.shuffle(out)
    return out[:n]


def encoders(name: str):
    """``(fastsw tokenizer, tiktoken Encoding, {label: list of texts -> list of ids})``: the encoders of
    ``bench/bench_tiktoken.py`` (``encode_ordinary`` or its equivalent, one call per text), and fastsw's and
    tiktoken's ``encode``."""
    from bench_tiktoken import make_encoders

    tok, enc, out = make_encoders(name)
    fns = {f"{who} encode_ordinary": single for who, (single, _) in out.items()}
    fns["fastsw encode"] = lambda docs: [tok.encode(d) for d in docs]
    fns["tiktoken encode"] = lambda docs: [enc.encode(d) for d in docs]
    return tok, enc, fns


def per_call(fns: dict, texts: list, rounds: int) -> dict:
    """Best CPU microseconds per call of each encoder over ``texts``: in each round every encoder in turn encodes
    all of ``texts`` (blocks of ``ROUND_CALLS``), and its best round counts."""
    best = {k: float("inf") for k in fns}
    blocks = [texts[a : a + ROUND_CALLS] for a in range(0, len(texts), ROUND_CALLS)]
    for _ in range(rounds):
        for label, fn in fns.items():
            total = 0.0
            for block in blocks:
                t0 = time.process_time()
                fn(block)
                total += time.process_time() - t0
            best[label] = min(best[label], total / len(texts) * 1e6)
    return best


def check(fns: dict, enc, texts: list) -> dict:
    """The encoders whose ids equal tiktoken's on every text (fastsw disagreeing stops the run)."""
    ok = {}
    for label, fn in fns.items():
        want = [enc.encode(t) for t in texts] if label.endswith(" encode") else [enc.encode_ordinary(t) for t in texts]
        got = fn(texts)
        bad = next((t for t, g, w in zip(texts, got, want) if list(g) != w), None)
        if bad is None:
            ok[label] = fn
        elif label.startswith("fastsw"):
            raise SystemExit(f"{label} differs from tiktoken on {bad!r}")
        else:
            print(f"{label} differs from tiktoken on {bad!r}: not timed", file=sys.stderr)
    return ok


# ---- start-up ---------------------------------------------------------------------------------------------------

BUILD = """
import json, sys, time
import tiktoken, tiktoken.load, fastsw
from fastsw.io import tiktoken_vocab as tv
name, path = sys.argv[1], sys.argv[2]
pat = name.split("_")[0]
enc = tiktoken.Encoding(name, pat_str=tv.PATTERNS[pat], mergeable_ranks=tiktoken.load.load_tiktoken_bpe(path),
                        special_tokens=tv.SPECIAL_TOKENS[pat])
t0 = (time.perf_counter(), time.process_time())
a = fastsw.Tokenizer.from_tiktoken(enc)
t1 = (time.perf_counter(), time.process_time())
b = fastsw.Tokenizer.load_tiktoken(path)
t2 = (time.perf_counter(), time.process_time())
assert a.encode("hello world") == b.encode("hello world") == enc.encode("hello world")
print(json.dumps([[t1[0] - t0[0], t1[1] - t0[1]], [t2[0] - t1[0], t2[1] - t1[1]]]))
"""

FIRST_IDS = {  # process start to the first ids of encode("hello world"), all from the same plain rank file
    "fastsw": "import fastsw; print(fastsw.Tokenizer.load_tiktoken({path!r}).encode('hello world'))",
    "tiktoken": "import tiktoken, tiktoken.load; print(tiktoken.Encoding({name!r}, pat_str={pattern!r}, "
    "mergeable_ranks=tiktoken.load.load_tiktoken_bpe({path!r}), special_tokens={specials!r})"
    ".encode('hello world'))",
    "rs-bpe": "from rs_bpe.bpe import openai; print(openai.{name}().encode('hello world'))",
    "bpe-openai": "import bpe_openai; print(bpe_openai.get_encoding({name!r}).encode('hello world'))",
}


def run(args, env) -> tuple:
    """``((wall s, CPU s), stdout)`` of one child process (CPU: its user + system time), or ``(None, error)``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, cwd=HERE.parent)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1:]
    return (wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime), r.stdout


def startup(name: str, runs: int) -> list:
    """Rows ``[what, seconds]`` of the start-up figures (medians of ``runs`` processes)."""
    import fastsw  # noqa: F401 - sets NUMBA_CACHE_DIR (the user's cache folder), which the children keep

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), env.get("PYTHONPATH")]))
    from fastsw.io import tiktoken_vocab as tv

    rows = []
    builds = {"first": [], "warm": []}
    plain = tempfile.TemporaryDirectory()
    path = str(Path(plain.name) / f"{name}.tiktoken")  # the rank file as tiktoken reads it (not gzipped)
    Path(path).write_bytes(gzip.decompress(tv.bpe_openai_rank_file(name).read_bytes()))
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            env["FASTSW_CACHE_DIR"] = tmp  # fastsw's table cache; Numba's stays where `import fastsw` put it
            for key in ("first", "warm"):
                took, out = run(["-c", BUILD, name, path], env)
                if took is None:
                    raise SystemExit(f"building from tiktoken failed: {out}")
                builds[key].append(json.loads(out.splitlines()[-1]))
    for key in ("first", "warm"):
        for k, what in enumerate(("Tokenizer.from_tiktoken(enc)", "Tokenizer.load_tiktoken(path)")):
            rows.append(
                [f"{what}, {key} time"] + [rounded(statistics.median(b[k][c] for b in builds[key]), 3) for c in (0, 1)]
            )
    env.pop("FASTSW_CACHE_DIR")
    for who, code in FIRST_IDS.items():
        times = []
        for _ in range(runs + 1):  # the first run fills the caches
            took, out = run(
                [
                    "-c",
                    code.format(
                        name=name,
                        path=path,
                        pattern=tv.PATTERNS[name.split("_")[0]],
                        specials=tv.SPECIAL_TOKENS[name.split("_")[0]],
                    ),
                ],
                env,
            )
            if took is None:
                print(f"{who} start-up failed: {out}", file=sys.stderr)
                break
            times.append(took)
        if len(times) > 1:
            rows.append(
                [f"process start to first ids: {who}"]
                + [rounded(statistics.median(t[c] for t in times[1:]), 3) for c in (0, 1)]
            )
    plain.cleanup()
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(p, quick="o200k_base only, 20,000 snippets, 2 start-up runs")
    p.add_argument("--vocabs", nargs="+", default=None, help="o200k_base, cl100k_base (default: both)")
    p.add_argument("--snippets", type=int, default=None, help="distinct snippets (default 100,000)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=None, help="processes per start-up figure (default 3)")
    a = parse_args(p, argv)
    vocabs = a.vocabs or (["o200k_base"] if a.quick else ["o200k_base", "cl100k_base"])
    n = a.snippets or sized(a, 100_000, 20_000, 300)
    runs = a.runs or sized(a, 3, 2, 1)
    if a.smoke:
        a.rounds = 1
    texts = snippets(n)
    print(f"{len(texts)} distinct snippets", file=sys.stderr)
    tables = []
    for name in vocabs:
        tok, enc, fns = encoders(name)
        fns = check(fns, enc, texts[:5000] + [SENTENCE])
        rows = []
        for kind, inputs in (("repeated", [SENTENCE] * len(texts)), ("distinct", texts)):
            got = per_call(fns, inputs, a.rounds)
            for label, us in got.items():
                who, method = label.split(" ", 1)
                base = got[f"tiktoken {method}"] if f"tiktoken {method}" in got else got["tiktoken encode_ordinary"]
                rows.append([kind, who, method, rounded(us, 3), rounded(us / base, 3)])
                print(f"{name} {kind:9} {label:26} {us:7.2f} us  {us / base:5.2f} x tiktoken", file=sys.stderr)
        tables.append(
            table(
                f"Short texts, {name}: microseconds per call (CPU, one thread)",
                ["texts", "encoder", "method", "us per call", "x tiktoken's time"],
                rows,
                f"repeated: {SENTENCE!r} ({len(SENTENCE)} characters) over and over; distinct: "
                f"{len(texts):,} different snippets of 8-64 characters from the 12 languages' held-out "
                "text. Lower is better; the target is <= 0.8 x tiktoken's time.",
            )
        )
        srows = startup(name, runs)
        for r in srows:
            print(f"{name} {r[0]:55} wall {r[1]} s  CPU {r[2]} s", file=sys.stderr)
        tables.append(
            table(
                f"Start-up, {name}: seconds (median of {runs} processes)",
                ["step", "wall s", "CPU s"],
                srows,
                "first time: fastsw's table cache empty (Numba's kernels cached); warm: the "
                "tables cached (both timed inside one process; CPU: its process time). Process start "
                "to first ids: `python -c` importing the library, building the encoding from the same "
                "rank file and encoding one short text, caches warm (CPU: the child's user + system "
                "time). CPU time moves less than wall time with whatever else the computer runs.",
            )
        )
    if a.json:
        write_json(a.json, tables)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
