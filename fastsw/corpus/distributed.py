"""Counting on a Dask cluster: pretokens, then supermerge candidates, of a corpus split into shard files.

This module owns the distributed side of counting (``pip install fastsw[dask]``). It adds no scheduler, queue or
RPC of its own: every shard is one ``dask.distributed`` task, and Dask places, retries and moves the results. The
counting itself is :mod:`fastsw.corpus.counting`'s (the compiled counter or the reference, one table per task) and the
candidate aggregation the training backends' (:meth:`fastsw.trainers.bpe_fast.FastBackend.aggregate` and its reference
twin); merging -- learning the merges -- stays on the machine that calls :func:`train`.

Two passes over the shards, as SPEC section 5 splits the work:

1. :func:`count`: each task streams one shard and returns its table as compact parts (the counter's
   ``payload()``: a list of distinct pretokens, int64 counts and uint8 letter flags as numpy arrays, packed
   letter runs if asked for), never documents. The tables are added up in a binary tree of merge tasks on the
   workers, which have priority over shard tasks (a merge runs as soon as its two tables exist), down to at most
   ``2 * workers`` tables; the caller merges those itself, in shard order, each as soon as it is done.
2. :func:`count_candidates`: after phase 1, the caller ships the phase-1 model's eligible vocabulary -- the bytes
   of every token that is reachable and contains a letter, with its id, which is how the encoder itself decides
   that a pretoken is one eligible token -- and each task reads its shard again, counts it with letter runs, and
   cuts those runs into candidates (tuples of phase-1 token ids) with the backend's aggregator. The candidate
   tables are added up in a tree the same way (``merge_candidates``). Letter runs never leave a worker, and the
   caller's phase 1 works on a table without them.

Exactness. A shard's table is a multiset of ``(pretoken, count)`` and ``(run, count)``; merging adds multisets,
so the result is the single-process table whatever the sharding, the tree's shape or the number of workers, and
training depends only on the multisets (ties are broken by token bytes). ``tests/corpus/test_distributed.py`` trains on a
real ``LocalCluster`` and compares models and count files with single-process training.

Faults. Each shard is one task with its own key, and each key appears exactly once in the merge tree, so a shard's
counts are added exactly once: when a worker dies mid-shard (killed, out of memory) the scheduler runs that task
again on another worker, and a finished shard whose result died with its worker is recomputed from its inputs
(Dask keeps the graph). A worker that dies ``distributed.scheduler.allowed-failures`` times (default 3) on the same
shard fails the job with :class:`ShardError`. A shard that cannot be read (missing, invalid UTF-8, bad JSON) fails
its task with the reader's message, which names the file; the caller cancels the other tasks and raises it, and
nothing is saved (files are only written after the whole job, atomically). An unreachable scheduler is a
``ConnectionError`` saying what to start.

Design notes: see docs/internals.md, section "Counting on a Dask cluster".
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from typing import Any, Dict, Iterator, List, Optional, Sequence

from fastsw._config import resolve_backend
from fastsw.corpus.counting import BATCH_BYTES, BATCH_DOCS, Counts, _batches, _make_table
from fastsw.pretokenizers.base import BasePretokenizer
from fastsw.pretokenizers.pretokenize import Pretokenizer, check_normalize, make_pretokenizer, normalize_text
from fastsw.progress import Progress
from fastsw.corpus.readers import InputError, _format, iter_documents

__all__ = ["connect", "count", "count_candidates", "train", "ShardError", "CONNECT_TIMEOUT"]

#: Seconds to wait for a scheduler given by address before saying it cannot be reached.
CONNECT_TIMEOUT = 10

# train() options that do not apply to shards counted on a cluster (they read text in this process, or weight
# languages, which needs language columns)
_NOT_DISTRIBUTED = (
    "inputs",
    "from_counts",
    "workers",
    "weights",
    "shares",
    "lang_field",
    "phase1",
    "dev",
    "ratios",
    "global_merges",
    "parity_variant",
    "window",
    "alpha",
    "min_frequency",
    "parity_exhausted",
)


class ShardError(ValueError):
    """A shard could not be counted (unreadable, bad data, or its worker died too often); names the file."""


def _dask():
    try:
        from dask import distributed
    except ImportError:
        raise ImportError(
            "fastsw.corpus.distributed needs Dask distributed; install it with: pip install 'fastsw[dask]'"
        ) from None
    return distributed


@contextlib.contextmanager
def connect(
    scheduler: Optional[str] = None, *, local_workers: Optional[int] = None, timeout: float = CONNECT_TIMEOUT
) -> Iterator[object]:
    """A ``dask.distributed.Client`` for the block: connected to the scheduler at ``scheduler`` (an address such as
    ``"tcp://10.0.0.5:8786"``), or to a new ``LocalCluster`` of ``local_workers`` worker processes (one thread
    each, on loopback) that is shut down afterwards. An unreachable scheduler is a ``ConnectionError``.

        >>> from fastsw.corpus import distributed
        >>> with distributed.connect(local_workers=2) as client:          # doctest: +SKIP
        ...     counts = distributed.count(client, ["a.jsonl.gz", "b.jsonl.gz"])
    """
    if (scheduler is None) == (local_workers is None):
        raise ValueError(
            "give either scheduler= (the address of a running Dask scheduler) or local_workers=N "
            "(start a LocalCluster of N worker processes)"
        )
    d = _dask()
    if scheduler is not None:
        if not isinstance(scheduler, str) or not scheduler:
            raise ValueError(f"scheduler={scheduler!r} must be an address such as 'tcp://HOST:8786'")
        from distributed.comm.addressing import get_address_host_port

        try:  # before Client(): a client that fails on a malformed address prints a traceback when collected
            get_address_host_port(scheduler)
        except ValueError as e:
            raise ValueError(
                f"the Dask scheduler address {scheduler!r} is not valid ({e}); give one such as tcp://HOST:8786"
            ) from None
        _check_scheduler(scheduler, timeout)
        try:
            client = d.Client(scheduler, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise ConnectionError(_unreachable(scheduler, timeout, e)) from None
        try:
            yield client
        finally:
            client.close()
        return
    from fastsw.corpus.counting import as_integer

    n = as_integer(local_workers)
    if n is None or n < 1:
        raise ValueError(f"local_workers={local_workers!r} must be a positive integer (worker processes)")
    cluster = _start_local_cluster(d, n)
    try:
        client = d.Client(cluster, set_as_default=False)
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


def _unreachable(address: str, timeout: float, e: BaseException) -> str:
    return (
        f"cannot reach the Dask scheduler at {address} within {timeout:g} s ({type(e).__name__}: {e}); "
        "check the address, start one with 'dask scheduler' (and 'dask worker ADDRESS' on each machine), "
        "or count on this machine with --dask-local N / local_workers=N"
    )


def _check_scheduler(address: str, timeout: float) -> None:
    """Ask the service at ``address`` what it is (Dask's ``identity`` call) within ``timeout`` seconds in all, so
    that an address that is not a Dask scheduler -- the dashboard's HTTP port, any other service, a host that
    accepts connections and never answers -- is a ``ConnectionError`` naming it instead of a client that waits
    forever (or reads an HTTP answer as a message length). The question runs on an event loop of its own in a
    daemon thread: the caller waits interruptibly (Ctrl-C ends the wait) and never on a loop it may run itself."""
    import asyncio

    from distributed.comm import connect as comm_connect
    from distributed.comm.addressing import get_address_host_port, parse_address

    stage = ["connecting"]

    async def ask():
        # a plain connection first: refused (until the timeout, as Dask's client waits for a scheduler that is
        # starting) or unroutable is "cannot reach"
        if parse_address(address)[0] == "tcp":
            host, port = get_address_host_port(address)
            pause = 0.05
            while True:
                try:
                    _, writer = await asyncio.open_connection(host, port)
                    break
                except ConnectionRefusedError:
                    await asyncio.sleep(pause)
                    pause = min(2 * pause, 1.0)
            writer.close()
        stage[0] = "connected"
        comm = await comm_connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    box: dict = {}

    def run():
        try:
            box["answer"] = asyncio.run(asyncio.wait_for(ask(), timeout))
        except BaseException as e:  # noqa: BLE001 -- reported by the caller
            box["error"] = e

    with _quiet_dask_logs():
        thread = threading.Thread(target=run, name="fastsw-dask-identity", daemon=True)
        thread.start()
        thread.join(timeout + 5)  # the loop's wait_for ends it within timeout; the margin is for a stuck loop
    error, answer = box.get("error"), box.get("answer")
    if error is None and answer is None:
        error = TimeoutError()
    if isinstance(error, (TimeoutError, asyncio.TimeoutError)) and stage[0] == "connecting":
        raise ConnectionError(
            _unreachable(address, timeout, ConnectionRefusedError("connection refused or no answer"))
        ) from None
    if isinstance(error, OSError) and stage[0] == "connecting":
        raise ConnectionError(_unreachable(address, timeout, error)) from None
    kind = answer.get("type") if isinstance(answer, dict) else None
    if error is not None or kind is None:
        what = (
            "no answer"
            if isinstance(error, (TimeoutError, asyncio.TimeoutError))
            else f"{type(error).__name__}"
            if error is not None
            else "an answer that is not Dask's"
        )
        raise ConnectionError(
            f"the Dask scheduler at {address} did not answer as a Dask scheduler within "
            f"{timeout:g} s ({what}): something else listens there (the dashboard's HTTP port? "
            "a scheduler listens on 8786 by default); give the scheduler's address, e.g. "
            "tcp://HOST:8786"
        ) from None
    if kind != "Scheduler":
        raise ConnectionError(
            f"{address} is a Dask {kind}, not a scheduler; give the address of the "
            "scheduler (the one 'dask worker' connects to, e.g. tcp://HOST:8786)"
        )


@contextlib.contextmanager
def _quiet_dask_logs():
    """Dask's own loggers (``distributed``) silenced in this process for the block: fastsw reports what went wrong
    in one message, so the scheduler's and client's records of the same failure are noise."""
    import logging

    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(level)


def _start_local_cluster(d, n: int):
    """A LocalCluster of ``n`` worker processes, quiet and shielded from Ctrl-C.

    It is started in a thread of its own with SIGINT blocked: the threads Dask starts from there and the worker
    processes they spawn inherit the blocked signal, so a Ctrl-C at the terminal (sent to the whole process group)
    reaches this process only, which shuts the workers down itself -- no worker dies with a traceback of its own
    half-way through starting or counting. A Ctrl-C while the cluster starts waits for the start to finish, closes
    the cluster and is raised then (a cluster interrupted half-way would be left for Dask's exit handler, which
    fails on it). The workers' log records (a failed task's ``Compute Failed`` block) are silenced: the failure
    is raised here with the shard's name."""
    import logging
    import signal

    box: dict = {}

    def start():
        try:
            box["cluster"] = d.LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=":0",
                silence_logs=logging.CRITICAL,
            )
        except BaseException as e:  # noqa: BLE001 -- raised by the caller
            box["error"] = e

    blocked = threading.current_thread() is threading.main_thread()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if blocked else None
    try:
        thread = threading.Thread(target=start, name="fastsw-dask-start", daemon=True)
        thread.start()
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
    try:
        thread.join()
    except KeyboardInterrupt:
        thread.join()
        cluster = box.get("cluster")
        if cluster is not None:
            with contextlib.suppress(Exception), _quiet_dask_logs():
                cluster.close()
        raise
    if "error" in box:
        raise box["error"]
    return box["cluster"]


