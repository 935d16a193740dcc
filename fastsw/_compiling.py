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
(:func:`stop`), so no process is left behind unreaped. Processes that would compile the same kernels into the same cache take
turns (:func:`compile_lock`): one compiles, the others then load.

:func:`defer_blas_probe` takes SciPy's linear algebra out of the first kernel a process loads from the cache.
:func:`stamp_module` makes a kernel's cache entry stale when a file whose jitted code it calls changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Iterator, List, Optional


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


def _jitted_source(obj, package: str) -> Optional[str]:
    """The name of the module that defines ``obj`` when it is jitted code of ``package`` (a Numba dispatcher, an
    intrinsic, or a module of the package that defines either), else None."""
    if isinstance(obj, type(sys)):
        own = obj.__name__
        if own.partition(".")[0] == package and any(_defining_module(v) == own for v in vars(obj).values()):
            return own
        return None
    name = _defining_module(obj)
    return name if name is not None and name.partition(".")[0] == package else None


def _defining_module(obj) -> Optional[str]:
    """The module that defines ``obj`` when it is a Numba dispatcher or intrinsic, else None."""
    if hasattr(obj, "signatures") and hasattr(obj, "py_func"):  # a dispatcher
        return getattr(obj.py_func, "__module__", None)
    if hasattr(obj, "_defn") and hasattr(obj, "_ctor_kwargs"):  # an intrinsic
        return getattr(obj._defn, "__module__", None)
    return None


def callee_files(module: str) -> List[str]:
    """The source files of the other modules of ``module``'s package whose jitted code ``module``'s kernels may
    call, directly or through one another (its globals' dispatchers and intrinsics, and modules that define them),
    sorted (for :mod:`fastsw.trainers.parity_kernels`: ``_prefetch.py`` and ``bpe_kernels.py``)."""
    package = module.partition(".")[0]
    seen, todo = {module}, [module]
    while todo:
        for obj in list(vars(importlib.import_module(todo.pop())).values()):
            name = _jitted_source(obj, package)
            if name is not None and name not in seen:
                seen.add(name)
                todo.append(name)
    return sorted(str(importlib.import_module(name).__file__) for name in seen - {module})


def source_hash(path: str) -> bytes:
    """The SHA-256 digest of the file ``path``'s bytes."""
    return hashlib.sha256(Path(path).read_bytes()).digest()


def stamp_with_callees(kernels: Iterable, module: str) -> None:
    """Make the on-disk cache entries of ``kernels`` (dispatchers or ``cfunc``s of ``module``) stale when a file of
    :func:`callee_files` changes, as when their own file does.

    Numba stamps an entry with the file that defines the kernel (a hash of its text, or its modification time and
    size), and nothing else; yet the entry's machine code holds every jitted function the kernel calls, from whatever file. Without the
    callees' stamps, an entry compiled before a change of such a file (a table's layout, a hash) would still be
    loaded after it. Kernels run as plain Python (``NUMBA_DISABLE_JIT=1``), or a Numba whose cache has another
    layout, keep Numba's own stamp."""
    stamps = tuple(source_hash(path) for path in callee_files(module))
    for kernel in kernels:
        cache_file = getattr(getattr(kernel, "_cache", None), "_cache_file", None)
        if cache_file is None or not hasattr(cache_file, "_source_stamp"):
            continue
        own = cache_file.__dict__.setdefault("_numba_source_stamp", cache_file._source_stamp)
        cache_file._source_stamp = (own, *stamps) if stamps else own


def stamp_module(module: str) -> None:
    """:func:`stamp_with_callees` for every dispatcher that ``module`` defines; called at the end of a kernel
    module (``stamp_module(__name__)``)."""
    kernels = [v for v in vars(sys.modules[module]).values() if _jitted_source(v, module.partition(".")[0]) == module]
    stamp_with_callees(kernels, module)


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
    without arguments, which compiles kernels) and return it (a ``subprocess.Popen``). The process calls it
    through :func:`run`: processes started for the same function and cache compile one at a time."""
    env = dict(os.environ)
    # the folder holding this fastsw package, wherever it is imported from (one level up per dotted part)
    root = str(Path(__file__).resolve().parents[__name__.count(".")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return subprocess.Popen(
        [sys.executable, "-c", f"from {__name__} import run; run({function!r})"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def run(function: str) -> None:
    """The body of :func:`start`'s process: import ``function`` (``"package.module:name"``) and call it while
    holding :func:`compile_lock`. Processes started at once for the same kernels (several programs' first encodes
    on a fresh install, the workers of a pool) then compile them once: the others wait, and find them in the cache.
    """
    module, name = function.split(":")
    compile_kernels = getattr(importlib.import_module(module), name)
    with compile_lock(function):
        compile_kernels()


@contextlib.contextmanager
def compile_lock(function: str) -> Iterator[None]:
    """An exclusive lock (``flock`` on a file in the temporary folder) shared by the processes that compile
    ``function`` into the same Numba cache with the same Python and ``fastsw``; held while the block runs.
    Where there are no such locks (not POSIX) or the file cannot be made, the block runs without one."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    key = "\0".join([str(Path(__file__).resolve().parent), os.environ.get("NUMBA_CACHE_DIR", ""), sys.executable])
    digest = hashlib.sha1(f"{key}\0{function}".encode()).hexdigest()[:20]
    try:
        fd = os.open(Path(tempfile.gettempdir()) / f"fastsw-compiling-{digest}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # and with it the lock


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


def blas_available() -> bool:
    """Whether SciPy's BLAS wrappers (``scipy.linalg.cython_blas``, which Numba's ``np.dot`` and friends call) are
    installed, found without importing ``scipy.linalg``."""
    try:
        spec = importlib.util.find_spec("scipy")
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.submodule_search_locations:
        return False
    folders = [os.path.join(p, "linalg") for p in spec.submodule_search_locations]
    return importlib.machinery.PathFinder.find_spec("cython_blas", folders) is not None


def defer_blas_probe() -> None:
    """Import Numba's NumPy implementations (``numba.np.arraymath``) without the BLAS probe that their import
    makes, when nothing has imported them yet.

    The first kernel a process runs, even one loaded from the on-disk cache, makes Numba import all its
    implementations; one of them checks once that BLAS is there by importing ``scipy.linalg`` (which imports
    ``numpy.f2py`` and ``numpy.testing``), about 40 % of the whole load of the merge loop
    (``python bench/bench_train.py --mb 50 --vocab 32768``, ``jit_warmup``). No fastsw kernel uses BLAS. Numba's
    answer is set from :func:`blas_available` instead, so it is the one the probe gives; Numba's linear algebra
    still imports SciPy when a kernel that uses it compiles. Any other Numba (without this probe): nothing is
    changed."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return  # the probe ran already, or costs nothing now
    try:
        from numba.np import linalg
    except ImportError:
        return
    probe = getattr(linalg, "ensure_blas", None)
    if probe is None:
        return

    def not_now() -> None:
        raise ImportError("BLAS is looked up when a kernel uses it")

    linalg.ensure_blas = not_now
    try:
        from numba.np import arraymath
    finally:
        linalg.ensure_blas = probe
    if getattr(arraymath, "ensure_blas", None) is not_now:
        arraymath.ensure_blas = probe
        if hasattr(arraymath, "_HAVE_BLAS"):
            arraymath._HAVE_BLAS = blas_available()
