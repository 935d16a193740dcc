"""Ctrl-C (a real SIGINT) during training: the API raises ``KeyboardInterrupt``, the CLI prints
``fastsw: interrupted`` and exits 130, no thread keeps running, no file is left behind.

Each case runs a subprocess on ~3 MB of English. To land the signal inside a stage rather than
guess a delay, the child wraps the stage's entry point (the merge kernel, the reference
``learn_merges``, the document stream) so that the wrapper starts a timer that sends SIGINT to
the process a few milliseconds after the stage began; the child then reports whether the
stage was stopped early (the merge kernel returned fewer steps than asked).

Each child would otherwise also load (or, after a change to a kernel's source, compile) the
Numba kernels before it reaches the stage: minutes with a cold cache and contended cores, which
no per-child time limit can allow for. The ``warm_kernels`` fixture compiles them once, in a
child of the same environment and without a time limit, so that the children only load them;
the children's time limits (``HANG_GUARD``) only catch a hang.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import fastsw
from fastsw import _interrupt
from conftest import shared_path

REPO_ROOT = Path(fastsw.__file__).resolve().parents[1]
HANG_GUARD = 900  # seconds: a child that takes longer hangs (it does a few seconds of work)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """The first ~3 MB of the English training file as JSONL."""
    path = tmp_path_factory.mktemp("corpus") / "en.jsonl"
    size = 0
    with gzip.open(shared_path("corpus/en/train.jsonl.gz"), "rb") as src, open(path, "wb") as dst:
        for line in src:
            dst.write(line)
            size += len(line)
            if size > 3_000_000:
                break
    return path


@pytest.fixture(scope="module")
def warm_kernels() -> None:
    """The training and encoding kernels compiled into Numba's on-disk cache before any child starts."""
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "from fastsw.trainers import bpe_fast as fast_train\nfrom fastsw.encoding import encode_fast as fast_encode\n"
            "fast_train.warmup()\nfast_encode.warmup()",
        ],
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert r.returncode == 0, r.stderr


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.pop("FASTSW_PUREPYTHON", None)
    return env


# The child: ``STAGE`` picks what to interrupt; ``CALL`` is the training call (API or CLI).
_CHILD = """
import os, signal, sys, threading
import fastsw
from fastsw import cli
from fastsw.trainers import bpe_fast as fast_train
from fastsw.trainers import superword
from fastsw.trainers import train as trainer

def sigint_soon():
    # 1 ms: a merge loop on this corpus may finish in less than 20 ms on a fast, idle computer
    threading.Timer(0.001, os.kill, (os.getpid(), signal.SIGINT)).start()

kernel_calls = []  # (n_steps returned, max_steps asked) of the calls on the corpus
orig_kernel = fast_train._merge_loop
def kernel(*args):
    if args[0].shape[0] < 100:  # warmup() on a toy input
        return orig_kernel(*args)
    kernel_calls.append(None)
    if len(kernel_calls) == {nth_kernel_call}:
        sigint_soon()
    result = orig_kernel(*args)
    kernel_calls[-1] = (int(result[0]), int(args[7]))
    return result
fast_train._merge_loop = kernel

orig_learn = superword.learn_merges  # the reference backend's phase 1
def learn(*args, **kwargs):
    sigint_soon()
    return orig_learn(*args, **kwargs)
superword.learn_merges = learn

if {stage!r} == "counting":
    orig_iter = trainer.iter_documents
    def documents(*args, **kwargs):
        docs = list(orig_iter(*args, **kwargs))
        sigint_soon()
        while True:  # never ends: only the interrupt stops counting
            yield from docs
    trainer.iter_documents = documents

def report():
    print("kernel calls:", kernel_calls, file=sys.stderr)
    left = [t.name for t in threading.enumerate() if t.name.startswith("fastsw")]
    print("fastsw threads left:", left, file=sys.stderr)

{call}
"""

