"""Scale benchmark: training time and peak RSS against corpus size, 10 MB to 5 GB, fastsw against HF and rustbpe.

    python bench/bench_scale.py                       # the whole grid (hours), with plots
    python bench/bench_scale.py --sizes 10MB,100MB --trainers fastsw-bpe,fastsw-boundless
    python bench/bench_scale.py --sizes 5GB --cap-gb 20
    python bench/bench_scale.py --quick --json scale.json   # 3 MB and 10 MB only, every trainer

Sizes up to 100 MB are prefixes of the real English corpus (``$FASTSW_SHARED/corpus/en/train.jsonl.gz``); above,
**synthetic** text from ``bench/synth_corpus.py`` (seed 0; its distinct pretokens and candidates follow the Heaps'
law fitted on the real text). The inputs are JSONL files under ``$FASTSW_DATA`` (default
``~/.cache/fastsw/bench-data``), made on first use.
Every trainer runs in its own process and streams the file (fastsw reads the path; HF's and rustbpe's
``train_from_iterator`` get a generator over it), so no trainer holds the text and peak RSS is the trainer's own.
With ``--lock FILE`` (or ``$FASTSW_BENCH_LOCK``) each run holds an exclusive ``flock`` on FILE, so that
benchmarks started by several people on one computer take turns. Each run is under an address-space limit
(``--cap-gb``, default 14): a trainer that does not fit fails instead of swapping and is reported as "did not fit".
Peers run up to ``--peer-max`` (default 1 GB), fastsw's superword algorithms up to ``--fastsw-max`` (5 GB: only
BoundlessBPE by default at 5 GB, ``--at-5gb``).

Vocab 32768 (SuperBPE: 4096 of them supermerges); fastsw uses its paper profile and script pre-tokenizer, HF and
rustbpe the GPT-4o pattern (as ``bench/bench_train.py``). Writes ``bench/results/scale.md``, ``scale.json``,
``scale_time.png`` and ``scale_rss.png`` (``--quick``: ``scale-quick.*``); ``--json OUT`` writes the table for
``bench/perfpage.py``.
"""

from __future__ import annotations

import argparse
import fcntl
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
import synth_corpus  # noqa: E402
from _corpus import SHARED, read_docs  # noqa: E402
from _report import add_arguments, missing_peers, parse_args, rounded, sized, table as json_table, write_json  # noqa: E402

REAL_MAX = 100 * 10**6
TRAINERS = ["fastsw-bpe", "fastsw-boundless", "fastsw-superbpe", "rustbpe", "hf"]
SIZES = ["10MB", "30MB", "100MB", "300MB", "1GB", "5GB"]
QUICK_SIZES = ["3MB", "10MB"]
SMOKE_SIZES = ["0.1MB"]
#: the peers: trainer name -> module
PEERS = {"hf": "tokenizers", "rustbpe": "rustbpe"}
VOCAB = 32768


def input_file(size: int) -> Path:
    """The JSONL file of ``size`` bytes of text: a real prefix up to 100 MB, synthetic above (made on first use;
    a smaller synthetic size is the prefix of the 1 GB file, which is itself the prefix of any larger one)."""
    data = synth_corpus.DATA
    data.mkdir(parents=True, exist_ok=True)
    if size <= REAL_MAX:
        path = data / f"real-en-{synth_corpus._label(size)}.jsonl"
        if not path.exists():
            docs, _ = read_docs(SHARED / "corpus" / "en" / "train.jsonl.gz", size)
            _write(path, docs)
        return path
    path = data / f"synth-en-{synth_corpus._label(size)}-s0.jsonl"
    if path.exists():
        return path
    bigger = [p for p in data.glob("synth-en-*-s0.jsonl") if synth_corpus._parse_size(p.name[9:-9]) > size]
    if not bigger:
        return synth_corpus.generate(size, 0)
    docs, n = [], 0
    for doc in synth_corpus.iter_jsonl(min(bigger, key=lambda p: p.stat().st_size)):
        docs.append(doc)
        n += len(doc.encode("utf-8"))
        if n >= size:
            break
    _write(path, docs)
    return path


def _write(path: Path, docs) -> None:
    from fastsw.files import atomic_open

    with atomic_open(path, "w") as f:
        for doc in docs:
            f.write(json.dumps({"text": doc}, ensure_ascii=False) + "\n")


