"""Run the benchmark suite and write the performance page: ``docs/performance.md`` and its plots.

    python bench/perfpage.py --quick          # small inputs: a few minutes on 2 cores
    python bench/perfpage.py                  # the full sizes (much longer)
    python bench/perfpage.py --render-only    # the page again from the last run's JSON, nothing measured
    python bench/perfpage.py --quick --only shard   # one part again: its section of the page is replaced

With ``--only``, the page keeps every other section as it was and the parts run again replace their sections
(each then says when and by which command it was measured, and with which fastsw commit).

Each whole-run script of the suite (``SUITE`` below) runs in its own process with ``--json`` into
``bench/results/perf/`` (``perf-quick/`` with ``--quick``); the page shows every table it wrote, with the command
that made it, plus the machine (CPU model, cores, memory), the date, the versions of fastsw and of every peer (a
peer that is not installed is named as such) and plots under ``docs/images/`` (matplotlib, Agg backend). The page
and the plots are written only once every script has finished, each file to a temporary name and renamed.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: (name, script, full-size arguments, --quick arguments, section title, what it measures)
SUITE = [
    (
        "train",
        "bench_train.py",
        ["--mb", "50", "--vocab", "32768"],
        ["--quick"],
        "Training",
        "Training from the same English text, each trainer in its own process: fastsw's BPE (with the `hf` profile, "
        "whose merges must equal HF's, and the paper's profile), BoundlessBPE and SuperBPE against HF `tokenizers` "
        "and rustbpe.",
    ),
    (
        "scale",
        "bench_scale.py",
        ["--again", "--sizes", "10MB,30MB,100MB"],
        ["--quick", "--again"],
        "Training at growing corpus sizes",
        "Training time and peak RSS as the corpus grows, every trainer streaming the same JSONL file in its own "
        "process (sizes above 100 MB use synthetic text: `python bench/bench_scale.py` runs the whole grid, up to "
        "5 GB).",
    ),
    (
        "languages",
        "bench_languages.py",
        [],
        ["--quick"],
        "Encoding in every language",
        "Encoding each language's held-out text with a BPE model trained by fastsw, the same model run by tiktoken "
        "(`to_tiktoken()`) and HF `tokenizers` (`save_hf`).",
    ),
    (
        "script",
        "bench_script.py",
        [],
        ["--quick"],
        "SCRIPT v3 models",
        "Training and encoding with the SCRIPT v3 pre-tokenizer (`script-v3`: characters as block and index atoms) "
        "against the default pre-tokenizer (`script`), the same text and vocabulary size, each model trained in its "
        "own process.",
    ),
    (
        "tiktoken",
        "bench_tiktoken.py",
        [],
        ["--quick"],
        "tiktoken's own vocabularies and patterns",
        "o200k_base and cl100k_base loaded by fastsw (`Tokenizer.load_tiktoken`), and cl100k_base's ranks with the older "
        "spelling of its pattern (Llama 3's) and with GPT-2's pattern (`Tokenizer.from_tiktoken`), against tiktoken, "
        "rs-bpe and bpe-openai (their built-in o200k_base and cl100k_base) and HF `tokenizers` with the same vocabulary, "
        "ids checked identical to tiktoken's; the first table gives fastsw's ratio to each peer per language and "
        "pattern.",
    ),
    (
        "short",
        "bench_short.py",
        [],
        ["--quick"],
        "Short texts and start-up",
        "Fixed costs with tiktoken's vocabularies: microseconds per call on one short sentence encoded again and again "
        "and on distinct snippets of 8-64 characters in the 12 languages, fastsw against tiktoken, rs-bpe, bpe-openai "
        "and HF `tokenizers` (ids checked identical to tiktoken's); building fastsw's tokenizer from tiktoken, and "
        "process start to the first ids.",
    ),
    (
        "coldstart",
        "bench_coldstart.py",
        ["--repeat", "3"],
        ["--quick"],
        "Cold start",
        "What a fresh install pays: the README's first training command with an empty Numba cache and again warm, "
        "and a loaded model's first encodes with an empty cache and a warm one, each in its own process.",
    ),
    (
        "shard",
        "bench_shard.py",
        [],
        ["--quick"],
        "Preparing training data",
        "`fastsw shard` against the data-prep recipes users copy (llm.c's `multiprocessing.Pool` + tiktoken, "
        "nanoGPT's `datasets.map` + tiktoken, HF `tokenizers` `encode_batch`): JSONL files in, token shards on disk, "
        "2 threads, the same bytes out (checked), with o200k_base and with a fastsw BPE model exported to tiktoken "
        "and HF; wall and CPU time, peak RSS; superword models against plain BPE.",
    ),
]

#: distributions whose versions the page states (import name only for the check)
PACKAGES = ["fastsw", "numba", "numpy", "tiktoken", "tokenizers", "rustbpe", "rs-bpe", "bpe-openai", "matplotlib"]


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        if names:
            cpu = names[0]
    except OSError:
        pass
    try:
        memory = f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.1f} GiB"
    except (ValueError, OSError, AttributeError):
        memory = "unknown"
    return {
        "CPU": cpu,
        "logical cores": str(os.cpu_count()),
        "memory": memory,
        "system": platform.platform(terse=True),
        "Python": platform.python_version(),
    }


def versions() -> list:
    rows = []
    for name in PACKAGES:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = None
        if name == "fastsw":
            commit = git("rev-parse", "--short", "HEAD")
            dirty = git("status", "--porcelain", "--", "fastsw", "bench")
            version = (
                f"{version or '(this checkout)'}"
                + (f", commit {commit}" if commit else "")
                + (" with uncommitted changes" if commit and dirty else "")
            )
        rows.append((name, version or "not installed: not measured"))
    return rows


def git(*args) -> str | None:
    try:
        return (
            subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()
            or None
        )
    except (OSError, subprocess.CalledProcessError):
        return None


def run_suite(names, quick: bool, results: Path) -> None:
    results.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    for name, script, full, quick_args, _, _ in SUITE:
        if name not in names:
            continue
        out = results / f"{name}.json"
        cmd = [sys.executable, f"bench/{script}", *(quick_args if quick else full), "--json", shown(out)]
        print(f"perfpage: {name}: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0 or not out.exists():
            tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
            sys.exit(
                f"perfpage: error: bench/{script} failed (exit status {proc.returncode}); the page is not "
                f"written:\n{tail}"
            )
        print(f"perfpage: {name}: done in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)


def shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    path = Path(path).resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def cell(x) -> str:
    if x is None or x == "":
        return "–"
    if isinstance(x, float):
        return f"{x:,.2f}" if abs(x) < 1000 else f"{x:,.0f}"
    return str(x).replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


def markdown_table(t: dict) -> list:
    lines = ["| " + " | ".join(t["columns"]) + " |", "|" + "---|" * len(t["columns"])]
    for row in t["rows"]:
        lines.append("| " + " | ".join(cell(x) for x in row) + " |")
    return lines


def tables_of(path: Path) -> list:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else [data]


# ---- plots ------------------------------------------------------------------------------------------------------


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> None:
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=100)
    os.replace(tmp, path)
    _plt().close(fig)


def _column(t, name):
    k = t["columns"].index(name)
    return [row[k] for row in t["rows"]]


def _finish(fig, path: Path) -> list:
    """Lay out ``fig``, write it to ``path`` and return ``[path]`` (what each plot function returns)."""
    fig.tight_layout()
    _save(fig, path)
    return [path]


def plot_train(tables, images: Path, tag: str) -> list:
    plt = _plt()
    t = tables[0]
    names, wall, rss = _column(t, "trainer"), _column(t, "wall s"), _column(t, "peak RSS MB")
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for ax, values, label in ((axes[0], wall, "wall seconds"), (axes[1], rss, "peak RSS (MB)")):
        colors = ["tab:blue" if n.startswith("fastsw") else "tab:gray" for n in names]
        ax.barh(names, values, color=colors)
        ax.invert_yaxis()
        ax.set_xlabel(label)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(t["title"], fontsize=10)
    return _finish(fig, images / f"perf-train{tag}.png")


def plot_scale(tables, images: Path, tag: str) -> list:
    plt = _plt()
    from matplotlib import ticker
    from synth_corpus import _parse_size

    t = tables[0]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    trainers = sorted(set(_column(t, "trainer")))
    for ax, key, label in ((axes[0], "wall s", "wall seconds"), (axes[1], "peak RSS MB", "peak RSS (MB)")):
        for name in trainers:
            pts = [
                (_parse_size(r[0]) / 1e6, r[t["columns"].index(key)])
                for r in t["rows"]
                if r[t["columns"].index("trainer")] == name and r[t["columns"].index(key)] is not None
            ]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # plain numbers on the log axes
            axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel("corpus MB")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.suptitle(t["title"], fontsize=10)
    return _finish(fig, images / f"perf-scale{tag}.png")


def _grouped_bars(ax, labels, series: dict, ylabel: str) -> None:
    width = 0.8 / max(len(series), 1)
    for k, (who, values) in enumerate(series.items()):
        ax.bar([i + k * width for i in range(len(labels))], [v or 0 for v in values], width, label=who)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))], labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=len(series))


def plot_languages(tables, images: Path, tag: str) -> list:
    plt = _plt()
    t = tables[0]
    fig, ax = plt.subplots(figsize=(11, 3.8))
    _grouped_bars(
        ax,
        _column(t, "language"),
        {who: _column(t, f"{who} MB/s") for who in ("fastsw", "tiktoken", "HF")},
        "MB/s, one thread",
    )
    ax.set_title(t["title"], fontsize=10)
    return _finish(fig, images / f"perf-languages{tag}.png")


def plot_tiktoken(tables, images: Path, tag: str) -> list:
    plt = _plt()
    single = [t for t in tables if t["title"].endswith(": one thread")]
    if not single:
        return []
    fig, axes = plt.subplots(len(single), 1, figsize=(11, 3.8 * len(single)), squeeze=False)
    for ax, t in zip(axes[:, 0], single):
        who = [c[:-5] for c in t["columns"] if c.endswith(" MB/s")]
        series = {w: _column(t, f"{w} MB/s") for w in who if any(v is not None for v in _column(t, f"{w} MB/s"))}
        _grouped_bars(ax, _column(t, "input"), series, "MB/s, one thread")
        ax.set_title(t["title"], fontsize=10)
    return _finish(fig, images / f"perf-tiktoken{tag}.png")


def plot_shard(tables, images: Path, tag: str) -> list:
    plt = _plt()
    against = [t for t in tables if "vs fastest peer (wall)" in t["columns"]]
    if not against:
        return []
    fig, axes = plt.subplots(1, len(against), figsize=(11, 3.8), squeeze=False)
    for ax, t in zip(axes[0], against):
        corpora = list(dict.fromkeys(_column(t, "corpus")))
        pipelines = list(dict.fromkeys(_column(t, "pipeline")))
        rate = {(r[0], r[1]): r[t["columns"].index("M tokens/s")] for r in t["rows"]}
        _grouped_bars(ax, corpora, {p: [rate.get((c, p)) for c in corpora] for p in pipelines}, "M tokens/s")
        ax.legend(fontsize=6, ncol=1)
        ax.set_title(t["title"].split("(", 1)[-1].rstrip(")"), fontsize=9)
    fig.suptitle("Files in, token shards on disk", fontsize=10)
    return _finish(fig, images / f"perf-shard{tag}.png")


PLOTS = {
    "train": plot_train,
    "scale": plot_scale,
    "languages": plot_languages,
    "tiktoken": plot_tiktoken,
    "shard": plot_shard,
    "coldstart": lambda tables, images, tag: [],
    "short": lambda tables, images, tag: [],  # tables only
    "script": lambda tables, images, tag: [],
}


# ---- the page ---------------------------------------------------------------------------------------------------


def describe_run() -> dict:
    """The machine, the date and the versions, taken when the suite starts."""
    return {
        "machine": machine(),
        "versions": versions(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
    }


def render(names, quick: bool, results: Path, out: Path, images: Path, run: dict, partial: bool = False) -> None:
    """Write the page from the JSON in ``results``; ``run``: :func:`describe_run` plus the suite's ``seconds``.
    ``partial``: only the sections of ``names`` are replaced in the existing page (see the module docstring)."""
    if partial and out.exists():
        splice(names, quick, results, out, images, run)
        return
    images.mkdir(parents=True, exist_ok=True)
    tag = "-quick" if quick else ""
    command = "python bench/perfpage.py" + (" --quick" if quick else "")
    today, seconds = run["date"], run.get("seconds")
    lines = [
        "# Performance",
        "",
        f"This page is generated: `{command}` ran the benchmark suite below and wrote it, with its plots, on "
        f"{today}"
        + (f" (the suite took {seconds / 60:.0f} minutes)." if seconds else ".")
        + " Every table names the command that made it; run the same command to measure your own computer. "
        "Ratios compare programs measured in the same run, on the same input, and move less from one run or "
        "computer to another than absolute speeds do. fastsw runs from compiled bytecode, as an installation does "
        "(the scripts drop `PYTHONDONTWRITEBYTECODE` for the processes they time).",
        "",
    ]
    if quick:
        lines += [
            "> **A `--quick` run.** These figures come from `python bench/perfpage.py --quick`: small "
            "inputs (a few MB) that finish in a few minutes. At these sizes fixed costs (process start, loading compiled kernels) "
            "weigh more than in real use; `python bench/perfpage.py` runs the full sizes.",
            "",
        ]
    lines += ["## Machine and versions", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in run["machine"].items()]
    lines += ["", "| package | version |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in run["versions"]]
    lines.append("")
    for name in names:
        lines += section_lines(name, results, out, images, tag)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("\n".join(lines), encoding="utf-8")
    os.replace(tmp, out)
    print(f"perfpage: wrote {shown(out)}", file=sys.stderr)


def section_lines(name: str, results: Path, out: Path, images: Path, tag: str, measured: str = "") -> list:
    """The markdown of one part's section (``measured``: a line saying when it was measured, for a part run
    apart from the rest of the page)."""
    _, _, _, _, section, about = next(s for s in SUITE if s[0] == name)
    path = results / f"{name}.json"
    if not path.exists():
        sys.exit(f"perfpage: error: {shown(path)} is missing: run without --render-only first")
    tables = tables_of(path)
    lines = [f"## {section}", "", about, ""] + ([measured, ""] if measured else [])
    for t in tables:
        lines += [f"### {t['title']}", "", "```text", t["command"], "```", ""]
        lines += markdown_table(t)
        lines.append("")
        if t.get("notes"):
            lines += [t["notes"], ""]
    for image in PLOTS[name](tables, images, tag):
        rel = os.path.relpath(image, out.parent)
        lines += [f"![{section}]({Path(rel).as_posix()})", ""]
    return lines


def splice(names, quick: bool, results: Path, out: Path, images: Path, run: dict) -> None:
    """Replace (or add, in the suite's order) the sections of ``names`` in the existing page ``out``."""
    images.mkdir(parents=True, exist_ok=True)
    tag = "-quick" if quick else ""
    fastsw = dict(run["versions"]).get("fastsw", "")
    command = "python bench/perfpage.py" + (" --quick" if quick else "") + " --only " + ",".join(names)
    if run.get("render_only"):  # measured by the scripts' own commands, shown above each table
        day = (
            max(
                datetime.datetime.fromtimestamp((results / f"{n}.json").stat().st_mtime, datetime.timezone.utc)
                for n in names
                if (results / f"{n}.json").exists()
            ).strftime("%Y-%m-%d")
            if names
            else run["date"]
        )
        measured = (
            f"Measured on {day} by the command above each table and added by `{command} --render-only`, "
            f"apart from the rest of this page (fastsw {fastsw})."
        )
    else:
        measured = f"Measured on {run['date']} by `{command}`, apart from the rest of this page (fastsw {fastsw})."
    page = out.read_text(encoding="utf-8")
    order = [s[0] for s in SUITE]
    titles = {s[0]: f"## {s[4]}\n" for s in SUITE}
    for name in names:
        text = "\n".join(section_lines(name, results, out, images, tag, measured)) + "\n"
        at = page.find(titles[name])
        if at >= 0:
            end = page.find("\n## ", at + 1)
            page = page[:at] + text + (page[end + 1 :] if end >= 0 else "")
            continue
        later = [page.find(titles[n]) for n in order[order.index(name) + 1 :] if page.find(titles[n]) >= 0]
        at = min(later) if later else len(page)
        page = page[:at].rstrip("\n") + "\n\n" + text + ("\n" + page[at:] if later else "")
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, out)
    print(f"perfpage: wrote {shown(out)} (sections: {', '.join(names)})", file=sys.stderr)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--quick", action="store_true", help="small inputs (a few minutes on 2 cores)")
    ap.add_argument(
        "--only",
        default=",".join(s[0] for s in SUITE),
        help="comma-separated parts of the suite (default: all: %(default)s)",
    )
    ap.add_argument("--render-only", action="store_true", help="write the page from the last run's JSON")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "performance.md", help="the page (default %(default)s)")
    ap.add_argument("--images", type=Path, default=None, help="folder of the plots (default: images/ beside the page)")
    args = ap.parse_args(argv)
    names = args.only.split(",")
    unknown = set(names) - {s[0] for s in SUITE}
    if unknown:
        ap.error(f"--only: unknown part(s) {', '.join(sorted(unknown))}; choose from " + ", ".join(s[0] for s in SUITE))
    results = HERE / "results" / ("perf-quick" if args.quick else "perf")
    sys.path.insert(0, str(HERE))
    suite = results / "suite.json"
    partial = set(names) != {s[0] for s in SUITE}
    if partial:  # the other sections stay as they are; the header keeps its run
        run = dict(describe_run(), render_only=args.render_only)
        if not args.render_only:
            run_suite(names, args.quick, results)
    elif args.render_only:
        if not suite.exists():
            sys.exit(f"perfpage: error: {shown(suite)} is missing: run without --render-only first")
        run = json.loads(suite.read_text(encoding="utf-8"))
    else:
        run = describe_run()
        t0 = time.perf_counter()
        run_suite(names, args.quick, results)
        run["seconds"] = time.perf_counter() - t0
        suite.write_text(json.dumps(run, indent=1), encoding="utf-8")
    render(
        names,
        args.quick,
        results,
        args.out.resolve(),
        (args.images or args.out.parent / "images").resolve(),
        run,
        partial=partial,
    )


if __name__ == "__main__":
    main()