_API_CALL = """
try:
    fastsw.train({corpus!r}, algo={algo!r}, vocab_size=20000, backend={backend!r}{extra})
    print("finished")
except KeyboardInterrupt:
    report()
    print("caught")
"""

_CLI_CALL = """
code = cli.main(["train", {corpus!r}, "-o", {output!r}, "--algo", {algo!r}, "--vocab-size", "20000",
                 "--no-progress"{extra}])
report()
sys.exit(code)
"""

# stage -> (algo, which merge-kernel call is interrupted)
_STAGES = {
    "phase1": ("bpe", 1),
    "phase2-boundless": ("boundless", 2),
    "phase2-superbpe": ("superbpe", 2),
    "counting": ("bpe", 0),
}


def _child(stage: str, call: str, **kw) -> str:
    algo, nth = _STAGES[stage]
    if call == "api":
        extra = ", supermerges=5000" if algo == "superbpe" else ""
        body = _API_CALL.format(algo=algo, extra=extra, **kw)
    else:
        extra = ', "--supermerges", "5000"' if algo == "superbpe" else ""
        body = _CLI_CALL.format(algo=algo, extra=extra, **kw)
    return _CHILD.format(stage=stage, nth_kernel_call=nth, call=textwrap.dedent(body))


def _check_report(stage: str, err: str) -> None:
    assert "SystemError" not in err and "Traceback" not in err, err
    assert "fastsw threads left: []" in err, err  # no kernel or counting thread keeps running
    calls = eval(err.split("kernel calls:")[1].splitlines()[0])
    algo, nth = _STAGES[stage]
    if nth:
        # the interrupted kernel call stopped before its last step, and no later call started
        assert len(calls) == nth, err
        n_steps, max_steps = calls[-1]
        assert n_steps < max_steps, err
    else:
        assert calls == [], err


@pytest.mark.parametrize("stage", sorted(_STAGES))
def test_api_ctrl_c_raises_keyboard_interrupt(tmp_path, corpus, warm_kernels, stage):
    code = _child(stage, "api", corpus=str(corpus), backend="numba")
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=HANG_GUARD,
    )
    assert r.returncode == 0 and r.stdout.strip() == "caught", r.stderr
    _check_report(stage, r.stderr)


def test_api_ctrl_c_python_backend(tmp_path, corpus, warm_kernels):
    """The reference path is plain Python: the interrupt is a KeyboardInterrupt already."""
    code = _child("phase1", "api", corpus=str(corpus), backend="python")
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=HANG_GUARD,
    )
    assert r.returncode == 0 and r.stdout.strip() == "caught", r.stderr
    assert "SystemError" not in r.stderr and "fastsw threads left: []" in r.stderr, r.stderr


@pytest.mark.parametrize("stage", ["phase1", "phase2-boundless", "counting"])
def test_cli_ctrl_c_exits_130_without_output(tmp_path, corpus, warm_kernels, stage):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code = _child(stage, "cli", corpus=str(corpus), output=str(out_dir / "model.json"))
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=HANG_GUARD,
    )
    assert r.returncode == 130, r.stderr
    lines = [line for line in r.stderr.splitlines() if not line.startswith(("kernel calls:", "fastsw threads"))]
    assert lines and lines[-1] == "fastsw: interrupted", r.stderr
    _check_report(stage, r.stderr)
    assert os.listdir(out_dir) == []  # no model, no temporary file


def test_cli_ctrl_c_while_reading_a_pipe(tmp_path, corpus, warm_kernels):
    """``python -m fastsw train`` itself, interrupted while it counts a FIFO that never ends: the
    process is certainly inside counting when the signal comes (it has opened the FIFO, and
    counting cannot finish before the writer closes it)."""
    fifo = tmp_path / "corpus.txt"
    os.mkfifo(fifo)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fastsw",
            "train",
            str(fifo),
            "-o",
            str(out_dir / "m.json"),
            "--algo",
            "bpe",
            "--vocab-size",
            "1000",
            "--no-progress",
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=tmp_path,
    )
    try:
        with open(fifo, "w", encoding="utf-8") as pipe:  # returns once the child has opened the FIFO
            texts = [json.loads(line)["text"] for line in corpus.read_text(encoding="utf-8").splitlines()[:200]]
            pipe.write("\n".join(texts))
            pipe.flush()
            proc.send_signal(signal.SIGINT)
            err = proc.communicate(timeout=HANG_GUARD)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert err.endswith("fastsw: interrupted\n") and "SystemError" not in err and "Traceback" not in err, err
    assert os.listdir(out_dir) == []