# ---- the shards ------------------------------------------------------------------------------------------------


def check_shards(shards) -> List[str]:
    """The shard paths as ``str``s: a non-empty list of file paths (``str`` or ``os.PathLike``) of one format --
    all JSON Lines or all plain text, gzip or not -- since every shard is read with the same options. A directory
    is refused here; existence is checked where the shard is read (on a worker, whose file system may differ from
    this machine's), and relative paths are made absolute before they are sent there.

        >>> check_shards(["a.jsonl.gz", "b.txt"])
        Traceback (most recent call last):
        ...
        ValueError: the shards are in mixed formats: a.jsonl.gz is JSON Lines but b.txt is plain text; give shards of one format (every shard is read with the same options)
    """
    if isinstance(shards, (str, os.PathLike)):
        shards = [shards]
    if not isinstance(shards, (list, tuple)):
        raise TypeError(f"shards must be a list of file paths, not {type(shards).__name__}")
    if not shards:
        raise ValueError("no shards given; give at least one file to count")
    paths = []
    for item in shards:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"shards must be file paths (str or os.PathLike), not {type(item).__name__}: {item!r:.60}")
        paths.append(os.fsdecode(os.fspath(item)))
    for path in paths:
        if os.path.isdir(path):
            raise ValueError(
                f"{path} is a directory, not a shard file; give the files in it, e.g. "
                f"{os.path.join(path, '*.jsonl.gz')}"
            )
    kinds: Dict[str, str] = {}  # format -> its first shard
    for path in paths:
        kinds.setdefault(_format(path)[0], path)
    if len(kinds) > 1:
        raise ValueError(
            f"the shards are in mixed formats: {kinds['jsonl']} is JSON Lines but {kinds['text']} is "
            "plain text; give shards of one format (every shard is read with the same options)"
        )
    return paths


