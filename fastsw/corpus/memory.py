"""Memory budget of training on big corpora: what each table after counting costs, and failing early.

Training keeps aggregated counts, never the text, so what can run out is a count table: the letter runs of the
corpus, the supermerge candidates made from them, and phase 2's working set over the candidates. Before building
each, :func:`check_memory` compares an estimate (bytes per entry, measured, below) with the memory this process
can still get, and raises :class:`MemoryLimitError` -- one message with the estimate, what is available and what
to do -- instead of letting the machine swap or the kernel kill the process. Counting itself is watched by
:class:`CountingGuard` (the compiled counter's tables grow with the distinct pretokens and letter runs).

The memory that can still be got is the smallest of: ``MemAvailable`` (Linux ``/proc/meminfo``), the cgroup's
``memory.max`` minus its ``memory.current``, the address-space limit (``RLIMIT_AS``) minus the address space in
use, and ``FASTSW_MEMORY_LIMIT`` (bytes, suffixes K/M/G/T allowed) minus the resident set. Where none of these is
known (not Linux), nothing is checked.

Design notes: see docs/internals.md, section "Memory budget": how the bytes per entry below were measured.
"""

from __future__ import annotations

import os
import re
import resource
from typing import Optional

#: per letter run / per run token, building the candidates
RUN_BYTES = 56
RUN_TOKEN_BYTES = 5
#: per candidate / per candidate token, cutting them
CUT_BYTES = 12
CUT_TOKEN_BYTES = 12
#: per candidate / per token, phase 2's merge loop
PHASE2_BYTES = 48
PHASE2_TOKEN_BYTES = 28


class MemoryLimitError(MemoryError, ValueError):
    """A training stage would need more memory than this process can get. ``str(e)`` is one line: the
    stage, the estimate, the memory available and what to do. Also a ``ValueError``, so the CLI reports it
    as one ``fastsw: error:`` line (exit status 2)."""


_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def _parse_bytes(text: str) -> Optional[int]:
    """Bytes of a size such as ``500M``, ``8G``, ``1.5T`` (binary units; a trailing B optional)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([kKmMgGtTpP]?)[bB]?\s*", text)
    if not m:
        return None
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def _status_kb(field: str) -> Optional[int]:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _read_int(path: str) -> Optional[int]:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def available_memory() -> Optional[int]:
    """Bytes this process can still allocate (see the module docstring), or None if unknown."""
    limits = []
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    limits.append(int(line.split()[1]) * 1024)
    except OSError:
        pass
    high = _read_int("/sys/fs/cgroup/memory.max")
    used = _read_int("/sys/fs/cgroup/memory.current")
    if high is not None and used is not None:
        limits.append(high - used)
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    size = _status_kb("VmSize")
    if soft != resource.RLIM_INFINITY and size is not None:
        limits.append(soft - size)
    env = os.environ.get("FASTSW_MEMORY_LIMIT")
    if env:
        cap, rss = _parse_bytes(env), _status_kb("VmRSS")
        if cap is None:
            raise ValueError(f"FASTSW_MEMORY_LIMIT={env!r} is not a size; give bytes, e.g. 8G, 500M or 1T")
        limits.append(cap - (rss or 0))
    return max(0, min(limits)) if limits else None


def _gb(n: float) -> str:
    """A size in the unit that shows it best: ``0 bytes``, ``512 bytes``, ``2.00 kB``, ``126 MB``, ``3.20 GB``
    (three significant digits; decimal units)."""
    if n < 1000:
        return f"{int(n)} bytes"
    for unit in ("kB", "MB", "GB", "TB"):
        n /= 1000
        if n < 1000 or unit == "TB":
            break
    return f"{n:,.0f} {unit}" if n >= 100 else f"{n:.1f} {unit}" if n >= 10 else f"{n:.2f} {unit}"


def check_memory(stage: str, need: int, what: str, advice: str) -> None:
    """Raise :class:`MemoryLimitError` if ``need`` bytes (the estimate for ``stage``, made of ``what``) is
    more than :func:`available_memory`."""
    free = available_memory()
    if free is not None and need > free:
        raise MemoryLimitError(
            f"{stage} needs about {_gb(need)} ({what}) but only {_gb(free)} of memory is available; {advice}"
        )


ADVICE = (
    "train on less text, free memory (other processes), or use a machine with more memory; the estimate "
    "grows with the distinct letter runs of the corpus, not with its size"
)


def check_candidates(n_runs: int, n_run_tokens: int) -> None:
    """Before building the supermerge candidates from ``n_runs`` letter runs of ``n_run_tokens`` pretokens."""
    need = RUN_BYTES * n_runs + RUN_TOKEN_BYTES * n_run_tokens
    check_memory("building the supermerge candidates", need, f"{n_runs:,} distinct letter runs", ADVICE)


def check_cut(n_candidates: int, n_tokens: int) -> None:
    """Before BoundlessBPE's candidate cut (``fastsw.trainers.bpe_fast.cut_candidates``) of ``n_candidates`` packed
    candidates of ``n_tokens`` tokens in all."""
    need = CUT_BYTES * n_candidates + CUT_TOKEN_BYTES * n_tokens
    check_memory("phase 2 (cutting the candidates)", need, _candidates(n_candidates, n_tokens), ADVICE)


def check_phase2(n_candidates: int, n_tokens: int) -> None:
    """Before phase 2's merge loop over ``n_candidates`` packed candidates of ``n_tokens`` tokens in all
    (BoundlessBPE: the cut ones; SuperBPE: the whole ones, in case its guessed floor fails)."""
    need = PHASE2_BYTES * n_candidates + PHASE2_TOKEN_BYTES * n_tokens
    check_memory("phase 2", need, _candidates(n_candidates, n_tokens), ADVICE)


def _candidates(n_candidates: int, n_tokens: int) -> str:
    return f"{n_candidates:,} distinct supermerge candidates of {n_tokens:,} tokens"


#: :class:`CountingGuard` looks at the memory once per this many bytes of text
COUNT_CHECK_BYTES = 64 << 20


class CountingGuard:
    """Fails counting early: every ``every`` bytes of text, the growth of this process's resident memory since
    counting began (the count tables, which grow with the distinct pretokens and letter runs) is compared with
    the memory still available. Finishing the tables (merging the counting threads' tables, packing the letter
    runs) and building the candidates from them need about ``FINISH_FACTOR`` times that growth again, so
    counting stops with :class:`MemoryLimitError` as soon as that much is no longer available, long before the
    machine swaps or the process is killed."""

    #: measured on 1 GB of synthetic English (BoundlessBPE, two counting threads): the tables grew by 1.9 GB while
    #: counting, merging them and packing the letter runs added 1.1 GB (0.58x) while the second thread's table
    #: was still alive; it is freed once merged now
    FINISH_FACTOR = 0.6

    def __init__(self, every: Optional[int] = None):
        self.start = _status_kb("VmRSS")
        self.every = COUNT_CHECK_BYTES if every is None else every
        self.next = self.every

    def check(self, n_bytes: int) -> None:
        if self.start is None or n_bytes < self.next:
            return
        self.next = n_bytes + self.every
        growth = (_status_kb("VmRSS") or 0) - self.start
        free = available_memory()
        if free is not None and growth > 0 and self.FINISH_FACTOR * growth > free:
            raise MemoryLimitError(
                f"counting stopped after {_gb(n_bytes)} of text: its count tables take about {_gb(growth)} and "
                f"finishing them needs about {_gb(self.FINISH_FACTOR * growth)} more, but only {_gb(free)} of "
                f"memory is available; {ADVICE}"
            )
