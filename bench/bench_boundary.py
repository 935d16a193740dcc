"""Boundary markers and caps codes: training time against the default pre-tokenizer, vocabulary duplication and
compression, and the full-corpus check of the compiled segmentation against its Python reference.

    python bench/bench_boundary.py                   # 50 MB English, vocab 32768, BPE: default vs boundary[w,p,d]+caps
    python bench/bench_boundary.py --mb 10 --vocab 8192 --schemes "script;boundary[w];boundary[w,p,d]+caps"
    python bench/bench_boundary.py --check           # compiled == reference (and exact inverse) on all of ../shared/corpus
    python bench/bench_boundary.py --speed --mb 5    # counting MB/s on one thread, default vs schemes, per language

Each training runs in its own subprocess on the same documents (read into memory before the clock starts), so wall
time and peak RSS belong to training alone (counting + phase 1). The trained models are then compared on the English
held-out text: bytes per token (:func:`fastsw.eval.metrics.text_metrics`) and the share of vocabulary entries that
duplicate another by a leading space or by case (seed 002 Table 5, :func:`fastsw.eval.duplication.model_duplication`).
Writes ``bench/results/boundary-en-<mb>MB-<vocab>.md``. Ratios are against the default pre-tokenizer measured in the
same run (they move less than absolute times from run to run). ``--check`` asserts and prints counts; it times nothing.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's fastsw, also in the subprocesses
from _corpus import SHARED, read_docs  # noqa: E402


def train_one(scheme: str, mb: float, vocab: int, algo: str, out: str) -> dict:
    """Train in this process (the subprocess); save the model to ``out``; return the timings."""
    import fastsw

    docs, size = read_docs(SHARED / "corpus" / "en" / "train.jsonl.gz", int(mb * 1e6))
    t0, c0 = time.perf_counter(), time.process_time()
    tok = fastsw.train(docs, algo=algo, vocab_size=vocab, pretokenizer=scheme)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    tok.save(out)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MB (Linux reports kB)
    return {
        "scheme": scheme,
        "bytes": size,
        "wall": wall,
        "cpu": cpu,
        "peak_rss_mb": rss,
        "stages": tok.training_info["seconds"],
        "unique_pretokens": tok.training_info["unique_pretokens"],
    }


def measure(model_path: str, heldout) -> dict:
    import fastsw
    from fastsw.eval.duplication import model_duplication
    from fastsw.eval.metrics import text_metrics

    tok = fastsw.Tokenizer.load(model_path)
    m = text_metrics(tok, heldout)
    for doc in heldout[:200]:
        assert tok.decode(tok.encode(doc)) == doc
    best = float("inf")  # one-thread encoding speed, document by document, after the warm-up above
    for _ in range(3):
        t0 = time.perf_counter()
        for doc in heldout:
            tok.encode(doc)
        best = min(best, time.perf_counter() - t0)
    n_bytes = sum(len(doc.encode("utf-8")) for doc in heldout)
    return {
        "bytes_per_token": m["bytes_per_token"],
        "duplication": model_duplication(tok),
        "vocab_size": tok.vocab_size,
        "encode_mb_s": n_bytes / 1e6 / best,
    }


def run_benchmark(args) -> None:
    schemes = [s.strip() for s in args.schemes.split(";")]
    heldout = [json.loads(line)["text"] for line in open(SHARED / "corpus" / "en" / "heldout.jsonl", encoding="utf-8")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        # warm the Numba cache once, outside the timed runs
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                "script",
                "--mb",
                "0.2",
                "--vocab",
                "1000",
                "--out",
                os.path.join(tmp, "warm.json"),
            ],
            check=True,
            capture_output=True,
        )
        for scheme in schemes:
            out = os.path.join(tmp, f"{len(rows)}.json")
            res = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--one",
                    scheme,
                    "--mb",
                    str(args.mb),
                    "--vocab",
                    str(args.vocab),
                    "--algo",
                    args.algo,
                    "--out",
                    out,
                ],
                capture_output=True,
                text=True,
            )
            if res.returncode:
                raise SystemExit(f"training with {scheme} failed:\n{res.stderr}")
            timing = json.loads(res.stdout.strip().splitlines()[-1])
            timing.update(measure(out, heldout))
            rows.append(timing)
            print(json.dumps(timing), flush=True)
    base = rows[0]
    lines = [
        f"# Boundary markers: training and duplication, {args.mb:g} MB English, vocab {args.vocab}, algo {args.algo}",
        "",
        "Measured by `python bench/bench_boundary.py` with these options; times are "
        f"ratios against `{base['scheme']}` in the same run.",
        "",
        "| pre-tokenizer | wall s | × default | count s | phase 1 s | peak RSS MB | space dup. | case dup. | "
        "bytes/token (held-out) | encode MB/s (held-out, one thread) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        st = r["stages"]
        lines.append(
            f"| `{r['scheme']}` | {r['wall']:.1f} | {r['wall'] / base['wall']:.2f} | "
            f"{st.get('pretokenize_and_count', 0):.1f} | {st.get('phase1', 0):.1f} | {r['peak_rss_mb']:.0f} | "
            f"{100 * r['duplication']['space']:.1f} % | {100 * r['duplication']['case']:.1f} % | "
            f"{r['bytes_per_token']:.3f} | {r['encode_mb_s']:.1f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        path = HERE / "results" / f"boundary-en-{args.mb:g}MB-{args.vocab}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")


def _corpus_files():
    corpus = SHARED / "corpus"
    files = (
        sorted(corpus.glob("*/heldout.jsonl"))
        + sorted(corpus.glob("parallel/*.jsonl"))
        + sorted(corpus.glob("fixtures/*.txt"))
        + sorted(corpus.glob("*/train.jsonl.gz"), key=lambda p: p.stat().st_size)
    )
    return files  # the largest (English) last


def _docs_of(path: Path):
    if path.suffix == ".txt":
        yield from path.read_text(encoding="utf-8").splitlines(keepends=True)
        return
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)["text"]


def run_check(args) -> None:
    from fastsw.pretokenizers.boundary import BoundaryPretokenizer

    schemes = (
        [s.strip() for s in args.schemes.split(";")]
        if args.schemes != DEFAULT_SCHEMES
        else ["boundary[w]", "boundary[w,p]+upper", "boundary[w,p,d]+caps", "boundary[w,p,d]+shift"]
    )
    pretoks = [BoundaryPretokenizer(s) for s in schemes]
    assert all(p.compiled for p in pretoks), "build the extension first: python setup.py build_ext --inplace"
    total_docs = total_bytes = total_pieces = 0
    t0 = time.perf_counter()
    for path in _corpus_files():
        n_docs = 0
        for doc in _docs_of(path):
            for p in pretoks:
                fast = p.pretokenize(doc)
                if fast != p.pretokenize_reference(doc):
                    raise SystemExit(f"MISMATCH {p.name} in {path}: {doc[:200]!r}")
                if p.decode_text("".join(fast)) != doc:
                    raise SystemExit(f"NOT INVERTIBLE {p.name} in {path}: {doc[:200]!r}")
                total_pieces += len(fast)
            n_docs += 1
            total_bytes += len(doc.encode("utf-8"))
        total_docs += n_docs
        print(f"{path.relative_to(SHARED)}: {n_docs} documents identical and invertible", flush=True)
    print(
        f"all identical: {total_docs} documents, {total_bytes / 1e6:.1f} MB, {total_pieces} pretokens over "
        f"{len(schemes)} schemes ({', '.join(schemes)}), {time.perf_counter() - t0:.0f} s"
    )


DEFAULT_SCHEMES = "script;boundary[w,p,d]+caps"


def run_speed(args) -> None:
    """Counting speed on one thread (``count_corpus(threads=1)``, letter runs on, as training counts), each
    language's first ``--mb`` MB, every pre-tokenizer of ``--schemes`` round-robin, best of 3; ratios against the
    first."""
    from fastsw.corpus.counting import count_corpus
    from fastsw.pretokenizers.pretokenize import make_pretokenizer

    schemes = [s.strip() for s in args.schemes.split(";")]
    pretoks = [make_pretokenizer(s) for s in schemes]
    langs = [x.strip() for x in args.langs.split(",")]
    print(
        "| language | MB | "
        + " | ".join(f"`{s}` MB/s" for s in schemes)
        + " | "
        + " | ".join(f"`{s}` / `{schemes[0]}`" for s in schemes[1:])
        + " |"
    )
    print("|---" * (2 + 2 * len(schemes) - 1) + "|")
    for lang in langs:
        docs, size = read_docs(SHARED / "corpus" / lang / "train.jsonl.gz", int(args.mb * 1e6))
        best = [float("inf")] * len(pretoks)
        for _ in range(3):
            for k, p in enumerate(pretoks):
                t0 = time.perf_counter()
                count_corpus(docs, p, collect_runs=True, threads=1)
                best[k] = min(best[k], time.perf_counter() - t0)
        speeds = [size / 1e6 / b for b in best]
        print(
            f"| {lang} | {size / 1e6:.1f} | "
            + " | ".join(f"{v:.1f}" for v in speeds)
            + " | "
            + " | ".join(f"{v / speeds[0]:.2f}" for v in speeds[1:])
            + " |",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--vocab", type=int, default=32768)
    ap.add_argument("--algo", default="bpe")
    ap.add_argument("--schemes", default=DEFAULT_SCHEMES, help="pre-tokenizers separated by ';', the first is the base")
    ap.add_argument("--check", action="store_true", help="compiled == reference on all of ../shared/corpus")
    ap.add_argument("--no-write", action="store_true", help="do not write bench/results/")
    ap.add_argument("--speed", action="store_true", help="one-thread counting MB/s per language")
    ap.add_argument("--langs", default="en,de,ru,ar,hi,ko,ja,zh", help="languages of --speed")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(train_one(args.one, args.mb, args.vocab, args.algo, args.out)))
    elif args.check:
        run_check(args)
    elif args.speed:
        run_speed(args)
    else:
        run_benchmark(args)


if __name__ == "__main__":
    main()