def _job(pretokenizer: BasePretokenizer, normalize, collect_runs: bool, text_field, doc_mode: str, separator) -> dict:
    """What every task of one job needs: plain data, pickled once per task."""
    return {
        "pretokenizer": pretokenizer.to_config(),
        "normalize": check_normalize(normalize),
        "collect_runs": bool(collect_runs),
        "text_field": text_field,
        "doc_mode": doc_mode,
        "separator": separator,
    }


def _documents(path: str, job: dict):
    docs = iter_documents(path, text_field=job["text_field"], doc_mode=job["doc_mode"], separator=job["separator"])
    if job["normalize"] is not None:
        docs = (normalize_text(doc, job["normalize"]) for doc in docs)
    return docs


def _count_table(path: str, job: dict):
    """One shard counted into a fresh table (compiled counter or reference, as :func:`fastsw.corpus.counting.count_corpus`
    would choose), on a worker."""
    import warnings

    from fastsw.notes import OptionWarning

    if not os.path.exists(path):
        raise ShardError(
            f"cannot count shard {path}: file not found{_on_worker()}; every worker must be able to "
            "read the shards at these paths (a shared file system, or the same files on every machine)"
        )
    if os.path.isdir(path):
        raise ShardError(f"cannot count shard {path}: it is a directory{_on_worker()}; give the shard files")
    table = _make_table(Pretokenizer.from_config(job["pretokenizer"]), job["collect_runs"])
    try:
        with warnings.catch_warnings():  # a text_field with plain-text shards: checked by the caller
            warnings.simplefilter("ignore", OptionWarning)
            for batch in _batches(_documents(path, job), BATCH_BYTES, BATCH_DOCS):
                table.add_batch(batch)
    except InputError as e:  # names the file and the line already
        raise ShardError(f"cannot count shard {e}{_on_worker()}") from None
    except (OSError, ValueError, UnicodeError, MemoryError) as e:
        raise ShardError(f"cannot count shard {path}: {type(e).__name__}: {e}{_on_worker()}") from None
    return table


