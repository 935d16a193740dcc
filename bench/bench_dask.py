"""Counting 1 GB on a local Dask cluster (1 and 2 worker processes) against the single-process counter.

    pip install -e ".[dask]"
    python bench/bench_dask.py                                               # 1 GB, 16 shards, pretokens only
    python bench/bench_dask.py --mb 100 --shards 8 --runs                    # smaller, with letter runs

The corpus: the seeded SYNTHETIC English corpus of ``bench/synth_corpus.py`` (``$FASTSW_DATA/synth-en-1GB-s0.jsonl``:
the real 100 MB ``corpus/en/train.jsonl.gz`` and 9 more passes over it with coined words and swapped word sequences;
``python bench/synth_corpus.py generate --size 1GB`` makes it) when it exists; otherwise the real English corpus
repeated until the size is reached (``--corpus`` picks a file). Either way it is cut into ``--shards`` consecutive
JSONL shard files under ``$FASTSW_DATA`` (default ``~/.cache/fastsw/bench-data``, see ``bench/_corpus.py``), which
every configuration reads:

* ``single``: :func:`fastsw.corpus.counting.count_corpus` in one process over the shard files (the compiled counter, one
  reading thread and one counting thread per core: what ``fastsw count`` does);
* ``dask-N``: :func:`fastsw.corpus.distributed.count` on a ``LocalCluster`` of N worker processes (one thread each),
  one task per shard, tables merged in a tree on the workers.

Each configuration runs in its own subprocess. Reported: wall seconds of the counting call (the cluster's start
and stop apart; the start includes importing fastsw on the workers), the ratio to ``single`` (the overhead), the peak RSS of the calling process and of each worker,
and a digest of the resulting table (all configurations must give the same). Markdown goes to
``bench/results/dask-<size>.md``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's fastsw (the workers inherit it through PYTHONPATH)
sys.path.insert(0, str(ROOT / "bench"))
from _corpus import DATA  # noqa: E402

SYNTH_1GB = DATA / "synth-en-1GB-s0.jsonl"


def shared() -> Path:
    env = os.environ.get("FASTSW_SHARED")
    return Path(env) if env else ROOT.parent / "shared"


def corpus_source(mb: int, given: str | None):
    """(path or None, label): the corpus file to cut, or None for the real English corpus repeated."""
    if given:
        return Path(given), f"{given}"
    if mb == 1000 and SYNTH_1GB.exists():
        return SYNTH_1GB, "SYNTHETIC English (bench/synth_corpus.py, seed 0)"
    return None, "real English corpus (corpus/en/train.jsonl.gz) repeated"


def make_shards(mb: int, n: int, given: str | None) -> tuple[list, str]:
    """Cut the corpus into ``n`` JSONL shards of about ``mb / n`` MB each (cached under DATA)."""
    source, label = corpus_source(mb, given)
    name = (source.stem if source else "en-repeated") + f"-{mb}MB-{n}shards"
    folder = DATA / "dask-shards" / name
    paths = [folder / f"part-{k:03d}.jsonl" for k in range(n)]
    if (folder / "DONE").exists():
        return paths, label
    folder.mkdir(parents=True, exist_ok=True)
    target = mb * 1_000_000
    per_shard = target / n

    def lines():
        while True:
            opener = open(source, "rb") if source else gzip.open(shared() / "corpus/en/train.jsonl.gz", "rb")
            with opener as f:
                yield from f
            if source:
                return

    written, k = 0, 0
    out = open(paths[0], "wb")
    for line in lines():
        if written >= target:
            break
        out.write(line)
        written += len(line)
        if written >= per_shard * (k + 1) and k + 1 < n:
            out.close()
            k += 1
            out = open(paths[k], "wb")
    out.close()
    for p in paths[k + 1 :]:
        p.write_bytes(b"")
    (folder / "DONE").write_text(label + "\n")
    return paths, label


def digest(counts) -> str:
    """A digest of the table's multisets (pretokens and letter runs), independent of row order."""
    h = hashlib.sha256()
    for p, c in sorted(zip(counts.pretokens, counts.counts)):
        h.update(json.dumps([p, int(c)], ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if counts.has_runs:
        for run in sorted(map(str, counts.run_multiset().items())):
            h.update(run.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:16]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def warm() -> None:
    from fastsw.corpus.counting import native_counting
    from fastsw.pretokenizers.pretokenize import Pretokenizer

    native_counting(Pretokenizer())


def child(mode: str, shards: list, runs: bool) -> dict:
    """One configuration, in this (sub)process."""
    from fastsw.corpus.counting import count_corpus
    from fastsw.pretokenizers.pretokenize import Pretokenizer
    from fastsw.corpus.readers import iter_documents

    out: dict = {"mode": mode}
    if mode == "single":
        start = time.perf_counter()
        counts = count_corpus(iter_documents([Path(p) for p in shards]), Pretokenizer(), collect_runs=runs)
        out["seconds"] = time.perf_counter() - start
    else:
        from fastsw.corpus import distributed

        workers = int(mode.split("-")[1])
        start = time.perf_counter()
        with distributed.connect(local_workers=workers) as client:
            client.wait_for_workers(workers)
            client.run(warm)  # import fastsw and load the scanner tables on each worker (a first job pays it)
            out["cluster_start"] = time.perf_counter() - start
            start = time.perf_counter()
            counts = distributed.count(client, shards, collect_runs=runs)
            out["seconds"] = time.perf_counter() - start
            out["worker_rss_mb"] = sorted(client.run(peak_rss_mb).values())
            stop = time.perf_counter()
        out["cluster_stop"] = time.perf_counter() - stop
    out["peak_rss_mb"] = peak_rss_mb()
    out["documents"], out["bytes"] = counts.n_documents, counts.n_bytes
    out["pretokens"], out["runs"] = len(counts.pretokens), counts.n_runs if counts.has_runs else 0
    out["digest"] = digest(counts)  # after the timing
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=1000, help="corpus size in MB (default 1000)")
    ap.add_argument("--shards", type=int, default=16, help="shard files (default 16)")
    ap.add_argument("--corpus", default=None, help="a JSONL file to cut instead (default: see the docstring)")
    ap.add_argument("--runs", action="store_true", help="collect letter runs too (default: pretokens only)")
    ap.add_argument("--modes", nargs="+", default=["single", "dask-1", "dask-2"])
    ap.add_argument(
        "--repeat",
        type=int,
        default=2,
        help="rounds (default 2; later rounds in reverse order, without dask-1); the table shows each "
        "configuration's fastest round, the JSON lines every round",
    )
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--shard-list", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        shards = json.loads(Path(args.shard_list).read_text())
        print(json.dumps(child(args.child, shards, args.runs)))
        return

    shards, label = make_shards(args.mb, args.shards, args.corpus)
    size = sum(p.stat().st_size for p in shards)
    listing = DATA / "dask-shards" / "current-list.json"
    listing.write_text(json.dumps([str(p) for p in shards]))
    print(f"corpus: {label}, {size / 1e6:.0f} MB of JSONL in {len(shards)} shards under {shards[0].parent}", flush=True)
    rounds = [list(args.modes)] + [[m for m in reversed(args.modes) if m != "dask-1"] for _ in range(args.repeat - 1)]
    results = []
    for k, mode in ((k, m) for k, modes in enumerate(rounds) for m in modes):
        cmd = [sys.executable, __file__, "--child", mode, "--shard-list", str(listing)] + (
            ["--runs"] if args.runs else []
        )
        start = time.perf_counter()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
        if proc.returncode != 0:
            sys.exit(f"{mode} failed:\n{proc.stderr[-3000:]}")
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        r["process_seconds"] = time.perf_counter() - start
        r["round"] = k + 1
        results.append(r)
        print(json.dumps(r), flush=True)
    same = len({r["digest"] for r in results}) == 1
    every = results
    results = [min((r for r in every if r["mode"] == m), key=lambda r: r["seconds"]) for m in args.modes]
    base = next((r for r in results if r["mode"] == "single"), results[0])
    lines = [
        f"# Counting {size / 1e6:.0f} MB on Dask ({label})",
        "",
        f"`python bench/bench_dask.py --mb {args.mb} --shards {args.shards}{' --runs' if args.runs else ''}`; "
        f"{'pretokens and letter runs' if args.runs else 'pretokens only'}; the fastest "
        f"of {len(rounds)} rounds per configuration (each round: "
        + "; ".join(f"{r['mode']} {r['seconds']:.1f} s" for r in every)
        + "). "
        f"Tables identical in every configuration: {'yes' if same else 'NO'} (digest {base['digest']}); "
        f"{base['documents']} documents, {base['pretokens']} distinct pretokens"
        + (f", {base['runs']} letter runs" if args.runs else "")
        + ".",
        "",
        "| configuration | counting wall s | × single | cluster start s | peak RSS caller MB | peak RSS workers MB |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['mode']} | {r['seconds']:.1f} | {r['seconds'] / base['seconds']:.2f} | "
            f"{r.get('cluster_start', 0):.1f} | {r['peak_rss_mb']:.0f} | "
            f"{' + '.join(f'{x:.0f}' for x in r.get('worker_rss_mb', [])) or '-'} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    out = ROOT / "bench" / "results" / f"dask-{args.mb}MB{'-runs' if args.runs else ''}.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)
    print(f"written to {out}")


if __name__ == "__main__":
    main()
