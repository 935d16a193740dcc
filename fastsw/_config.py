"""What the environment and the caller choose, decided in one place.

``FASTSW_PUREPYTHON`` set to anything but ``""`` or ``"0"`` runs the pure-Python twins everywhere:
the reference pre-tokenizer and counter, the Python merge loops and the Python encoder. ``backend=``
(``"auto"``, ``"numba"`` or ``"python"``) chooses per call; ``"auto"`` follows the environment (and is the
pure-Python paths when the compiled extension is missing, :func:`have_extension`).

Caches live in :func:`cache_dir` (``FASTSW_CACHE_DIR``, else the user's cache folder). The compiled Numba kernels
go to ``cache_dir() / "numba-VERSION"`` unless ``NUMBA_CACHE_DIR`` is set (:func:`use_numba_cache_dir`), never next
to the package's source: cache files left there outlive ``pip uninstall`` (pip removes only the files it
installed), and a folder ``fastsw/`` that holds nothing but them makes a later install import an empty namespace
package instead of fastsw.
"""

from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager
from pathlib import Path

BACKENDS = ("auto", "numba", "python")
# The switch is read on every encode call (tests and users may set it at run time). ``os.environ.get`` of an unset
# name raises and catches a KeyError inside (1.2-1.7 us, ~1 % of encoding an 8 kB document); ``os.environ``'s own
# dict answers "not set" in ~50 ns. Where that dict is not there (another Python), the plain lookup is used.
_SWITCH = "FASTSW_PUREPYTHON"
_SWITCH_KEY = os.environ.encodekey(_SWITCH) if hasattr(os.environ, "encodekey") else None


def pure_python() -> bool:
    """Whether ``FASTSW_PUREPYTHON`` asks for the pure-Python twins (any value but ``""`` and ``"0"``).

    >>> import os; os.environ["FASTSW_PUREPYTHON"] = "0"; pure_python()
    False
    """
    data = getattr(os.environ, "_data", None)
    if _SWITCH_KEY is not None and type(data) is dict and _SWITCH_KEY not in data:
        return False
    return os.environ.get(_SWITCH, "") not in ("", "0")


def resolve_backend(backend: str, what: str = "backend") -> str:
    """``"numba"`` or ``"python"`` for a ``backend`` option; ``"auto"`` is numba unless :func:`pure_python`.

    >>> resolve_backend("python")
    'python'
    """
    if backend not in BACKENDS:
        raise ValueError(f"{what}={backend!r} is not one of {', '.join(BACKENDS)}")
    if backend == "auto":
        return "python" if pure_python() or not have_extension() else "numba"
    return backend


_HAVE_EXTENSION = None


def have_extension() -> bool:
    """Whether the compiled extension ``fastsw.pretokenizers._pretok`` imports (checked once). Without it ``"auto"`` is the
    pure-Python paths (``import fastsw`` then warns once, :class:`fastsw.notes.ExtensionMissingWarning`): the
    Numba paths rely on it for their input."""
    global _HAVE_EXTENSION
    if _HAVE_EXTENSION is None:
        try:
            from fastsw.pretokenizers import _pretok  # noqa: F401

            _HAVE_EXTENSION = True
        except ImportError:
            _HAVE_EXTENSION = False
    return _HAVE_EXTENSION


@contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while a block allocates many objects that are never
    garbage (building a tokenizer makes a few hundred thousand tuples and bytes: with the collector on,
    its repeated passes over the growing heap took ~40 % of the construction time at vocab 131072).
    Re-enabled only if it was on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def cache_dir() -> Path:
    """Where fastsw's caches live: ``$FASTSW_CACHE_DIR``, else ``$XDG_CACHE_HOME/fastsw``, else
    ``~/.cache/fastsw``.

    >>> import os; os.environ["FASTSW_CACHE_DIR"] = "/cache/fastsw"; str(cache_dir())
    '/cache/fastsw'
    >>> del os.environ["FASTSW_CACHE_DIR"]
    """
    env = os.environ.get("FASTSW_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "fastsw"


def use_numba_cache_dir(version: str) -> None:
    """Point Numba's cache (``NUMBA_CACHE_DIR``) at ``cache_dir() / f"numba-{version}"`` unless the user has set
    ``NUMBA_CACHE_DIR`` (even to an empty value): called by ``import fastsw`` before any kernel is defined, since
    Numba picks a function's cache folder when its ``@njit(cache=True)`` decorator runs. The variable is set in
    ``os.environ``, so worker processes use the same folder. When the folder cannot be created, Numba keeps its
    own choice."""
    if "NUMBA_CACHE_DIR" in os.environ:
        return
    path = cache_dir() / f"numba-{version}"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    os.environ["NUMBA_CACHE_DIR"] = str(path)
    config = sys.modules.get("numba.core.config")
    if config is not None:  # numba was imported first: it read its environment already
        config.reload_config()