def _on_worker() -> str:
    """`` (on the Dask worker ADDRESS)`` in a task: whose file system did not have the file."""
    try:
        from distributed import get_worker

        return f" (on the Dask worker {get_worker().address})"
    except (ImportError, ValueError):  # not in a task
        return ""


def _count_shard(path: str, job: dict):
    """Task: a shard's count table as the counter's compact parts."""
    return _count_table(path, job).payload()


def _merge_tables(job: dict, *payloads):
    """Task: count tables (parts) added up."""
    table = _make_table(Pretokenizer.from_config(job["pretokenizer"]), job["collect_runs"])
    for payload in payloads:
        table.merge_payload(payload)
    return table.payload()


def _backend_class(name: str):
    if name == "numba":
        from fastsw.trainers.bpe_fast import FastBackend

        return FastBackend
    from fastsw.trainers.superword import ReferenceBackend

    return ReferenceBackend


def _candidates_shard(path: str, job: dict):
    """Task: a shard's supermerge candidates: counted with letter runs, cut at pretokens that are not one eligible
    phase-1 token (looked up by bytes in ``job["eligible"]``)."""
    table = _count_table(path, job).finish()
    eligible = job["eligible"]
    single = [eligible.get(p.encode("utf-8", "surrogatepass"), -1) for p in table.pretokens]
    return _backend_class(job["backend"]).aggregate(table, single)


