"""Training benchmark: fastsw against HF tokenizers and rustbpe, measured in the same run.

Each trainer runs in its own subprocess on the same documents (the first N MB of
``../shared/corpus/en/train.jsonl.gz`` or a named language file), read into memory
before the clock starts, so wall time, CPU time and peak RSS belong to training
alone. Before any time is reported, fastsw's ``hf`` profile (simple GPT-4o split)
must produce exactly HF's merge list on the same input.

    python bench/bench_train.py --mb 10 --vocab 8192
    python bench/bench_train.py --mb 1 --vocab 4096 --trainers fastsw-bpe-paper,hf --lang de
    python bench/bench_train.py --sweep          # the whole grid below, with plots
    python bench/bench_train.py --quick --json train.json   # English 5 MB, vocab 8192 (for bench/perfpage.py)

One configuration writes ``bench/results/train-<lang>-<mb>MB-<vocab>.md``; ``--sweep``
runs English at 10/50/100 MB (vocab 32768), English 50 MB at vocab 8192/32768/131072
and every other language's training file at vocab 8192, the pure-Python reference
path only at 10 MB, and writes ``bench/results/sweep.md``, ``sweep.json`` and PNG
plots (time vs corpus size, time vs vocabulary size, stage breakdown).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
from _corpus import SHARED, read_docs  # noqa: E402  (bench/ is on sys.path when run as a script)
from _report import add_arguments, missing_peers, parse_args, rounded, sized, table as json_table, write_json  # noqa: E402

ALL_TRAINERS = [
    "hf",
    "rustbpe",
    "fastsw-bpe-hf-simple",  # the configuration that must equal HF's merges
    "fastsw-bpe-paper",  # the paper's setting: script-aware pre-tokenization
    "fastsw-boundless-paper",
    "fastsw-superbpe-paper",
]

#: the peers: trainer name -> module
PEERS = {"hf": "tokenizers", "rustbpe": "rustbpe"}


def load_docs(lang: str, mb: float):
    return read_docs(SHARED / "corpus" / lang / "train.jsonl.gz", int(mb * 1e6))


def run_trainer(name: str, docs, vocab: int, backend: str, merges_out: str) -> dict:
    """Train once in this process; return timings and write the merges (hex pairs) to merges_out."""
    from fastsw import GPT4O_PATTERN

    stages = {}
    t0, c0 = time.perf_counter(), time.process_time()
    if name == "hf":
        from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
        from fastsw.alphabet import unrender

        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(GPT4O_PATTERN), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        trainer = trainers.BpeTrainer(
            vocab_size=vocab, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        )
        tok.train_from_iterator(docs, trainer)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        raw = json.loads(tok.to_str())["model"]["merges"]
        merges = [
            (unrender(a).hex(), unrender(b).hex()) for a, b in (m if isinstance(m, list) else m.split(" ") for m in raw)
        ]
    elif name == "rustbpe":
        import rustbpe

        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(iter(docs), vocab, pattern=GPT4O_PATTERN)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        merges = []
    else:
        import fastsw

        _, algo, profile, *rest = name.split("-")
        kwargs = dict(algo=algo, vocab_size=vocab, profile=profile, pretokenizer=rest[0] if rest else "script")
        if algo == "superbpe":
            kwargs["supermerges"] = vocab // 8
        if backend != "default":
            kwargs["backend"] = backend
        tok = fastsw.train(docs, **kwargs)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        stages = dict(tok.training_info.get("seconds", {}))
        # the wall time outside the stages: Numba's set-up before counting (jit_warmup too when the kernels compile
        # rather than load beside the counting) and building the model from the merges (its reachability check)
        stages["rest"] = max(wall - sum(v for k, v in stages.items() if k != "jit_warmup"), 0.0)
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


def run_config(lang: str, mb: float, vocab: int, trainers, backend: str = "default") -> dict:
    """Run each trainer on one configuration in its own subprocess; check the hf identity."""
    results, merges = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in trainers:
            be = "python" if name.endswith("-ref") else backend
            base = name[:-4] if name.endswith("-ref") else name
            out = os.path.join(tmp, f"{name}.json")
            cmd = [
                sys.executable,
                __file__,
                "--worker",
                base,
                "--merges-out",
                out,
                "--mb",
                str(mb),
                "--vocab",
                str(vocab),
                "--lang",
                lang,
                "--backend",
                be,
            ]
            # '-ref' is the whole pure-Python reference path: regex pre-tokenization,
            # Python counting and Python merge loops (FASTSW_PUREPYTHON=1)
            env = dict(os.environ, FASTSW_PUREPYTHON="1") if name.endswith("-ref") else None
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                print(f"{name} failed:\n{proc.stderr}", file=sys.stderr)
                continue
            results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
            results[name]["name"] = name
            merges[name] = json.loads(Path(out).read_text())
            r = results[name]
            print(
                f"{lang} {mb:g}MB v{vocab} {name:30s} wall {r['wall']:8.2f}s  cpu {r['cpu']:8.2f}s  "
                f"rss {r['rss_mb']:7.0f} MB",
                file=sys.stderr,
            )
    if "hf" in merges and "fastsw-bpe-hf-simple" in merges:
        if merges["hf"] != merges["fastsw-bpe-hf-simple"]:
            sys.exit(f"{lang} {mb} MB vocab {vocab}: fastsw's hf profile differs from HF's merges; no timings reported")
        print("fastsw hf profile == HF merges: True", file=sys.stderr)
    for name in merges:  # the fast path must give the reference path's model before times count
        if name.endswith("-ref") and name[:-4] in merges and merges[name] != merges[name[:-4]]:
            sys.exit(f"{lang} {mb} MB vocab {vocab}: {name[:-4]} differs from the reference path; no timings reported")
    size = next(iter(results.values()))["bytes"] if results else 0
    return {"lang": lang, "mb": mb, "vocab": vocab, "bytes": size, "results": results}


def json_tables(config: dict, missing) -> dict:
    """The table ``bench/perfpage.py`` renders: one row per trainer, ratios to HF and rustbpe."""
    results, size = config["results"], config["bytes"]
    hf = results.get("hf", {}).get("wall")
    rb = results.get("rustbpe", {}).get("wall")
    rows = []
    for name, r in results.items():
        rows.append(
            [
                name,
                rounded(r["wall"]),
                rounded(r["cpu"]),
                rounded(r["rss_mb"], 0),
                rounded(size / 1e6 / r["wall"]),
                rounded(r["wall"] / hf) if hf else None,
                rounded(r["wall"] / rb) if rb else None,
            ]
        )
    notes = (
        f"{config['lang']} training text, {size / 1e6:.1f} MB held in memory, vocab {config['vocab']}; each "
        "trainer in its own process (wall and CPU seconds of training alone; peak RSS of the process, which "
        "holds the documents too). fastsw-bpe-hf-simple gave exactly HF's merge list before any time was "
        "kept. fastsw's wall time includes loading its compiled kernels (jit_warmup; from a warm cache they load "
        "in a thread while the corpus is counted, so that stage overlaps pretokenize_and_count and the stages add "
        "up to more than the wall time); 'rest' is the wall time outside the other stages: Numba's set-up before "
        "counting and building the model from the merges. 'wall / HF' below 1: faster than HF."
    )
    if missing:
        notes += " Not run: " + "; ".join(missing) + "."
    return json_table(
        f"Training: fastsw against HF tokenizers and rustbpe ({config['lang']}, "
        f"{size / 1e6:.1f} MB, vocab {config['vocab']})",
        ["trainer", "wall s", "cpu s", "peak RSS MB", "MB/s", "wall / HF", "wall / rustbpe"],
        rows,
        notes,
    )


def table(config: dict) -> str:
    results, size = config["results"], config["bytes"]
    lines = [
        f"### {config['lang']}, {size / 1e6:.1f} MB, vocab {config['vocab']}",
        "",
        "| trainer | wall s | cpu s | peak RSS MB | MB/s | wall / HF | wall / rustbpe | cpu / rustbpe | stages |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    hf = results.get("hf", {}).get("wall")
    rb = results.get("rustbpe", {}).get("wall")
    rb_cpu = results.get("rustbpe", {}).get("cpu")
    for name, r in results.items():
        stages = ", ".join(f"{k} {v:.2f}" for k, v in r["stages"].items())
        lines.append(
            f"| {name} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['rss_mb']:.0f} | "
            f"{size / 1e6 / r['wall']:.2f} | {r['wall'] / hf if hf else float('nan'):.2f} | "
            f"{r['wall'] / rb if rb else float('nan'):.2f} | {r['cpu'] / rb_cpu if rb_cpu else float('nan'):.2f} | "
            f"{stages} |"
        )
    for algo in ("boundless", "superbpe"):
        fast, ref = results.get(f"fastsw-{algo}-paper"), results.get(f"fastsw-{algo}-paper-ref")
        bpe = results.get("fastsw-bpe-paper")
        if fast and bpe:
            lines.append(
                f"\n{algo}: wall / fastsw BPE = {fast['wall'] / bpe['wall']:.2f}"
                + (f"; reference / fastsw = {ref['wall'] / fast['wall']:.1f}x" if ref else "")
            )
    return "\n".join(lines) + "\n"


def plots(configs, outdir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def series(select, key):
        chosen = sorted((c for c in configs if select(c)), key=lambda c: c[key])
        names = sorted({n for c in chosen for n in c["results"] if not n.endswith("-ref")})
        return chosen, names

    for key, select, fname, xlabel in [
        ("mb", lambda c: c["lang"] == "en" and c["vocab"] == 32768, "time_vs_size.png", "corpus MB (English)"),
        ("vocab", lambda c: c["lang"] == "en" and c["mb"] == 50, "time_vs_vocab.png", "vocabulary size"),
    ]:
        chosen, names = series(select, key)
        if len(chosen) < 2:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        for n in names:
            pts = [(c[key], c["results"][n]["wall"]) for c in chosen if n in c["results"]]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=n)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("wall seconds")
        if key == "vocab":
            ax.set_xscale("log", base=2)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(outdir / fname, dpi=120)
        plt.close(fig)

    # stage breakdown (paper's Table 1 / Figure 5): the largest English configuration at vocab 32768
    chosen = [c for c in configs if c["lang"] == "en" and c["vocab"] == 32768]
    if chosen:
        c = max(chosen, key=lambda c: c["mb"])
        names = [n for n in c["results"] if n.startswith("fastsw") and c["results"][n]["stages"]]
        stages = ["jit_warmup", "pretokenize_and_count", "phase1", "aggregate_candidates", "phase2", "rest"]
        fig, ax = plt.subplots(figsize=(7, 4))
        bottom = [0.0] * len(names)
        for st in stages:
            vals = [c["results"][n]["stages"].get(st, 0.0) for n in names]
            ax.bar(names, vals, bottom=bottom, label=st)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_ylabel("seconds")
        ax.set_title(f"fastsw stages, English {c['mb']:g} MB, vocab 32768")
        ax.tick_params(axis="x", labelrotation=30, labelsize=7)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(outdir / "stages.png", dpi=120)
        plt.close(fig)


SWEEP_LANGS = ["de", "fr", "ru", "fi", "ar", "ko", "zh", "ja", "th", "hi", "my"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mb", type=float, default=None, help="MB of training text (default 10; --quick: 5)")
    p.add_argument("--vocab", type=int, default=None, help="vocabulary size (default 8192)")
    p.add_argument("--lang", default="en")
    p.add_argument(
        "--trainers",
        default=",".join(ALL_TRAINERS),
        help="comma-separated; a '-ref' suffix runs a fastsw trainer on the pure-Python "
        "reference path (FASTSW_PUREPYTHON=1)",
    )
    p.add_argument("--backend", default="default", help="fastsw backend passed to train()")
    p.add_argument("--sweep", action="store_true", help="run the whole grid and draw plots")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--merges-out", help=argparse.SUPPRESS)
    add_arguments(p)
    args = parse_args(p)
    if args.mb is None:
        args.mb = sized(args, 10, 5, 0.05)
    if args.vocab is None:
        args.vocab = sized(args, 8192, 8192, 600)
    if args.worker:
        return worker(args)
    outdir = HERE / "results"
    outdir.mkdir(exist_ok=True)
    if not args.sweep:
        trainers = args.trainers.split(",")
        missing = missing_peers({peer: module for peer, module in PEERS.items() if peer in trainers})
        trainers = [t for t in trainers if t not in missing]
        missing = [f"{peer} ({PEERS[peer]} is not installed)" for peer in missing]
        config = run_config(args.lang, args.mb, args.vocab, trainers, args.backend)
        if args.json:
            write_json(args.json, json_tables(config, missing))
        text = table(config)
        print(text)
        (outdir / f"train-{args.lang}-{args.mb:g}MB-{args.vocab}.md").write_text(text)
        return

    fast = list(ALL_TRAINERS)
    refs = ["fastsw-bpe-paper-ref", "fastsw-boundless-paper-ref", "fastsw-superbpe-paper-ref"]
    grid = [
        ("en", 10, 32768, fast + refs),
        ("en", 50, 32768, fast),
        ("en", 100, 32768, fast),
        ("en", 50, 8192, fast),
        ("en", 50, 131072, fast),
    ]
    grid += [
        (lang, 5, 8192, ["hf", "rustbpe", "fastsw-bpe-paper", "fastsw-boundless-paper", "fastsw-superbpe-paper"])
        for lang in SWEEP_LANGS
    ]
    configs = []
    for lang, mb, vocab, trainers in grid:
        configs.append(run_config(lang, mb, vocab, trainers, args.backend))
        (outdir / "sweep.json").write_text(json.dumps(configs, indent=1))
    text = "# Training benchmark sweep\n\n" + "\n".join(table(c) for c in configs)
    (outdir / "sweep.md").write_text(text)
    plots(configs, outdir)
    print(text)


if __name__ == "__main__":
    main()