# ---- the helper itself --------------------------------------------------------------------------------------------


def test_call_kernel_passes_results_and_errors():
    assert _interrupt.call_kernel(lambda a, b, stop: (a + b, int(stop[0])), 2, 3) == (5, 0)
    assert _interrupt.call_kernel(lambda a: a * 2, 21, stop=False) == 42

    def bad(stop):
        raise ValueError("too many pairs")

    with pytest.raises(ValueError, match="too many pairs"):
        _interrupt.call_kernel(bad)


def test_call_kernel_sets_stop_and_waits_on_keyboard_interrupt():
    """A SIGINT handled in the waiting thread (simulated from the kernel's thread with
    ``_thread.interrupt_main``) sets the flag the kernel polls; the helper returns only once
    the kernel has seen it, then re-raises ``KeyboardInterrupt``."""
    import _thread

    seen = []
    started = threading.Event()

    def kernel(stop):
        started.set()
        _thread.interrupt_main()
        while stop[0] == 0:
            pass
        seen.append(int(stop[0]))
        return "stopped"

    # interrupt_main does nothing while SIGINT is ignored (a run started as a background job)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            _interrupt.call_kernel(kernel)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert started.is_set() and seen == [1]
    assert not [t for t in threading.enumerate() if t.name.startswith("fastsw")]


def test_call_kernel_compiles_in_the_calling_thread():
    """Compiling takes up to tens of seconds on a first run; in a worker thread Ctrl-C could not
    stop it, so a kernel without machine code is compiled where the interrupt lands."""
    from numba import njit
    from numba.core import event

    @njit(nogil=True)
    def kernel(x, stop):
        return x + 1

    compiled_in = []

    class Listener(event.Listener):
        def on_start(self, ev):
            compiled_in.append(threading.current_thread())

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", Listener()):
        assert _interrupt.call_kernel(kernel, 41) == 42
        assert _interrupt.call_kernel(kernel, 1) == 2
    assert compiled_in and set(compiled_in) == {threading.current_thread()}
    assert len(kernel.signatures) == 1


ENCODE_CHILD = textwrap.dedent("""
    import os, signal, sys, threading, time
    import fastsw
    tok = fastsw.train(["the cat sat on the mat"] * 50, algo="bpe", vocab_size=300)
    text = ("The cat sat on the mat. " * 40 + "\\n") * 20000   # ~20 MB: each kernel call takes a while
    tok.encode_ordinary("warm")
    def sigint_later():
        time.sleep(float(sys.argv[1]))
        os.kill(os.getpid(), signal.SIGINT)
    try:
        threading.Thread(target=sigint_later, daemon=True).start()
        for _ in range(50):
            tok.encode_batch_to_numpy([text], num_threads=1)
            tok.encode_ordinary(text)
        print("finished")
    except KeyboardInterrupt:
        print("caught")
""")


@pytest.mark.parametrize("delay", [0.2, 0.5, 0.9, 1.3])
def test_api_ctrl_c_while_encoding_raises_keyboard_interrupt(tmp_path, warm_kernels, delay):
    # a big encoder call from the main thread used to surface the signal inside a Numba callback
    # as "SystemError: CPUDispatcher(<function _encode_docs>) returned a result with an exception set"
    r = subprocess.run(
        [sys.executable, "-c", ENCODE_CHILD, str(delay)],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=HANG_GUARD,
    )
    assert r.stdout.strip() == "caught", r.stdout + r.stderr
    assert "SystemError" not in r.stderr and "Traceback" not in r.stderr, r.stderr


