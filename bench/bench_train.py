"""Training benchmark: fastsw against HF tokenizers and rustbpe, measured in the same run.

Each trainer runs in its own subprocess on the same documents (the first N MB of
``../shared/corpus/en/train.jsonl.gz`` or a named language file), read into memory
before the clock starts, so wall time, CPU time and peak RSS belong to training
alone. Before any time is reported, fastsw's ``hf`` profile (simple GPT-4o split)
must produce exactly HF's merge list on the same input.

    python bench/bench_train.py --mb 10 --vocab 8192
    python bench/bench_train.py --mb 1 --vocab 4096 --trainers fastsw-bpe-paper,hf --lang de

Writes a markdown table to ``bench/results/train-<lang>-<mb>MB-<vocab>.md``.
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
SHARED = Path(os.environ.get("FASTSW_SHARED", HERE.parent.parent / "shared"))

ALL_TRAINERS = [
    "hf", "rustbpe",
    "fastsw-bpe-hf-simple",      # the configuration that must equal HF's merges
    "fastsw-bpe-paper",          # the paper's setting: script-aware pre-tokenization
    "fastsw-boundless-paper",
    "fastsw-superbpe-paper",
]


def load_docs(lang: str, mb: float):
    limit = int(mb * 1e6)
    path = SHARED / "corpus" / lang / "train.jsonl.gz"
    docs, size = [], 0
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            text = json.loads(line)["text"]
            docs.append(text)
            size += len(text.encode("utf-8"))
            if size >= limit:
                break
    return docs, size


def run_trainer(name: str, docs, vocab: int, backend: str, merges_out: str) -> dict:
    """Train once in this process; return timings and write the merges (hex pairs) to merges_out."""
    from fastsw import GPT4O_PATTERN
    stages = {}
    t0, c0 = time.perf_counter(), time.process_time()
    if name == "hf":
        from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
        from fastsw.alphabet import unrender
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(GPT4O_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        trainer = trainers.BpeTrainer(vocab_size=vocab, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        tok.train_from_iterator(docs, trainer)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        raw = json.loads(tok.to_str())["model"]["merges"]
        merges = [(unrender(a).hex(), unrender(b).hex())
                  for a, b in (m if isinstance(m, list) else m.split(" ") for m in raw)]
    elif name == "rustbpe":
        import rustbpe
        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(iter(docs), vocab, pattern=GPT4O_PATTERN)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        merges = []
    else:
        import fastsw
        _, algo, profile, *rest = name.split("-")
        kwargs = dict(algo=algo, vocab_size=vocab, profile=profile,
                      pretokenizer=rest[0] if rest else "script")
        if algo == "superbpe":
            kwargs["supermerges"] = vocab // 8
        if backend != "default":
            kwargs["backend"] = backend
        tok = fastsw.train(docs, **kwargs)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        stages = tok.training_info.get("seconds", {})
        merges = [(tok.vocab[m.left].hex(), tok.vocab[m.right].hex()) for m in tok.merges]
    Path(merges_out).write_text(json.dumps(merges))
    # ru_maxrss is in kB on Linux; this process holds the documents too, as every trainer's does
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"name": name, "wall": wall, "cpu": cpu, "rss_mb": rss_mb, "stages": stages}


def worker(args) -> None:
    docs, size = load_docs(args.lang, args.mb)
    result = run_trainer(args.worker, docs, args.vocab, args.backend, args.merges_out)
    result["bytes"] = size
    print(json.dumps(result))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mb", type=float, default=10)
    p.add_argument("--vocab", type=int, default=8192)
    p.add_argument("--lang", default="en")
    p.add_argument("--trainers", default=",".join(ALL_TRAINERS))
    p.add_argument("--backend", default="default", help="fastsw backend passed to train()")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--merges-out", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args)

    results, merges = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.trainers.split(","):
            out = os.path.join(tmp, f"{name}.json")
            cmd = [sys.executable, __file__, "--worker", name, "--merges-out", out, "--mb", str(args.mb),
                   "--vocab", str(args.vocab), "--lang", args.lang, "--backend", args.backend]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{name} failed:\n{proc.stderr}", file=sys.stderr)
                continue
            results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
            merges[name] = json.loads(Path(out).read_text())
            r = results[name]
            print(f"{name:26s} wall {r['wall']:8.2f}s  cpu {r['cpu']:8.2f}s  rss {r['rss_mb']:7.0f} MB",
                  file=sys.stderr)

    if "hf" in merges and "fastsw-bpe-hf-simple" in merges:
        same = merges["hf"] == merges["fastsw-bpe-hf-simple"]
        print(f"fastsw hf profile == HF merges: {same}", file=sys.stderr)
        if not same:
            sys.exit("fastsw's hf profile differs from HF's merges: no timings reported")

    size = next(iter(results.values()))["bytes"] if results else 0
    lines = [f"# Training benchmark: {args.lang}, {size / 1e6:.1f} MB, vocab {args.vocab}", "",
             "| trainer | wall s | cpu s | peak RSS MB | MB/s | wall / HF | wall / rustbpe | stages |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        hf = results.get("hf", {}).get("wall")
        rb = results.get("rustbpe", {}).get("wall")
        stages = ", ".join(f"{k} {v:.2f}" for k, v in r["stages"].items())
        lines.append(f"| {name} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['rss_mb']:.0f} | "
                     f"{size / 1e6 / r['wall']:.2f} | {r['wall'] / hf if hf else float('nan'):.2f} | "
                     f"{r['wall'] / rb if rb else float('nan'):.2f} | {stages} |")
    table = "\n".join(lines) + "\n"
    print(table)
    outdir = HERE / "results"
    outdir.mkdir(exist_ok=True)
    (outdir / f"train-{args.lang}-{args.mb:g}MB-{args.vocab}.md").write_text(table)


if __name__ == "__main__":
    main()