def _merge_candidates(job: dict, *tables):
    """Task: candidate tables added up."""
    return _backend_class(job["backend"]).merge_candidates(tables)


def _run(client, paths: List[str], job: dict, shard_task, merge_task, what: str, progress: bool, absorb) -> None:
    """Submit one task per shard and a binary tree of merge tasks over their results, up to the level of at most
    ``2 * workers`` tables (:func:`_top_size`); hand those tables to ``absorb`` here, in shard order, each as soon as
    it and the ones before it are done (the caller merges them while the workers finish the rest). Merge tasks go
    before shard tasks (Dask priority: deeper first), so that tables are added up as soon as both exist. Progress
    counts finished shards; the first failed shard cancels the job and is raised."""
    d = _dask()
    tag = f"fastsw-{what}-{uuid.uuid4().hex[:10]}"
    # absolute paths: a worker runs in a directory of its own, where a relative path would name another file
    shard_futures = [
        client.submit(shard_task, os.path.abspath(path), job, key=f"{tag}-shard-{k}", retries=0)
        for k, path in enumerate(paths)
    ]
    path_of = {f.key: path for f, path in zip(shard_futures, paths)}
    every = list(shard_futures)
    level, depth = shard_futures, 0
    top = _top_size(client)
    while len(level) > top:
        nxt = [
            client.submit(
                merge_task,
                job,
                level[k],
                level[k + 1],
                key=f"{tag}-merge-{depth}-{k // 2}",
                retries=0,
                priority=depth + 1,
            )
            for k in range(0, len(level) - 1, 2)
        ]
        if len(level) % 2:
            nxt.append(level[-1])
        every.extend(nxt)
        level, depth = nxt, depth + 1
    n = len(paths)
    bar = Progress(f"{what} on Dask ({n} shard{'s' if n != 1 else ''})", total=n, enabled=progress)
    ok = False
    try:
        waiting = list(level)
        for future in d.as_completed(shard_futures, loop=client.loop):
            if future.status == "error":
                _raise_failed(future, path_of, d)
            bar.update(1)
            while waiting and waiting[0].done():  # merge here what is ready, in order, while the rest counts
                _absorb(waiting.pop(0), absorb, what, path_of, d, shard_futures)
        for future in waiting:
            _absorb(future, absorb, what, path_of, d, shard_futures)
        ok = True
    finally:
        if not ok:
            client.cancel(every, force=True)
        bar.close()


def _top_size(client) -> int:
    """How many tables the caller merges itself: twice the workers (at least 2). Fewer levels of merge tasks on
    the workers means less work in all (every level inserts all its tables' entries again) and no root task to
    wait for at the end; measured in docs/internals.md, section "Counting on a Dask cluster"."""
    try:
        workers = len(client.scheduler_info()["workers"])
    except Exception:  # noqa: BLE001 -- a scheduler that does not say: the binary tree's last level
        workers = 1
    return max(2, 2 * workers)


def _absorb(future, absorb, what: str, path_of: dict, d, shards) -> None:
    """``absorb`` the result of a top-level future (a merge task's, or a shard's when there are few shards).
    A merge task fails when a shard below it failed, possibly before ``as_completed`` has handed that shard to
    the caller: then the first failed shard (in shard order) is what is raised, with its file name."""
    if future.status == "error":
        failed = [f for f in shards if f.status == "error"]
        if future.key in path_of:
            failed = [future]
        if failed:
            _raise_failed(failed[0], path_of, d)
    try:
        result = future.result()
    except d.KilledWorker as e:
        raise ShardError(
            f"a Dask worker died {_allowed_failures()} times while merging the {what} tables "
            f"({e}); give the workers more memory, or use more, smaller shards"
        ) from None
    absorb(result)


