"""Numba kernels compiled ahead of their first call: whether Numba's on-disk cache holds a kernel, and a
background process that compiles kernels into that cache while this process does other work.

On a fresh install every kernel compiles on its first call (seconds each; "Cold start" in docs/internals.md).
Two paths hand part of that work to a second process, on another core:

* a loaded model's first encodes (:func:`fastsw.encoding.encode_fast.compile_in_background`): the plain-Python
  twin serves while the encoding kernels compile elsewhere;
* training (:func:`fastsw.trainers.bpe_fast.compile_ahead`): part of the merge loop's helpers and the candidate
  cut of phase 2 compile elsewhere while this process compiles the merge loop and runs phase 1.

The process runs a function of this same ``fastsw`` (the package's folder is put first on its ``PYTHONPATH``)
with this process's environment, so it fills the same Numba cache (``NUMBA_CACHE_DIR``, which ``import fastsw``
sets from ``FASTSW_CACHE_DIR``). Its output is discarded; the caller waits for it (:func:`finish`) or ends it
(:func:`stop`), so no process is left behind unreaped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def in_disk_cache(kernel) -> bool:
    """Whether Numba's on-disk cache holds ``kernel`` compiled for this machine from this source (its index
    has an entry whose key, signature apart, is the one this process would look up). Numba's cache keeps no
    public query for this; where its layout differs, the answer is ``False`` (the caller then takes the
    path that does not need the kernel, or compiles it)."""
    try:
        cache = kernel._cache
        # a dispatcher's target context, or a ``cfunc``'s (fastsw.encoding.c_entry)
        target = getattr(kernel, "targetctx", None) or kernel._targetdescr.target_context
        codegen = target.codegen()
        return any(cache._index_key(key[0], codegen) == key for key in cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - any other Numba: "not known to be cached"
        return False


def ready(kernels) -> bool:
    """Whether every kernel of ``kernels`` runs without compiling: compiled in this process, found in Numba's
    on-disk cache, or a plain Python function (``NUMBA_DISABLE_JIT=1``)."""
    return all(not hasattr(k, "signatures") or k.signatures or in_disk_cache(k) for k in kernels)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the system tells it). With one, a background
    compilation would only take turns with this process's work, and starting it costs a Python and Numba start."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def start(function: str) -> subprocess.Popen:
    """Start a process that calls ``function`` (``"package.module:name"``, a function of this ``fastsw``
    without arguments, which compiles kernels) and return it (a ``subprocess.Popen``)."""
    module, name = function.split(":")
    env = dict(os.environ)
    # the folder holding this fastsw package, wherever it is imported from (one level up per dotted part)
    root = str(Path(__file__).resolve().parents[__name__.count(".")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return subprocess.Popen(
        [sys.executable, "-c", f"from {module} import {name}; {name}()"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def finish(process: subprocess.Popen) -> bool:
    """Wait for ``process`` to end; whether it compiled its kernels (exit status 0). On Ctrl-C while waiting
    the process is ended too (:func:`stop`)."""
    try:
        return process.wait() == 0
    except BaseException:
        stop(process)
        raise


def stop(process: subprocess.Popen) -> None:
    """End ``process`` if it still runs, and reap it. What it wrote to Numba's cache stays usable: Numba
    writes each cache file whole under another name and then renames it."""
    if process.poll() is None:
        process.terminate()
    process.wait()
