"""fastsw.corpus.distributed on a real Dask LocalCluster (worker processes on loopback): counts, candidates and models
identical to single-process counting and training whatever the sharding, and the faults of issue 12 (a worker
killed mid-shard, an unreadable shard, an unreachable scheduler, mixed formats, a mismatched phase-1 model).

One cluster for the module (starting one costs a few seconds); the CLI tests use it through --scheduler, and one
test starts its own with --dask-local.
"""

import contextlib
import gzip
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastsw
from fastsw.corpus import distributed
from fastsw.corpus.counting import count_corpus
from fastsw.trainers.bpe_fast import FastBackend, unpack_candidates
from fastsw.pretokenizers.pretokenize import Pretokenizer
from fastsw.corpus.readers import iter_documents
from fastsw.trainers.superword import ReferenceBackend
from fastsw.trainers.train import phase1_tokenizer
from fastsw.alphabet import default_alphabet

from conftest import HYPOTHESIS_EXAMPLES, assert_error, run, shared_path, write_jsonl

REPO_ROOT = Path(fastsw.__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def client():
    with distributed.connect(local_workers=2) as c:
        yield c


@pytest.fixture(scope="module")
def documents():
    """Real text: English training documents, then German and Thai held-out ones (script changes, letter runs)."""
    docs = []
    with gzip.open(shared_path("corpus/en/train.jsonl.gz"), "rt", encoding="utf-8") as f:
        for _, line in zip(range(160), f):
            docs.append(json.loads(line)["text"])
    for lang in ("de", "th"):
        with open(shared_path(f"corpus/{lang}/heldout.jsonl"), encoding="utf-8") as f:
            for _, line in zip(range(40), f):
                docs.append(json.loads(line)["text"])
    return docs


def shard(tmp_path: Path, docs, n: int, name: str = "part") -> list:
    """``docs`` cut into ``n`` consecutive JSONL shards (some may be empty)."""
    bounds = [round(k * len(docs) / n) for k in range(n + 1)]
    return [write_jsonl(tmp_path / f"{name}-{k}.jsonl", docs[bounds[k] : bounds[k + 1]]) for k in range(n)]


def same_counts(a, b) -> None:
    assert a.pretoken_multiset() == b.pretoken_multiset()
    assert a.has_runs == b.has_runs
    if a.has_runs:
        assert a.run_multiset() == b.run_multiset()
    assert (a.n_documents, a.n_bytes, a.normalize) == (b.n_documents, b.n_bytes, b.normalize)


# 5 shards on 2 workers: one level of merge tasks, then the caller merges 3 tables; 11: two levels (11 -> 6 -> 3,
# odd tables carried up), then the caller's 3
@pytest.mark.parametrize("n_shards", [1, 5, 11])
def test_count_equals_single_process_whatever_the_sharding(client, documents, tmp_path, n_shards):
    shards = shard(tmp_path, documents, n_shards)
    local = count_corpus(iter_documents(shards), Pretokenizer(), collect_runs=True)
    counts = distributed.count(client, shards)
    same_counts(counts, local)  # (the CLI test below compares the saved files byte for byte)


def test_count_custom_pattern_and_normalize_use_the_reference_counter(client, documents, tmp_path):
    # a custom pattern counts through the reference CountTable on the workers, the compiled one above
    pretok = Pretokenizer(mode="simple", main_pattern=r"\w+")
    shards = shard(tmp_path, documents[:100], 3)
    local = count_corpus(iter_documents(shards), pretok, collect_runs=True, normalize="nfkc")
    same_counts(distributed.count(client, shards, pretokenizer=pretok, normalize="nfkc"), local)


@pytest.mark.parametrize(
    "algo, options",
    [
        ("boundless", {}),
        ("superbpe", {"supermerges": 150}),
        ("boundless", {"greedy_split": True, "min_count_floor": 3, "profile": "hf"}),
    ],
)
def test_train_equals_single_process_training(client, documents, tmp_path, algo, options):
    shards = shard(tmp_path, documents, 5)
    tok = distributed.train(client, shards, algo=algo, vocab_size=700, **options)
    local = fastsw.train(shards, algo=algo, vocab_size=700, **options)
    assert tok.merges == local.merges
    assert tok.vocab == local.vocab
    if algo != "bpe":
        assert tok.n_super > 0  # phase 2 ran on candidates counted on the cluster
    assert tok.training_info["dask"] == {"shards": 5, "workers": 2}
    text = documents[3] + documents[-1]
    assert tok.encode(text) == local.encode(text)


def test_train_python_backend_and_other_sharding(client, documents, tmp_path):
    shards = shard(tmp_path, documents, 2)
    tok = distributed.train(client, shards, algo="superbpe", vocab_size=600, supermerges=100, backend="python")
    local = fastsw.train(shard(tmp_path, documents, 6, "other"), algo="superbpe", vocab_size=600, supermerges=100)
    assert tok.merges == local.merges


def test_candidates_equal_both_backends_aggregates(client, documents, tmp_path):
    shards = shard(tmp_path, documents, 3)
    counts = count_corpus(iter_documents(shards), Pretokenizer(), collect_runs=True)
    ref = ReferenceBackend()
    merges, words, _ = ref.phase1(counts, default_alphabet("paper"), "paper", 300)
    tok1 = phase1_tokenizer(default_alphabet("paper"), merges, Pretokenizer(), "paper")
    expected = ref.candidates(counts, words, tok1)
    assert len(expected) > 100
    assert distributed.count_candidates(client, shards, tok1, counts=counts, backend="python") == expected
    packed = distributed.count_candidates(client, shards, tok1, backend="numba")
    assert unpack_candidates(packed) == expected
    assert unpack_candidates(FastBackend.merge_candidates([packed, packed])) == {k: 2 * c for k, c in expected.items()}


@settings(
    max_examples=min(HYPOTHESIS_EXAMPLES, 15),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    docs=st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40), min_size=1, max_size=12),
    cuts=st.lists(st.integers(0, 12), max_size=3),
)
def test_count_adversarial_unicode_any_cut(client, tmp_path_factory, docs, cuts):
    tmp = tmp_path_factory.mktemp("hyp")
    bounds = sorted({0, len(docs), *(min(c, len(docs)) for c in cuts)})
    shards = [write_jsonl(tmp / f"s{k}.jsonl", docs[a:b]) for k, (a, b) in enumerate(zip(bounds, bounds[1:]))]
    same_counts(distributed.count(client, shards), count_corpus(docs, Pretokenizer(), collect_runs=True))