def _allowed_failures() -> int:
    import dask

    return int(dask.config.get("distributed.scheduler.allowed-failures", 3))


def _raise_failed(future, path_of: dict, d) -> None:
    error = future.exception()
    path = path_of.get(future.key, "?")
    if isinstance(error, d.KilledWorker):
        raise ShardError(
            f"cannot count shard {path}: the Dask worker counting it died {_allowed_failures()} times "
            "(out of memory? see the worker logs); give the workers more memory, or split the shard"
        ) from None
    if isinstance(error, ShardError):
        raise ShardError(str(error)) from None
    raise ShardError(f"cannot count shard {path}: {type(error).__name__}: {error}") from None


# ---- public API ----------------------------------------------------------------------------------------------


def count(
    client,
    shards: Sequence,
    *,
    pretokenizer=None,
    collect_runs: bool = True,
    normalize=None,
    text_field: Optional[str] = None,
    doc_mode: str = "auto",
    separator: Optional[str] = None,
    progress: bool = False,
) -> Counts:
    """Count the pretokens (and, with ``collect_runs``, letter runs) of the shard files on the Dask ``client``'s
    workers: one task per shard, the tables added up in a tree of merge tasks. The result equals
    :func:`fastsw.corpus.counting.count_corpus` over all the shards' documents in this process (the same multisets, so
    :meth:`~fastsw.corpus.counting.Counts.save` writes the same file), whatever the sharding and the workers.

    ``shards``: file paths (``.jsonl[.gz]``, ``.ndjson[.gz]`` or text, all of one format) that the workers can
    read; the other options as in :func:`fastsw.train`. A shard that cannot be read raises :class:`ShardError`
    naming it.

        >>> from fastsw.corpus import distributed
        >>> with distributed.connect(local_workers=2) as client:          # doctest: +SKIP
        ...     counts = distributed.count(client, ["part-0.jsonl.gz", "part-1.jsonl.gz"], collect_runs=False)
        ...     counts.save("corpus.counts.gz")
    """
    paths = check_shards(shards)
    pretok = make_pretokenizer("script" if pretokenizer is None else pretokenizer)
    form = check_normalize(normalize)
    iter_documents([], text_field=text_field, doc_mode=doc_mode, separator=separator)  # checks the options
    job = _job(pretok, form, collect_runs, text_field, doc_mode, separator)
    table = _make_table(pretok, collect_runs)
    _run(client, paths, job, _count_shard, _merge_tables, "counting", progress, table.merge_payload)
    counts = table.finish()
    counts.normalize = form
    return counts


