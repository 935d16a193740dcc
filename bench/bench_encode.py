"""Encoding benchmark: fastsw's fast path against its reference path, tiktoken and HF tokenizers.

One command:

    python bench/bench_encode.py                 # vocab 32768 and 131072, 20 MB of training text
    python bench/bench_encode.py --quick         # vocab 32768 only, smaller inputs (a smoke run)

Models (trained by fastsw on the first ``--train-mb`` MB of ``../shared/corpus/en/train.jsonl.gz``
with ``backend="numba"``, cached in ``bench/results/models/``): plain BPE with the ``simple``
pre-tokenizer at each vocabulary size (so tiktoken and HF can reproduce it exactly), and a
BoundlessBPE and a SuperBPE model at the first vocabulary size with the same pre-tokenizer.

Inputs: the English held-out set, ``--text-mb`` MB of training text, each language's held-out
set, and the worst cases ``"a" * 1_000_000`` and 1 MB of random Unicode next to 1 MB of
ordinary text. For every input, each encoder's ids are compared with fastsw's before anything
is timed; a disagreement stops the run. Times are the best of ``--repeat`` runs
(``time.perf_counter_ns``), after a warm-up run. Writes ``bench/results/encode-<tag>.md``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path


HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
SHARED = Path(os.environ.get("FASTSW_SHARED", HERE.parent.parent / "shared"))
LANGS = ["en", "de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]

import fastsw  # noqa: E402
from _corpus import read_docs as _read_docs  # noqa: E402
from fastsw.encoding import encode_fast as fast_encode  # noqa: E402


def read_docs(path: Path, limit_bytes=None, skip_bytes: int = 0):
    return _read_docs(path, limit_bytes, skip_bytes)[0]


def nbytes(docs) -> int:
    return sum(len(d.encode("utf-8")) for d in docs)


def model(name: str, train_docs, models_dir: Path, **kwargs):
    path = models_dir / f"{name}.json"
    if path.exists():
        return fastsw.load(path)
    t0 = time.perf_counter()
    tok = fastsw.train(train_docs, backend="numba", pretokenizer="simple", **kwargs)
    print(f"trained {name} in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    tok.save(path)
    return tok


def best_of(fn, repeat: int) -> float:
    fn()  # warm-up (JIT, caches, thread pools)
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn()
        dt = time.perf_counter_ns() - t0
        best = dt if best is None else min(best, dt)
    return best / 1e9


class Encoders:
    """The encoders of one model, each a function ``docs -> list of id lists``."""

    def _reference(self, docs):
        # The reference path keeps a pretoken -> ids cache across calls; timing the same
        # documents again would find every pretoken cached, so each run starts empty.
        self.tok._cache.clear()
        return [self.tok.encode_ordinary(d, backend="python") for d in docs]

    def __init__(self, tok, threads: int, peers: bool, tmp: Path, name: str):
        self.tok = tok
        self.fns = {
            "fastsw": lambda docs: [tok.encode_ordinary(d, backend="numba") for d in docs],
            "fastsw batch": lambda docs: tok.encode_batch_to_numpy(docs, num_threads=threads),
            "fastsw reference": self._reference,
        }
        if peers:
            enc = tok.to_tiktoken()
            self.fns["tiktoken"] = lambda docs: [enc.encode_ordinary(d) for d in docs]
            self.fns["tiktoken batch"] = lambda docs: enc.encode_ordinary_batch(docs, num_threads=threads)
            import tokenizers

            path = tmp / f"{name}.tokenizer.json"
            info = tok.save_hf(path, allow_approximate=True)
            if not info["exact"]:
                print(f"HF export of {name} is not exact: {info['reasons']}", file=sys.stderr)
            hf = tokenizers.Tokenizer.from_file(str(path))
            self.fns["HF"] = lambda docs: [hf.encode(d, add_special_tokens=False).ids for d in docs]
            self.fns["HF batch"] = lambda docs: [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)]


def as_lists(result):
    if isinstance(result, tuple):
        ids, off = result
        flat, b = ids.tolist(), off.tolist()
        return [flat[x:y] for x, y in zip(b, b[1:])]
    return [list(r) for r in result]


def measure(encoders: Encoders, docs, names, repeat: int, ref_limit=None, strict: bool = True, notes=None):
    """{encoder: (seconds, n_tokens)} after checking every encoder's ids against fastsw's.

    A disagreement stops the run (``strict``) or, for the synthetic worst cases,
    leaves that encoder untimed with a line in ``notes``."""
    expected = as_lists(encoders.fns["fastsw batch"](docs))
    out = {}
    for name in names:
        fn = encoders.fns.get(name)
        if fn is None:
            continue
        if name == "fastsw reference" and ref_limit is not None and nbytes(docs) > ref_limit:
            continue
        got = as_lists(fn(docs))
        if got != expected:
            bad = sum(g != e for g, e in zip(got, expected))
            msg = f"{name} disagrees with fastsw on {bad} of {len(docs)} documents"
            if strict:
                sys.exit(msg + "; no timings reported")
            first = (
                next(i for i, (g, e) in enumerate(zip(got[0], expected[0])) if g != e)
                if len(docs) == 1 and got[0] != expected[0]
                else None
            )
            if first is not None:
                piece = encoders.tok.decode_bytes(expected[0][max(first - 2, 0) : first + 3])
                msg += f" (first difference at token {first}, around {piece!r})"
            notes.append(msg + "; not timed")
            continue
        out[name] = (best_of(lambda: fn(docs), repeat), sum(map(len, expected)))
    return out


def row(label, size, results, base_names=("tiktoken", "tiktoken batch", "fastsw reference")):
    cells = []
    for name, (sec, ntok) in results.items():
        cells.append((name, size / 1e6 / sec, ntok / sec / 1e6))
    lines = []
    for name, mbs, mtoks in cells:
        ratios = []
        for base in base_names:
            if base in results and base != name:
                ratios.append(f"{mbs / (size / 1e6 / results[base][0]):.2f}x {base}")
        lines.append(f"| {label} | {name} | {mbs:.2f} | {mtoks:.2f} | {', '.join(ratios)} |")
    return lines


def random_unicode(size: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    chars, n = [], 0
    while n < size:
        cp = rng.randrange(0x110000)
        if 0xD800 <= cp < 0xE000:
            continue
        c = chr(cp)
        chars.append(c)
        n += len(c.encode("utf-8"))
    return "".join(chars)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train-mb", type=float, default=20)
    ap.add_argument("--text-mb", type=float, default=10)
    ap.add_argument("--vocabs", default="32768,131072")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--quick", action="store_true", help="vocab 32768, 5 MB training, 2 MB of text")
    args = ap.parse_args()
    if args.quick:
        args.train_mb, args.text_mb, args.vocabs, args.repeat = 5, 2, "32768", 2
    vocabs = [int(v) for v in args.vocabs.split(",")]
    models_dir = HERE / "results" / "models"
    models_dir.mkdir(parents=True, exist_ok=True)

    t0 = time.perf_counter()
    fast_encode.warmup()
    warm = time.perf_counter() - t0
    train_path = SHARED / "corpus" / "en" / "train.jsonl.gz"
    train_docs = None
    names = {}
    tag = f"en{args.train_mb:g}MB"
    for v in vocabs:
        path = models_dir / f"bpe-simple-{v}-{tag}.json"
        if not path.exists() and train_docs is None:
            train_docs = read_docs(train_path, int(args.train_mb * 1e6))
        names[f"BPE {v}"] = model(f"bpe-simple-{v}-{tag}", train_docs, models_dir, algo="bpe", vocab_size=v)
    v0 = vocabs[0]
    for algo, extra in (("boundless", {}), ("superbpe", {"supermerges": v0 // 8})):
        path = models_dir / f"{algo}-simple-{v0}-{tag}.json"
        if not path.exists() and train_docs is None:
            train_docs = read_docs(train_path, int(args.train_mb * 1e6))
        names[f"{algo} {v0}"] = model(
            f"{algo}-simple-{v0}-{tag}", train_docs, models_dir, algo=algo, vocab_size=v0, **extra
        )
    train_docs = None

    heldout_en = read_docs(SHARED / "corpus" / "en" / "heldout.jsonl")
    # training text the models saw (the first --text-mb MB); what matters is speed, not novelty
    text10 = read_docs(train_path, int(args.text_mb * 1e6))
    ordinary_1mb = ["".join(read_docs(train_path, 1_000_000))[:1_000_000]]
    worst = {
        "1 MB ordinary text (one doc)": ordinary_1mb,
        '"a" * 1_000_000': ["a" * 1_000_000],
        "1 MB random Unicode": [random_unicode(1_000_000)],
    }
    heldouts = {lang: read_docs(SHARED / "corpus" / lang / "heldout.jsonl") for lang in LANGS}

    # building a Tokenizer (token table, rank tables, reachability and the shortcut table,
    # the fast encoder's tables on first use): training builds two for the superword algorithms
    build = {}
    for mname, tok in names.items():
        kwargs = dict(
            alphabet=tok.alphabet,
            merges=[m[1:] for m in tok.merges],
            pretokenizer=tok.pretokenizer,
            profile=tok.profile,
            algo=tok.algo,
        )
        build[mname] = (
            best_of(lambda: fastsw.Tokenizer(**kwargs), 2),
            best_of(lambda: fast_encode.FastEncoder(tok._encoder_tables()), 2),
        )

    lines = [
        f"# Encoding benchmark ({time.strftime('%Y-%m-%d')})",
        "",
        f"Machine: {os.cpu_count()} cores; batch encoders use {args.threads} threads. Models trained "
        f'by fastsw on the first {args.train_mb:g} MB of en/train.jsonl.gz, `pretokenizer="simple"`. '
        f"Best of {args.repeat} runs after a warm-up run; every encoder's ids were checked equal to "
        f"fastsw's before timing. JIT warm-up (compile or cache load): {warm:.2f}s.",
        "",
        "| input | encoder | MB/s | M tokens/s | ratios |",
        "|---|---|---|---|---|",
    ]
    summary = {}
    notes = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        all_enc = ["fastsw", "fastsw batch", "tiktoken", "tiktoken batch", "HF", "HF batch", "fastsw reference"]
        for mname, tok in names.items():
            peers = tok.algo == "bpe"
            enc = Encoders(tok, args.threads, peers, tmp, mname.replace(" ", "-"))
            print(f"{mname}: {tok}", file=sys.stderr)
            for label, docs in (
                (f"{mname}: en held-out", heldout_en),
                (f"{mname}: {args.text_mb:g} MB en train", text10),
            ):
                res = measure(enc, docs, all_enc, args.repeat, ref_limit=12e6)
                lines += row(label, nbytes(docs), res)
                summary[label] = {k: nbytes(docs) / 1e6 / s for k, (s, _) in res.items()}
                print("\n".join(row(label, nbytes(docs), res)), file=sys.stderr)
            if mname == f"BPE {v0}" or not peers:
                for lang, docs in heldouts.items():
                    res = measure(enc, docs, ["fastsw", "fastsw batch", "tiktoken", "fastsw reference"], args.repeat)
                    label = f"{mname}: {lang} held-out (per language)"
                    lines += row(label, nbytes(docs), res)
                    summary[label] = {k: nbytes(docs) / 1e6 / s for k, (s, _) in res.items()}
            for label, docs in worst.items():
                # the reference path is O(n * distinct ranks) on one huge pretoken: not timed here
                before = len(notes)
                res = measure(enc, docs, ["fastsw", "tiktoken"], args.repeat, strict=False, notes=notes)
                notes[before:] = [f"{mname}, {label}: {n}" for n in notes[before:]]
                lines += row(f"{mname}: {label}", nbytes(docs), res)
                summary[f"{mname}: {label}"] = {k: nbytes(docs) / 1e6 / s for k, (s, _) in res.items()}

    lines += [
        "",
        "## Building a tokenizer",
        "",
        "| model | Tokenizer(...) s | fast encoder tables s |",
        "|---|---|---|",
    ]
    lines += [f"| {mname} | {a:.3f} | {b:.3f} |" for mname, (a, b) in build.items()]
    lines += ["", "## Targets", ""]
    for mname in names:
        for inp in ("en held-out", f"{args.text_mb:g} MB en train"):
            s = summary.get(f"{mname}: {inp}", {})
            if "tiktoken" in s:
                lines.append(
                    f"- {mname}, {inp}: fastsw single / tiktoken single = "
                    f"{s['fastsw'] / s['tiktoken']:.2f} (target >= 1.5); fastsw batch / tiktoken batch = "
                    f"{s['fastsw batch'] / s['tiktoken batch']:.2f} (target >= 1.0)"
                )
            if "fastsw reference" in s:
                lines.append(
                    f"- {mname}, {inp}: fastsw / reference = {s['fastsw'] / s['fastsw reference']:.1f}x"
                    + (" (target >= 20 for superword models)" if not mname.startswith("BPE") else "")
                )
            base = summary.get(f"BPE {v0}: {inp}", {})
            if not mname.startswith("BPE") and base:
                lines.append(
                    f"- {mname}, {inp}: fastsw / fastsw BPE {v0} = {s['fastsw'] / base['fastsw']:.2f} (target >= 0.8)"
                )
        w = summary.get(f"{mname}: 1 MB ordinary text (one doc)", {}).get("fastsw")
        for label in ('"a" * 1_000_000', "1 MB random Unicode"):
            x = summary.get(f"{mname}: {label}", {}).get("fastsw")
            if w and x:
                lines.append(f"- {mname}, {label}: time / time of 1 MB ordinary text = {w / x:.2f} (target <= 2)")
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    out = HERE / "results" / f"encode-{tag}-{'-'.join(map(str, vocabs))}.md"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