# ---- CLI ----------------------------------------------------------------------------------------------------------


def test_cli_count_and_train_on_the_scheduler(client, documents, tmp_path, capsys):
    shards = shard(tmp_path, documents, 3)
    address = client.scheduler.address
    code, _, err = run(capsys, "count", *shards, "--scheduler", address, "--no-progress", "-o", tmp_path / "d.gz")
    assert code == 0, err
    assert run(capsys, "count", *shards, "--no-progress", "-o", tmp_path / "l.gz")[0] == 0
    assert (tmp_path / "d.gz").read_bytes() == (tmp_path / "l.gz").read_bytes()
    code, _, err = run(
        capsys,
        "train",
        *shards,
        "--scheduler",
        address,
        "--vocab-size",
        800,
        "--no-progress",
        "-o",
        tmp_path / "d.json",
    )
    assert code == 0, err
    assert run(capsys, "train", *shards, "--vocab-size", 800, "--no-progress", "-o", tmp_path / "l.json")[0] == 0
    dask_model = json.loads((tmp_path / "d.json").read_text())
    assert dask_model["merges"] == json.loads((tmp_path / "l.json").read_text())["merges"]


def test_cli_dask_local_starts_and_stops_a_cluster(documents, tmp_path, capsys):
    shards = shard(tmp_path, documents[:50], 2)
    code, _, err = run(capsys, "count", *shards, "--dask-local", 1, "--no-runs", "-o", tmp_path / "d.gz")
    assert code == 0, err
    assert "counting on Dask (2 shards)" in err
    local = count_corpus(iter_documents(shards), Pretokenizer(), collect_runs=False)
    same_counts(fastsw.corpus.counting.Counts.load(tmp_path / "d.gz"), local)


