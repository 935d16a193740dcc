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
