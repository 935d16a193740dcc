"""What the environment and the caller choose, decided in one place.

``FASTSW_PUREPYTHON`` set to anything but ``""`` or ``"0"`` runs the pure-Python twins everywhere:
the reference pre-tokenizer and counter, the Python merge loops and the Python encoder. ``backend=``
(``"auto"``, ``"numba"`` or ``"python"``) chooses per call; ``"auto"`` follows the environment.
"""
from __future__ import annotations

import gc
import os
from contextlib import contextmanager

BACKENDS = ("auto", "numba", "python")


def pure_python() -> bool:
    """Whether ``FASTSW_PUREPYTHON`` asks for the pure-Python twins (any value but ``""`` and ``"0"``).

    >>> import os; os.environ["FASTSW_PUREPYTHON"] = "0"; pure_python()
    False
    """
    return os.environ.get("FASTSW_PUREPYTHON", "") not in ("", "0")


def resolve_backend(backend: str, what: str = "backend") -> str:
    """``"numba"`` or ``"python"`` for a ``backend`` option; ``"auto"`` is numba unless :func:`pure_python`.

    >>> resolve_backend("python")
    'python'
    """
    if backend not in BACKENDS:
        raise ValueError(f"{what}={backend!r} is not one of {', '.join(BACKENDS)}")
    if backend == "auto":
        return "python" if pure_python() else "numba"
    return backend


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
