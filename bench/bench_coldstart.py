"""Cold start: what a fresh install pays before its first model and its first ids.

Runs the README's first training command (``fastsw train --algo boundless -o sample.model.json``: a
4096-token BoundlessBPE model on the bundled sample corpus) in a subprocess with an empty
``NUMBA_CACHE_DIR`` (a fresh install: every Numba kernel it runs compiles), then again with that cache
(warm), and a loaded model's first encodes in a new process: ``fastsw.load`` then ``encode("hello")``,
then a 20,000-character text, on an empty cache and on the warm one. Each row is the median over
``--repeat`` runs of wall and CPU seconds (user + system of the child and of the processes it waited for, from
``getrusage``: CPU time moves less than wall time with whatever else the computer runs). The first row minus the second is
what compiling the training kernels costs: in wall time (what the user waits; the training command compiles
part of its kernels in a background process, on a second core) and in CPU time (both processes' work).

    python bench/bench_coldstart.py --quick --json coldstart.json   # one run of each (for bench/perfpage.py)
    python bench/bench_coldstart.py --repeat 3
    python bench/bench_coldstart.py --checkout OTHER_CHECKOUT      # the same runs on another checkout's code
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _report import add_arguments, parse_args, rounded, table, write_json  # noqa: E402

TRAIN = ["-m", "fastsw", "train", "--algo", "boundless", "-o", "sample.model.json"]

# The child of the encoding rows: its own wall and CPU clocks around each step, as JSON on stdout.
ENCODE = """
import json, sys, time
t = [(time.perf_counter(), time.process_time())]
import fastsw
tok = fastsw.load("sample.model.json")
t.append((time.perf_counter(), time.process_time()))
tok.encode("hello")
t.append((time.perf_counter(), time.process_time()))
from fastsw.corpus.sample import sample_documents
text = " ".join(sample_documents())[:20000]
t.append((time.perf_counter(), time.process_time()))  # (reading the text is not timed)
tok.encode(text)
t.append((time.perf_counter(), time.process_time()))
steps = [[b[0] - a[0], b[1] - a[1]] for a, b in zip(t, t[1:])]
steps = steps[:2] + steps[3:]
from fastsw.encoding import encode_fast as fast_encode
background = [None, None]
if fast_encode._background is not None:  # the kernels compiling in a background process: its wall and CPU
    import os
    _, _, use = os.wait4(fast_encode._background.pid, 0)
    background = [time.perf_counter() - t[3][0], use.ru_utime + use.ru_stime]
    fast_encode._background.returncode = 0
    a = (time.perf_counter(), time.process_time())
    tok.encode(text + " ")
    steps.append([time.perf_counter() - a[0], time.process_time() - a[1]])
else:
    steps.append([None, None])
print(json.dumps(steps + [background]))
"""


def run(args, cwd: Path, env: dict) -> tuple:
    """``(wall s, CPU s, stdout)`` of one child process (its user + system time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{r.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, r.stdout


def one_round(checkout: Path) -> dict:
    """Every measurement once, each cold run on its own empty cache directory."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(checkout), env.get("PYTHONPATH")]))
        for name in ("FASTSW_PUREPYTHON", "NUMBA_DISABLE_JIT"):
            env.pop(name, None)
        env["NUMBA_CACHE_DIR"] = str(tmp / "cache-train")
        out["train cold"] = run(TRAIN, tmp, env)[:2]
        out["train warm"] = run(TRAIN, tmp, env)[:2]
        for cache in ("cold", "warm"):  # cold: a new empty cache; warm: the one the cold run filled
            env["NUMBA_CACHE_DIR"] = str(tmp / "cache-encode")
            wall, cpu, stdout = run(["-c", ENCODE], tmp, env)
            steps = json.loads(stdout.splitlines()[-1])
            out[f"process {cache}"] = (wall, cpu)
            for step, (w, c) in zip(("load", "encode hello", "encode 20k chars", "encode again", "background"), steps):
                out[f"{step} {cache}"] = (w, c)
    return out


ROWS = [  # (key, what the row is)
    ("train cold", "fastsw train --algo boundless -o sample.model.json, empty Numba cache"),
    ("train warm", "the same command again (kernels in the cache)"),
    ("load cold", "fastsw.load(model), empty Numba cache"),
    ("encode hello cold", "then tok.encode('hello')"),
    ("encode 20k chars cold", "then tok.encode(20,000 characters)"),
    ("background cold", "the kernels' compilation in the background process (from that encode to its end)"),
    ("encode again cold", "then tok.encode(20,000 characters) again, the kernels loaded from the cache"),
    ("process cold", "that whole process (import, load, the encodes, waiting for the background process)"),
    ("load warm", "fastsw.load(model), kernels in the cache"),
    ("encode hello warm", "then tok.encode('hello')"),
    ("encode 20k chars warm", "then tok.encode(20,000 characters)"),
    ("process warm", "that whole process (import, load, the encodes)"),
]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(p, quick="one run of each measurement (default: --repeat 3)")
    p.add_argument("--repeat", type=int, default=None, help="runs of each measurement; the median is shown")
    p.add_argument(
        "--checkout", type=Path, default=HERE.parent, help="the repository whose fastsw is measured (default: this one)"
    )
    a = parse_args(p, argv)  # --smoke: as --quick (what it measures is the compilation itself)
    repeat = a.repeat or (1 if a.quick else 3)
    rounds = []
    for i in range(repeat):
        rounds.append(one_round(a.checkout.resolve()))
        print(f"round {i + 1}/{repeat} done", file=sys.stderr)
    rows = []
    for key, what in ROWS:
        walls = [r[key][0] for r in rounds]
        cpus = [r[key][1] for r in rounds]
        rows.append([what, rounded(statistics.median(walls), 3), rounded(statistics.median(cpus), 3)])
    compile_wall = statistics.median(r["train cold"][0] - r["train warm"][0] for r in rounds)
    compile_cpu = statistics.median(r["train cold"][1] - r["train warm"][1] for r in rounds)
    notes = (
        f"Median of {repeat} run(s). CPU = user + system seconds of the child process and of the processes it "
        "waited for (the training command's background compilation included; the encoding rows: the child's own "
        "process time around each step). Compiling the kernels of the training command (cold run minus warm run): "
        f"{compile_wall:.1f} s of wall time, {compile_cpu:.1f} s of CPU."
    )
    t = table(
        "Cold start: a fresh install's first training run and first encodes", ["run", "wall s", "CPU s"], rows, notes
    )
    for row in rows:
        print(f"{row[0]:<78} wall {row[1]:>7} s  CPU {row[2]:>7} s")
    print(t["notes"])
    if a.json:
        write_json(a.json, t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