def worker(name: str, path: str) -> None:
    """One training run in this process; prints one JSON line."""
    from bench_train import run_trainer

    docs = path if name.startswith("fastsw") else synth_corpus.iter_jsonl(Path(path))
    algo = name.split("-")[1] if name.startswith("fastsw") else name
    trainer = {
        "bpe": "fastsw-bpe-paper",
        "boundless": "fastsw-boundless-paper",
        "superbpe": "fastsw-superbpe-paper",
    }.get(algo, name)
    with tempfile.TemporaryDirectory() as tmp:
        result = run_trainer(trainer, docs, VOCAB, "default", os.path.join(tmp, "merges.json"))
    print(json.dumps(result))


def run_one(name: str, path: Path, cap_gb: float, timeout: float, lock_path: str | None = None) -> dict:
    def limit():
        cap = int(cap_gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    cmd = [sys.executable, __file__, "--worker", name, "--path", str(path)]
    with open(lock_path or os.devnull, "a") as lock:
        if lock_path:
            fcntl.flock(lock, fcntl.LOCK_EX)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=limit, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"name": name, "failed": f"timed out after {timeout:.0f} s"}
        finally:
            if lock_path:
                fcntl.flock(lock, fcntl.LOCK_UN)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        return {
            "name": name,
            "failed": f"did not fit under {cap_gb:g} GB or failed: {tail[0][:200]}",
            "wall": time.perf_counter() - t0,
        }
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _save(store: Path, size: int, kind: str, name: str, result: dict) -> list:
    """Add one result to scale.json as it is on disk now (two grids, e.g. a long 5 GB run beside the small
    sizes, can run at once without losing each other's rows)."""
    from fastsw.files import atomic_open

    rows = json.loads(store.read_text()) if store.exists() else []
    results = next((r for s, _, r in rows if s == size), None)
    if results is None:
        results = {}
        rows.append([size, kind, results])
    results[name] = result
    rows.sort(key=lambda row: row[0])
    with atomic_open(store, "w") as f:
        f.write(json.dumps(rows, indent=1))
    return rows