# ---- Ctrl-C between the counting threads' queue operations ---------------------------------------------------------

QUEUE_CHILD = textwrap.dedent("""
    import signal, sys, threading
    from fastsw.corpus import counting
    from fastsw.pretokenizers.pretokenize import Pretokenizer

    counting.BATCH_DOCS = 3  # several batches, so the main thread puts often
    docs = ["the cat sat on the mat"] * 12
    pretok = Pretokenizer()
    thread_errors = []
    threading.excepthook = lambda args: thread_errors.append(repr(args.exc_value))

    def run_with_signal_at(target):
        # the SIGINT handler Python would run, called at the target-th bytecode the main thread executes in a
        # Queue method or a lock/condition method it calls (CPython may run it between any two bytecodes)
        seen = [0]

        def local(frame, event, arg):
            if event == "opcode":
                seen[0] += 1
                if seen[0] == target:
                    signal.getsignal(signal.SIGINT)(signal.SIGINT, frame)
            return local

        def global_(frame, event, arg):
            caller = frame.f_back.f_code.co_filename if frame.f_back is not None else ""
            if frame.f_code.co_filename.endswith("queue.py") or (
                    frame.f_code.co_filename.endswith("threading.py") and caller.endswith("queue.py")):
                frame.f_trace_opcodes = True
                return local
            return None

        sys.settrace(global_)
        try:
            counting.count_corpus(iter(docs), pretok, collect_runs=False, threads=2)
            outcome = "finished"
        except KeyboardInterrupt:
            outcome = "interrupted"
        except BaseException as e:
            outcome = repr(e)
        finally:
            sys.settrace(None)
        for t in threading.enumerate():
            if t.name.startswith("fastsw"):
                t.join(10)
        left = [t.name for t in threading.enumerate() if t.name.startswith("fastsw")]
        return outcome, seen[0], left

    target, bad = 1, []
    while True:
        outcome, seen, left = run_with_signal_at(target)
        if outcome not in ("interrupted", "finished") or left or thread_errors:
            bad.append((target, outcome, left, thread_errors[:]))
            thread_errors.clear()
        if seen < target:  # the signal came after the last bytecode: every position was tried
            break
        target += 1
    print("positions", target, "bad", bad)
""")


def test_ctrl_c_at_any_bytecode_of_the_counting_queues(tmp_path):
    # A KeyboardInterrupt raised inside Queue.put (between a lock's acquire and its release) left the queue's
    # lock in a state where a counting thread failed with "RuntimeError: release unlocked lock", or the main
    # thread blocked forever on its next put. The signal now waits until the queue operation has finished.
    r = subprocess.run(
        [sys.executable, "-c", QUEUE_CHILD],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=HANG_GUARD,
    )
    assert r.returncode == 0, r.stderr
    positions = int(r.stdout.split("positions ")[1].split()[0])
    assert positions > 100, r.stdout  # the signal was tried at every bytecode of many queue operations
    assert r.stdout.strip().endswith("bad []"), r.stdout[-3000:]


def test_a_child_process_starts_with_ctrl_c_at_its_default():
    """The interrupt tests' children start with SIGINT's default action and Python's handler in them."""
    code = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD)
    assert r.stdout.strip() == "True", r.stderr


def test_a_suite_started_with_ctrl_c_ignored_gives_its_children_ctrl_c():
    """Started as a background job of a non-interactive shell, the suite ignores SIGINT from the start, and a child
    would inherit the ignored signal (a Ctrl-C test's child then exits 0, or runs until its timeout): the conftest
    puts Python's handler back before any test runs."""
    test = f"{Path(__file__).resolve()}::test_a_child_process_starts_with_ctrl_c_at_its_default"
    code = (
        "import signal, subprocess, sys\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        f"sys.exit(subprocess.call([sys.executable, '-m', 'pytest', '-q', '-n', '0', {test!r}]))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=HANG_GUARD)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed" in r.stdout
