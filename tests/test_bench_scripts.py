"""The whole-run benchmark scripts of ``bench/`` run end to end with ``--smoke`` (tiny inputs, seconds) and write
their JSON in the shape ``bench/perfpage.py`` reads, with fastsw's rows in it; the performance page renders from
that JSON. Nothing is timed here: a smoke run's figures mean nothing, what is checked is that every script still
runs.

Each script runs from a copy of ``bench/`` in a temporary folder, so what it writes beside itself
(``bench/results/``) stays out of the checkout. A peer that is not installed is left out by the script, which says
so on stderr; the test checks that it said so. The scripts that take long even at these sizes (every trainer in
its own process, an empty Numba cache, many child processes) carry the ``bench_long`` marker: run them with
``python -m pytest -m bench_long tests/test_bench_scripts.py``."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from numbers import Real
from pathlib import Path

import pytest
from conftest import shared_path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"

#: part of the suite (bench/perfpage.py's name) -> (script, extra arguments, peer modules, whether it takes long)
SCRIPTS = {
    "train": ("bench_train.py", [], ["tokenizers", "rustbpe"], False),
    "scale": ("bench_scale.py", [], ["tokenizers", "rustbpe"], True),
    "languages": ("bench_languages.py", [], ["tiktoken", "tokenizers"], False),
    "script": ("bench_script.py", [], [], False),
    "tiktoken": ("bench_tiktoken.py", [], ["tiktoken", "bpe_openai", "rs_bpe", "tokenizers"], False),
    "short": ("bench_short.py", [], ["tiktoken", "bpe_openai", "rs_bpe", "tokenizers"], True),
    "coldstart": ("bench_coldstart.py", ["--checkout", str(ROOT)], [], True),
    "shard": ("bench_shard.py", [], ["tiktoken", "datasets", "tokenizers"], True),
}

#: the focused scripts (no JSON, see bench/README.md) with their own options set to tiny sizes; all take long
FOCUSED = {
    "bench_boundary.py": ["--mb", "0.05", "--vocab", "1000", "--no-write"],
    "bench_char_units.py": ["--specs", "en:own", "--rounds", "1", "--train-mb", "0.05"],
    "bench_dask.py": ["--mb", "1", "--shards", "2"],
    "bench_encode.py": ["--train-mb", "0.05", "--text-mb", "0.05", "--vocabs", "1000", "--repeat", "1"],
    "bench_encode_batch.py": ["--mb", "0.05", "--rounds", "1"],
    "bench_mingram.py": ["--mb", "0.05", "--vocab", "1000"],
    "bench_parity.py": ["--mb", "0.05", "--vocab", "1000", "--repeat", "1"],
    "bench_phase1.py": ["--mb", "0.05", "--merges", "500", "--rounds", "1"],
    "bench_pretokenize.py": ["--english-mb", "0.05", "--prefix-mb", "0.05", "--repeat", "1"],
    "bench_superword_runs.py": ["--langs", "en", "--rounds", "1", "--train-mb", "0.05"],
}


def test_every_benchmark_script_is_tested():
    """Every ``bench/bench_*.py`` runs in one of the tests below (``test_micro.py`` is pytest-benchmark's)."""
    scripts = {p.name for p in BENCH.glob("bench_*.py")}
    assert scripts == {s[0] for s in SCRIPTS.values()} | set(FOCUSED)


def test_every_whole_run_script_is_here():
    """The suite of the performance page and this test name the same scripts (a script added to the suite is
    smoke-tested too)."""
    spec = importlib.util.spec_from_file_location("perfpage_suite", BENCH / "perfpage.py")
    perfpage = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(perfpage)
    assert {name: script for name, script, *_ in perfpage.SUITE} == {n: s[0] for n, s in SCRIPTS.items()}


class Smoke:
    """Runs each script once per test session (``run``) in one copy of ``bench/``."""

    def __init__(self, folder: Path):
        self.bench = folder / "bench"
        shutil.copytree(BENCH, self.bench, ignore=shutil.ignore_patterns("results", "__pycache__"))
        self.results = self.bench / "results" / "perf-quick"  # where bench/perfpage.py --quick reads them
        self.results.mkdir(parents=True)
        self.env = dict(os.environ)
        self.env.update(
            PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            FASTSW_SHARED=str(shared_path(".")),
            FASTSW_DATA=str(folder / "data"),
            MPLBACKEND="Agg",
        )
        self.done: dict = {}

    def call(self, script: str, *args: str) -> subprocess.CompletedProcess:
        """``bench/<script> args`` (the copy) in a new process; it must exit 0."""
        proc = subprocess.run(
            [sys.executable, str(self.bench / script), *args],
            cwd=self.bench.parent,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, f"{script} {' '.join(args)} failed:\n{proc.stderr[-4000:]}"
        return proc

    def run(self, part: str):
        """``(stderr, tables)`` of the script of ``part`` run with ``--smoke --json``."""
        if part not in self.done:
            script, extra, _, _ = SCRIPTS[part]
            out = self.results / f"{part}.json"
            proc = self.call(script, "--smoke", "--json", str(out), *extra)
            tables = json.loads(out.read_text(encoding="utf-8"))
            self.done[part] = (proc.stderr, tables if isinstance(tables, list) else [tables])
        return self.done[part]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    return Smoke(tmp_path_factory.mktemp("bench-smoke"))


def check_shape(tables) -> None:
    """The documented JSON of a whole-run script: ``{"title", "command", "columns", "rows", "notes"}`` per table
    (``peak_rss_mb`` allowed), a row's cells numbers, strings or None, one per column."""
    assert tables
    for t in tables:
        assert set(t) - {"peak_rss_mb"} == {"title", "command", "columns", "rows", "notes"}, sorted(t)
        assert isinstance(t["title"], str) and t["title"]
        assert isinstance(t["command"], str) and t["command"].startswith("python bench/") and "--smoke" in t["command"]
        assert isinstance(t["notes"], str)
        assert t["columns"] and all(isinstance(c, str) for c in t["columns"])
        for row in t["rows"]:
            assert len(row) == len(t["columns"]), (t["title"], row)
            assert all(c is None or isinstance(c, (str, Real)) for c in row), (t["title"], row)


def fastsw_figures(tables) -> list:
    """The measured figures of fastsw in ``tables``: the numbers of the rows that name fastsw (or a fastsw
    pre-tokenizer), and of the columns that do."""
    found = []
    for t in tables:
        named = [i for i, c in enumerate(t["columns"]) if "fastsw" in c]
        for row in t["rows"]:
            numbers = [c for c in row if isinstance(c, Real) and not isinstance(c, bool)]
            if any(isinstance(c, str) and ("fastsw" in c or c.startswith("script")) for c in row):
                found += numbers
            found += [row[i] for i in named if isinstance(row[i], Real)]
    return found


@pytest.mark.parametrize(
    "part", [pytest.param(p, marks=[pytest.mark.bench_long] if s[3] else []) for p, s in SCRIPTS.items()]
)
def test_script_runs_and_writes_its_json(smoke, part):
    """``bench/<script> --smoke --json OUT`` exits 0 and writes tables of the documented shape with fastsw's
    figures in them; every peer that is not installed is named on stderr (left out, not silently)."""
    stderr, tables = smoke.run(part)
    check_shape(tables)
    assert fastsw_figures(tables), f"{part}: no fastsw figures in {[t['title'] for t in tables]}"
    for module in SCRIPTS[part][2]:
        if importlib.util.find_spec(module) is None:
            assert module in stderr, f"{part}: {module} is not installed and the script did not say so"


@pytest.mark.bench_long
@pytest.mark.parametrize("script", sorted(FOCUSED))
def test_focused_script_runs(smoke, script):
    """A focused script on tiny sizes (its own options) exits 0 and prints its figures."""
    proc = smoke.call(script, *FOCUSED[script])
    assert re.search(r"\d\.\d", proc.stdout + proc.stderr), f"{script} printed no figure"


def test_perfpage_renders_the_smoke_json(smoke, tmp_path):
    """``bench/perfpage.py --quick --render-only`` writes the page (and its plots) from the JSON the scripts wrote
    (the parts that are not long)."""
    parts = [p for p, s in SCRIPTS.items() if not s[3]]
    for part in parts:
        smoke.run(part)
    page = tmp_path / "docs" / "performance.md"
    smoke.call("perfpage.py", "--quick", "--render-only", "--only", ",".join(parts), "--out", str(page))
    text = page.read_text(encoding="utf-8")
    for part in parts:
        for t in smoke.run(part)[1]:
            assert f"### {t['title']}" in text
    assert list((tmp_path / "docs" / "images").glob("perf-*.png"))


def test_scale_input_below_a_synthetic_file_is_its_prefix(tmp_path, monkeypatch):
    """``bench_scale.input_file`` makes a synthetic size below one already on disk from that file's first
    documents (the size is read back from the larger file's name)."""
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("bench_scale_inputs", BENCH / "bench_scale.py")
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    monkeypatch.setattr(scale.synth_corpus, "DATA", tmp_path)
    doc = json.dumps({"text": "x" * 999_999}) + "\n"  # 1 MB of text per document
    (tmp_path / "synth-en-1GB-s0.jsonl").write_text(doc * 400, encoding="utf-8")
    path = scale.input_file(300 * 10**6)
    assert path.name == "synth-en-300MB-s0.jsonl"
    assert path.read_text(encoding="utf-8") == doc * 301


def test_warm_rounds_time_passes_after_an_untimed_one_with_the_collector_off(monkeypatch):
    """``bench_languages.best_rounds(warm=True)`` (the superword table) runs one untimed pass before every timed
    round, times the round with Python's garbage collector off and turns it back on after; without ``warm`` every
    pass of a round is timed with the collector as it was."""
    import gc

    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("bench_languages_rounds", BENCH / "bench_languages.py")
    languages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(languages)
    monkeypatch.setattr(languages, "MIN_ROUND", 0.0)  # one timed pass per round
    for warm, per_round in ((True, [True, False]), (False, [True])):
        seen = []
        best = languages.best_rounds({"one": lambda docs, seen=seen: seen.append(gc.isenabled())}, ["x"], 3, warm=warm)
        assert set(best) == {"one"}
        assert seen == [True] + per_round * 3  # the sizing pass, then each round's passes
        assert gc.isenabled()


def test_benchmarks_run_fastsw_from_compiled_bytecode(tmp_path):
    """A whole-run script (``_report.parse_args``) drops ``PYTHONDONTWRITEBYTECODE`` for the processes it starts and
    compiles the imported fastsw package first, as an installation has it: compiling fastsw from source again in
    every timed process would weigh on fastsw alone (the peers' modules are compiled where they are installed)."""
    prefix = tmp_path / "pycache"
    script = (
        "import argparse, os, subprocess, sys\n"
        f"sys.path.insert(0, {str(BENCH)!r})\n"
        "import _report\n"
        "p = argparse.ArgumentParser(); _report.add_arguments(p); _report.parse_args(p, [])\n"
        "import importlib.util, fastsw.tokenizer as t\n"
        "print(os.path.exists(importlib.util.cache_from_source(t.__file__)))\n"
        "subprocess.run([sys.executable, '-c', "
        "'import os, sys; print(os.environ.get(\"PYTHONDONTWRITEBYTECODE\"), sys.dont_write_bytecode)'])\n"
    )
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=str(prefix))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "None", "False"]
    assert any(prefix.rglob("tokenizer.*.pyc"))