def test_cli_dask_options_that_do_not_go_together(tmp_path, capsys):
    s = write_jsonl(tmp_path / "a.jsonl", ["x y"])
    assert_error(
        *run(capsys, "count", s, "--dask-local", 1, "--workers", 2, "-o", tmp_path / "c.gz")[::2],
        "--workers",
        "--dask-local",
    )
    assert_error(*run(capsys, "train", "--dask-local", 1, "-o", tmp_path / "m.json")[::2], "INPUT")
    assert_error(
        *run(
            capsys, "train", s, "--scheduler", "tcp://127.0.0.1:1", "--from-counts", "c.gz", "-o", tmp_path / "m.json"
        )[::2],
        "--from-counts",
    )
    code, _, err = run(capsys, "count", s, "--dask-local", 1, "--scheduler", "tcp://x:1", "-o", tmp_path / "c.gz")
    assert code == 2 and "not allowed with" in err
    for command in ("count", "train", "shard"):  # the timeout is the scheduler's
        model = ["-m", tmp_path / "m.json"] if command == "shard" else []
        assert_error(
            *run(capsys, command, s, *model, "--dask-local", 1, "--connect-timeout", 5, "-o", tmp_path / "out")[::2],
            "--connect-timeout",
            "--scheduler",
        )
    for bad in ("0", "-1", "x", "inf", "nan"):
        code, _, err = run(
            capsys, "count", s, "--scheduler", "tcp://x:1", "--connect-timeout", bad, "-o", tmp_path / "c.gz"
        )
        assert code == 2 and "seconds > 0" in err, (bad, err)


# ---- faults -------------------------------------------------------------------------------------------------------


def _open_fifo_for_writing(path: Path, deadline: float) -> int:
    """Open the FIFO for writing once a reader (a worker counting the shard) has opened it."""
    while True:
        try:
            return os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            if time.monotonic() > deadline:
                raise AssertionError("no worker opened the FIFO shard") from None
            time.sleep(0.02)


def _worker_processing(client, suffix: str, deadline: float) -> str:
    while True:
        for address, keys in client.processing().items():
            if any(str(k).endswith(suffix) for k in keys):
                return address
        if time.monotonic() > deadline:
            raise AssertionError(f"no worker is processing the task *{suffix}")
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a dead child of the nanny that is not reaped yet is a zombie: not alive)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):  # gone (also while being read)
        return False


@contextlib.contextmanager
def _worker_killed(pid: int, deadline: float):
    """SIGKILL the worker process ``pid`` and wait until it is dead; for the block, the cluster keeps the killed
    worker's nanny for as long as its restart takes (many seconds when the cores are shared) (Dask closes for good a worker that is not back
    within ``distributed.deploy.lost-worker-timeout``, 15 s). End the block with ``client.wait_for_workers``."""
    import dask

    with dask.config.set({"distributed.deploy.lost-worker-timeout": "300s"}):
        os.kill(pid, signal.SIGKILL)
        while _alive(pid):
            assert time.monotonic() < deadline, "the killed worker did not die"
            time.sleep(0.02)
        yield