def table(rows) -> str:
    lines = [
        "| size | text | trainer | wall s | cpu s | peak RSS MB | wall / fastsw BPE | cpu / fastsw BPE | "
        "RSS / fastsw BPE | stages (wall s) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for size, kind, results in rows:
        bpe = results.get("fastsw-bpe", {})
        for name, r in results.items():
            if "failed" in r:
                lines.append(
                    f"| {synth_corpus._label(size)} | {kind} | {name} | – | – | – | – | – | – | {r['failed']} |"
                )
                continue
            ok = "wall" in bpe and "failed" not in bpe
            ratio = f"{r['wall'] / bpe['wall']:.2f}" if ok else "–"
            cpu = f"{r['cpu'] / bpe['cpu']:.2f}" if ok else "–"
            rss = f"{r['rss_mb'] / bpe['rss_mb']:.2f}" if ok else "–"
            stages = ", ".join(f"{k} {v:.1f}" for k, v in r.get("stages", {}).items())
            lines.append(
                f"| {synth_corpus._label(size)} | {kind} | {name} | {r['wall']:.1f} | {r['cpu']:.1f} | "
                f"{r['rss_mb']:.0f} | {ratio} | {cpu} | {rss} | {stages} |"
            )
    return "\n".join(lines) + "\n"


def plots(rows, outdir: Path, prefix: str = "scale") -> None:
    """``scale_time.png`` (wall seconds and process CPU seconds side by side: CPU time moves less with whatever
    else the computer runs) and ``scale_rss.png`` (peak RSS), log-log, the synthetic range shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted({n for _, _, res in rows for n in res})
    top = max(size for size, _, _ in rows) / 1e6 * 1.2
    for keys, fname in [
        ((("wall", "wall seconds"), ("cpu", "process CPU seconds")), f"{prefix}_time.png"),
        ((("rss_mb", "peak RSS (MB)"),), f"{prefix}_rss.png"),
    ]:
        fig, axes = plt.subplots(1, len(keys), figsize=(6.5 * len(keys), 4.5), squeeze=False)
        for ax, (key, ylabel) in zip(axes[0], keys):
            for n in names:
                pts = [(size / 1e6, res[n][key]) for size, _, res in rows if n in res and key in res[n]]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=n)
            ax.axvspan(REAL_MAX / 1e6, top, color="0.9", zorder=0)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.text(REAL_MAX / 1e6 * 1.1, ax.get_ylim()[0] * 1.5, "SYNTHETIC text", fontsize=8, color="0.4")
            ax.set_xlabel("corpus MB (real English up to 100 MB, synthetic above)")
            ax.set_ylabel(ylabel)
            ax.set_title(f"training, vocab {VOCAB}", fontsize=9)
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(outdir / fname, dpi=110)
        plt.close(fig)


def json_tables(rows) -> dict:
    """The table ``bench/perfpage.py`` renders: one row per size and trainer, ratios to fastsw BPE."""
    out = []
    for size, kind, results in rows:
        bpe = results.get("fastsw-bpe", {})
        ok = "wall" in bpe and "failed" not in bpe
        for name, r in results.items():
            if "failed" in r:
                out.append([synth_corpus._label(size), kind, name, None, None, None, None, None, r["failed"]])
                continue
            out.append(
                [
                    synth_corpus._label(size),
                    kind,
                    name,
                    rounded(r["wall"]),
                    rounded(r["cpu"]),
                    rounded(r["rss_mb"], 0),
                    rounded(r["wall"] / bpe["wall"]) if ok else None,
                    rounded(r["rss_mb"] / bpe["rss_mb"]) if ok else None,
                    "",
                ]
            )
    return json_table(
        f"Training time and peak RSS against corpus size (vocab {VOCAB})",
        [
            "size",
            "text",
            "trainer",
            "wall s",
            "cpu s",
            "peak RSS MB",
            "wall / fastsw BPE",
            "RSS / fastsw BPE",
            "failed",
        ],
        out,
        "English; real text up to 100 MB, SYNTHETIC text (bench/synth_corpus.py) above. Each trainer in its own "
        "process, streaming the file; peak RSS is the training process's. fastsw: paper profile, script "
        "pre-tokenizer (SuperBPE: 4096 supermerges); HF and rustbpe: the GPT-4o pattern.",
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--sizes", default=None, help=f"comma-separated (default {','.join(SIZES)}; --quick: {','.join(QUICK_SIZES)})"
    )
    p.add_argument("--trainers", default=",".join(TRAINERS))
    p.add_argument("--peer-max", default="1GB")
    p.add_argument("--at-5gb", default="fastsw-boundless", help="trainers run at sizes above 1 GB")
    p.add_argument("--cap-gb", type=float, default=14)
    p.add_argument("--timeout", type=float, default=3600)
    p.add_argument(
        "--lock",
        default=os.environ.get("FASTSW_BENCH_LOCK") or None,
        metavar="FILE",
        help="hold an exclusive flock on FILE during each run (default: $FASTSW_BENCH_LOCK, else none)",
    )
    p.add_argument("--again", action="store_true", help="measure again what scale.json already holds")
    p.add_argument("--report", action="store_true", help="no runs: the table and plots from scale.json")
    add_arguments(p)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--path", help=argparse.SUPPRESS)
    args = parse_args(p)
    if args.worker:
        return worker(args.worker, args.path)
    sizes = args.sizes or ",".join(sized(args, SIZES, QUICK_SIZES, SMOKE_SIZES))
    prefix = sized(args, "scale", "scale-quick", "scale-smoke")
    missing = missing_peers({peer: module for peer, module in PEERS.items() if peer in args.trainers.split(",")})
    outdir = HERE / "results"
    outdir.mkdir(exist_ok=True)
    store = outdir / f"{prefix}.json"
    rows = json.loads(store.read_text()) if store.exists() else []  # resumed: a long grid can be stopped
    peer_max = synth_corpus._parse_size(args.peer_max)
    for label in [] if args.report else sizes.split(","):
        size = synth_corpus._parse_size(label)
        path = input_file(size)
        kind = "real" if size <= REAL_MAX else "SYNTHETIC"
        results = next((r for s, _, r in rows if s == size), None)
        if results is None:
            results = {}
            rows.append([size, kind, results])
        for name in args.trainers.split(","):
            if name in missing or name in PEERS and size > peer_max:
                continue
            if size > 10**9 and name not in args.at_5gb.split(","):
                continue
            if name in results and "failed" not in results[name] and not args.again:
                continue  # measured in an earlier run of this command (bench/results/scale.json)
            r = run_one(name, path, args.cap_gb, args.timeout, args.lock)
            results[name] = r
            shown = r.get("failed") or f"wall {r['wall']:.1f} s, rss {r['rss_mb']:.0f} MB"
            print(f"{label} ({kind}) {name}: {shown}", file=sys.stderr)
            rows = _save(store, size, kind, name, r)
    rows = json.loads(store.read_text()) if store.exists() else rows
    if not args.report:  # the sizes of this command only
        wanted = {synth_corpus._parse_size(label) for label in sizes.split(",")}
        rows = [row for row in rows if row[0] in wanted]
    text = "# Scale benchmark (real English up to 100 MB, SYNTHETIC above)\n\n" + table(rows)
    (outdir / f"{prefix}.md").write_text(text)
    plots(rows, outdir, prefix)
    if args.json:
        write_json(args.json, json_tables(rows))
    print(text)


if __name__ == "__main__":
    main()