def count_candidates(
    client,
    shards: Sequence,
    phase1,
    *,
    counts: Optional[Counts] = None,
    backend: str = "auto",
    text_field: Optional[str] = None,
    doc_mode: str = "auto",
    separator: Optional[str] = None,
    progress: bool = False,
):
    """The supermerge candidates (SPEC section 5) of the shard files under the phase-1 model ``phase1`` (a
    :class:`fastsw.Tokenizer` with regular merges only), counted on the Dask ``client``'s workers: each task
    reads its shard, counts its letter runs and cuts them at every pretoken that is not one eligible token of
    ``phase1``; the tables are added up in a tree. ``counts``: the pretoken table ``phase1`` was trained on, if
    any -- its pre-tokenizer and normalization are the ones used, and a ``phase1`` with another pre-tokenizer is
    an error. Returns what the training backend ``backend`` takes: packed ``(tokens, offsets, counts)`` arrays
    (``"numba"``) or ``{tuple of ids: count}`` (``"python"``), equal to what :func:`fastsw.train` aggregates from
    the same documents in one process.

        >>> import fastsw
        >>> from fastsw.corpus import distributed
        >>> with distributed.connect(local_workers=2) as client:          # doctest: +SKIP
        ...     counts = distributed.count(client, shards, collect_runs=False)
        ...     phase1 = fastsw.train(from_counts=counts, algo="bpe", vocab_size=8192)
        ...     cands = distributed.count_candidates(client, shards, phase1, counts=counts, backend="python")
    """
    from fastsw.tokenizer import Tokenizer

    if not isinstance(phase1, Tokenizer):
        raise TypeError(f"phase1 must be a fastsw.Tokenizer (the phase-1 model), not {type(phase1).__name__}")
    if phase1.n_super:
        raise ValueError(
            f"phase1 has {phase1.n_super} supermerges; give the phase-1 model (regular merges only, "
            "e.g. fastsw.train(..., algo='bpe'))"
        )
    paths = check_shards(shards)
    config, form = phase1.pretokenizer.to_config(), phase1.normalize
    if counts is not None:
        if counts.pretokenizer_config is not None and counts.pretokenizer_config != config:
            diff = sorted(
                k
                for k in set(config) | set(counts.pretokenizer_config)
                if config.get(k) != counts.pretokenizer_config.get(k)
            )
            names = counts.source or "the count table"
            raise ValueError(
                f"the phase-1 model's pre-tokenizer differs from that of {names} (in "
                f"{', '.join(diff)}); train the phase-1 model on these counts (fastsw.train("
                "from_counts=..., algo='bpe')) so that both cut the text the same way"
            )
        form = counts.normalize
    iter_documents([], text_field=text_field, doc_mode=doc_mode, separator=separator)  # checks the options
    job = _job(phase1.pretokenizer, form, True, text_field, doc_mode, separator)
    shortcut, eligible = phase1.reachability()  # rank ids are token ids in a model without supermerges
    job["eligible"] = {b: r for b, r in shortcut.items() if r in eligible}
    job["backend"] = resolve_backend(backend)
    tables: list = []
    _run(client, paths, job, _candidates_shard, _merge_candidates, "candidates", progress, tables.append)
    return _backend_class(job["backend"]).merge_candidates(tables)


def train(
    client,
    shards: Sequence,
    *,
    algo: str = "boundless",
    vocab_size: int,
    pretokenizer=None,
    normalize=None,
    text_field: Optional[str] = None,
    doc_mode: str = "auto",
    separator: Optional[str] = None,
    progress: bool = False,
    backend: str = "auto",
    **options,
):
    """:func:`fastsw.train` on shard files whose counting runs on the Dask ``client``'s workers: the pretokens
    (:func:`count`, without letter runs), then phase 1 here, then the supermerge candidates under the phase-1
    model (:func:`count_candidates`, BoundlessBPE and SuperBPE only), then phase 2 here. The model is the one
    ``fastsw.train(shards, ...)`` gives on the same documents. ``options``: the other options of
    :func:`fastsw.train` (``supermerges``, ``profile``, ``greedy_split``, ``special_tokens``, ...);
    ``training_info["dask"]`` records the shards and workers.

        >>> from fastsw.corpus import distributed
        >>> with distributed.connect(local_workers=2) as client:          # doctest: +SKIP
        ...     tok = distributed.train(client, shards, algo="boundless", vocab_size=32768)
    """
    from fastsw.trainers.train import train as train_locally

    for name in _NOT_DISTRIBUTED:
        if name in options:
            raise ValueError(
                f"{name}= does not apply to fastsw.corpus.distributed.train (the shards are the input, "
                "counted without languages); train on one machine for it"
            )
    paths = check_shards(shards)
    passes: Dict[str, Any] = {
        "text_field": text_field,
        "doc_mode": doc_mode,
        "separator": separator,
        "progress": progress,
    }
    start = time.perf_counter()
    counts = count(client, paths, pretokenizer=pretokenizer, collect_runs=False, normalize=normalize, **passes)
    seconds = time.perf_counter() - start

    def candidates(stages, counts, words, tok1):  # stage 4 on the workers, reading the shards again
        return count_candidates(client, paths, tok1, counts=counts, backend=stages.name, **passes)

    options.update(algo=algo, vocab_size=vocab_size, progress=progress, backend=backend)
    tok = train_locally(from_counts=counts, _count_candidates=candidates, **options)
    tok.training_info.pop("from_counts", None)
    tok.training_info["seconds"]["pretokenize_and_count"] = seconds  # on the cluster; candidates: aggregate_...
    tok.training_info["dask"] = {"shards": len(paths), "workers": len(client.scheduler_info()["workers"])}
    return tok