def _unread_bytes(fd: int) -> int:
    import fcntl
    import termios

    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def test_worker_killed_mid_shard_is_retried_and_counted_once(client, documents, tmp_path):
    plain = write_jsonl(tmp_path / "plain.jsonl", documents[:40])
    slow = tmp_path / "slow.jsonl"  # a FIFO while the first worker reads it, then a file with the whole shard
    os.mkfifo(slow)
    whole = write_jsonl(tmp_path / "whole.tmp", documents[40:120])
    result = {}

    def job():
        try:
            result["counts"] = distributed.count(client, [plain, slow])
        except BaseException as e:  # noqa: B902 -- reported by the test thread
            result["error"] = e

    thread = threading.Thread(target=job)
    thread.start()
    deadline = time.monotonic() + 60
    # 1. a worker is reading the shard: send its first documents (less than the pipe holds) and wait until the
    # worker has read them; then put the whole shard in its place (the worker keeps the FIFO it opened) and
    # SIGKILL that worker process mid-shard
    fd = _open_fifo_for_writing(slow, deadline)
    first = whole.read_bytes()[:48_000]
    first = first[: first.rindex(b"\n") + 1]
    assert first and os.write(fd, first) == len(first)
    while _unread_bytes(fd):
        assert time.monotonic() < deadline, "the worker does not read the shard"
        time.sleep(0.02)
    address = _worker_processing(client, "shard-1", deadline)
    pid = client.run(os.getpid, workers=[address])[address]
    os.replace(whole, slow)
    with _worker_killed(pid, deadline):
        os.close(fd)
        # 2. Dask runs the shard again on a live worker, which reads the whole shard
        thread.join(60)
        assert not thread.is_alive()
        assert "error" not in result, result.get("error")
        # the documents the killed worker had counted are not in the table: every document exactly once
        same_counts(result["counts"], count_corpus(documents[:120], Pretokenizer(), collect_runs=True))
        client.wait_for_workers(2, timeout=240)  # the nanny restarted the killed worker


def test_unreadable_shard_stops_the_job_with_its_name_and_saves_nothing(client, documents, tmp_path, capsys):
    good = shard(tmp_path, documents[:40], 3)
    bad = tmp_path / "broken.jsonl"
    bad.write_bytes(b'{"text": "fine"}\n{"text": "bad \xff byte"}\n')
    with pytest.raises(distributed.ShardError, match=r"broken\.jsonl.*line 2"):
        distributed.count(client, [*good, bad])
    out = tmp_path / "counts.gz"
    code, _, err = run(capsys, "count", *good, bad, "--scheduler", client.scheduler.address, "--no-progress", "-o", out)
    assert_error(code, err, "broken.jsonl", "line 2")
    missing = tmp_path / "gone.jsonl"
    code, _, err = run(
        capsys,
        "train",
        *good,
        missing,
        "--scheduler",
        client.scheduler.address,
        "--no-progress",
        "-o",
        tmp_path / "m.json",
    )
    assert_error(code, err, "gone.jsonl", "not found")
    assert not out.exists() and not (tmp_path / "m.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*(p.name for p in good), "broken.jsonl"])


def test_unreachable_scheduler_is_a_clear_error():
    with pytest.raises(
        ConnectionError,
        match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9 .*dask "
        r"scheduler",
    ):
        with distributed.connect("tcp://127.0.0.1:9", timeout=1):
            pass
    with pytest.raises(ValueError, match="scheduler address 'no-port' is not valid .*tcp://HOST:8786"):
        with distributed.connect("no-port"):
            pass


def test_mixed_formats_and_bad_shard_lists_are_clear_errors(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"mixed formats: a\.jsonl\.gz is JSON Lines but b\.txt is plain text"):
        distributed.check_shards([Path("a.jsonl.gz"), "c.ndjson", "b.txt"])
    with pytest.raises(ValueError, match="no shards"):
        distributed.check_shards([])
    with pytest.raises(TypeError, match="file paths"):
        distributed.check_shards([b"a.jsonl"])
    code, _, err = run(capsys, "count", "a.jsonl", "b.txt", "--scheduler", "tcp://127.0.0.1:9", "-o", tmp_path / "c.gz")
    assert_error(code, err, "mixed formats", "a.jsonl", "b.txt")


def test_phase1_model_with_another_pretokenizer_is_a_clear_error(client, documents, tmp_path):
    shards = shard(tmp_path, documents[:80], 2)
    counts = distributed.count(client, shards, collect_runs=False)
    simple = fastsw.train(shards, algo="bpe", vocab_size=400, pretokenizer="simple")
    with pytest.raises(ValueError, match="phase-1 model's pre-tokenizer differs"):
        distributed.count_candidates(client, shards, simple, counts=counts)
    boundless = fastsw.train(shards, algo="boundless", vocab_size=400)
    with pytest.raises(ValueError, match="supermerges; give the phase-1 model"):
        distributed.count_candidates(client, shards, boundless)
    with pytest.raises(ValueError, match="workers= does not apply"):
        distributed.train(client, shards, vocab_size=400, workers=2)


def test_docstring_examples():
    import doctest

    assert doctest.testmod(distributed, optionflags=doctest.ELLIPSIS).failed == 0
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(
        ReferenceBackend.merge_candidates, "merge_candidates", globs={"ReferenceBackend": ReferenceBackend}
    ):
        runner.run(test)
    assert runner.failures == 0 and runner.tries == 1


# ---- paths, addresses and interrupts ---------------------------------------------------------------------------


def test_relative_shard_paths_are_read_where_the_caller_runs(documents, tmp_path, monkeypatch):
    """The workers of this cluster run in another directory that holds a same-named decoy shard: a relative
    path is the caller's file, made absolute before it is sent."""
    decoy, here = tmp_path / "worker-cwd", tmp_path / "caller-cwd"
    decoy.mkdir()
    here.mkdir()
    write_jsonl(decoy / "part.jsonl", ["decoy text that must not be counted"])
    write_jsonl(here / "part.jsonl", documents[:30])
    monkeypatch.chdir(decoy)
    with distributed.connect(local_workers=1) as client:
        assert set(client.run(os.getcwd).values()) == {str(decoy)}
        monkeypatch.chdir(here)
        counts = distributed.count(client, ["part.jsonl"])
    same_counts(counts, count_corpus(documents[:30], Pretokenizer(), collect_runs=True))


def test_shard_the_workers_cannot_see_names_it_and_the_worker(client, tmp_path):
    missing = tmp_path / "gone.jsonl"
    with pytest.raises(distributed.ShardError) as info:
        distributed.count(client, [missing])
    workers = list(client.scheduler_info()["workers"])
    assert str(missing) in str(info.value) and "not found" in str(info.value)
    assert "every worker must be able to read the shards" in str(info.value)
    assert any(f"on the Dask worker {w}" in str(info.value) for w in workers), (str(info.value), workers)


def test_directory_among_the_shards_is_reported_as_a_directory(tmp_path, capsys):
    folder = tmp_path / "shards"
    folder.mkdir()
    good = write_jsonl(tmp_path / "a.jsonl", ["x y"])
    with pytest.raises(ValueError, match=r"shards is a directory, not a shard file"):
        distributed.check_shards([good, folder])
    code, _, err = run(capsys, "count", good, folder, "--scheduler", "tcp://127.0.0.1:9", "-o", tmp_path / "c.gz")
    assert_error(code, err, str(folder), "is a directory")


def _cli(*argv, cwd, **kwargs):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.Popen(
        [sys.executable, "-m", "fastsw", *map(str, argv)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def test_compute_failure_is_one_line_without_the_workers_logs(documents, tmp_path):
    good = write_jsonl(tmp_path / "good.jsonl", documents[:10])
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "fine"}\n{"text": "bad \xff byte"}\n')
    p = _cli("count", good.name, bad.name, "--dask-local", 1, "--no-progress", "-o", "c.gz", cwd=tmp_path)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("fastsw: error: cannot count shard"), err
    assert "bad.jsonl line 2" in err and "Compute Failed" not in err


class _NotDask:
    """Real TCP services on loopback that are not a Dask scheduler: an HTTP server, and a black hole that
    accepts connections and never answers (``accepted`` is set at its first connection)."""

    def __init__(self, kind: str):
        import http.server

        self.accepted = threading.Event()
        self._held = []
        if kind == "http":
            accepted = self.accepted

            class Server(http.server.ThreadingHTTPServer):
                def verify_request(self, request, client_address):
                    accepted.set()
                    return True

            self._server = Server(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
            self._server.daemon_threads = True
            self.port = self._server.server_address[1]
            threading.Thread(target=self._server.serve_forever, daemon=True).start()
        else:
            self._server = None
            self._socket = socket.socket()
            self._socket.bind(("127.0.0.1", 0))
            self._socket.listen(8)
            self.port = self._socket.getsockname()[1]
            threading.Thread(target=self._hold, daemon=True).start()
        self.address = f"tcp://127.0.0.1:{self.port}"

    def _hold(self):
        while True:
            try:
                conn, _ = self._socket.accept()
            except OSError:
                return
            self._held.append(conn)
            self.accepted.set()

    def close(self):
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        else:
            self._socket.close()
            for conn in self._held:
                conn.close()


@pytest.fixture(params=["http", "black hole"])
def not_dask(request):
    service = _NotDask(request.param)
    yield service
    service.close()


def test_address_of_a_service_that_is_not_dask_is_a_connection_error(not_dask, tmp_path):
    """The API within its timeout (the call runs in a child, so that a hang fails the test instead of hanging it),
    and the CLI with one line."""
    code = (
        f"from fastsw.corpus import distributed\n"
        f"try:\n"
        f"    with distributed.connect({not_dask.address!r}, timeout=2):\n"
        f"        print('connected')\n"
        f"except ConnectionError as e:\n"
        f"    print('ConnectionError:', e)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
    )
    assert r.stdout.startswith(f"ConnectionError: the Dask scheduler at {not_dask.address} did not answer"), r
    assert r.stderr == "", r.stderr
    shard_file = write_jsonl(tmp_path / "a.jsonl", ["x y"])
    p = _cli(
        "count",
        shard_file.name,
        "--scheduler",
        not_dask.address,
        "--connect-timeout",
        "2",
        "--no-progress",
        "-o",
        "c.gz",
        cwd=tmp_path,
    )
    out, err = p.communicate(timeout=60)
    assert p.returncode == 2, err
    assert len(err.splitlines()) == 1 and not_dask.address in err and "within 2 s" in err, err
    assert sorted(os.listdir(tmp_path)) == ["a.jsonl"]


def test_a_worker_address_is_not_a_scheduler(client):
    worker = next(iter(client.scheduler_info()["workers"]))
    with pytest.raises(ConnectionError, match=f"{worker} is a Dask Worker, not a scheduler"):
        with distributed.connect(worker, timeout=5):
            pass


def test_ctrl_c_while_connecting_ends_the_process(not_dask, tmp_path):
    shard_file = write_jsonl(tmp_path / "a.jsonl", ["x y"])
    p = _cli(
        "count",
        shard_file.name,
        "--scheduler",
        not_dask.address,
        "--no-progress",
        "-o",
        "c.gz",
        cwd=tmp_path,
    )
    assert not_dask.accepted.wait(60), "the command did not connect"
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert err == "fastsw: interrupted\n"


def _python_children(pid: int) -> list:
    """The child processes of ``pid`` (started from any of its threads) that run Python's multiprocessing
    (a Dask worker process once it has been exec'd, while it imports and starts)."""
    kids = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as f:
            kids += f.read().split()
    running = []
    for kid in kids:
        with contextlib.suppress(OSError), open(f"/proc/{kid}/cmdline", "rb") as f:
            if b"spawn_main" in f.read():
                running.append(kid)
    return running


def test_ctrl_c_during_cluster_start_is_one_line(documents, tmp_path):
    """Ctrl-C as a terminal sends it: to the whole process group, the worker processes included, as soon as the
    first of them runs Python (it is still importing; the cluster is not up yet)."""
    shard_file = write_jsonl(tmp_path / "a.jsonl", documents[:10])
    p = _cli(
        "count", shard_file.name, "--dask-local", 2, "--no-progress", "-o", "c.gz", cwd=tmp_path, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while not _python_children(p.pid) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert (p.returncode, err) == (130, "fastsw: interrupted\n")
    assert not (tmp_path / "c.gz").exists()
