"""Ctrl-C during a long Numba kernel call: the one helper every such call goes through.

A kernel called from the main thread runs with the signal only noted: Python raises
``KeyboardInterrupt`` when the call returns, or, when the compiled code calls back into
Python (Numba does, e.g. to unpickle a constant), inside that call, which the kernel does
not expect: the user then sees a chained ``SystemError: CPUDispatcher(...) returned a
result with an exception set`` that ``except KeyboardInterrupt`` does not catch.

:func:`call_kernel` runs the kernel in a worker thread instead (the kernel must be
``nogil=True``, or the main thread could not run the signal handler meanwhile). Signal
handlers only ever run in the main thread, which waits on the worker; on
``KeyboardInterrupt`` it sets ``stop[0] = 1`` in a one-element int64 array that the kernel
polls (a kernel that takes ``stop`` returns early when it is set), waits for the worker
to finish and re-raises ``KeyboardInterrupt``. No thread is left running (a second Ctrl-C
while the kernel winds down stops the waiting: the kernel then still ends at its next poll).

A kernel that is not compiled yet is compiled (or loaded from Numba's cache) first, in the
calling thread: compiling takes seconds to tens of seconds, and Ctrl-C interrupts the
compiler there at once, where a worker could not be stopped before it finished.
"""

from __future__ import annotations

import contextlib
import signal
import threading

import numpy as np


def call_kernel(kernel, *args, stop: bool = True):
    """``kernel(*args, stop_array)`` (or ``kernel(*args)`` with ``stop=False``, for a kernel whose
    work is short and that takes no stop flag) in a worker thread; returns its result or raises
    its exception. Ctrl-C in the main thread stops the kernel (see the module docstring) and raises
    ``KeyboardInterrupt`` here.

    >>> import numpy as np
    >>> from numba import njit
    >>> @njit(nogil=True)
    ... def total(a, stop):
    ...     s = 0
    ...     for x in a:
    ...         if stop[0] != 0:
    ...             break
    ...         s += x
    ...     return s
    >>> call_kernel(total, np.arange(4))
    6
    """
    flag = np.zeros(1, np.int64)
    call_args = args + (flag,) if stop else args
    if getattr(kernel, "signatures", None) == []:  # a Numba dispatcher that has no machine code yet
        from numba import typeof

        kernel.compile(tuple(typeof(a) for a in call_args))
    out = []
    began, done = threading.Event(), threading.Event()

    def run():
        began.set()
        try:
            out.append((True, kernel(*call_args)))
        except BaseException as e:  # noqa: B902 -- re-raised in the calling thread
            out.append((False, e))
        finally:
            done.set()

    worker = threading.Thread(target=run, name=f"fastsw-{getattr(kernel, '__name__', 'kernel')}", daemon=True)
    try:
        worker.start()
        while not done.wait(0.1):
            pass
    except KeyboardInterrupt:
        flag[0] = 1
        # the interrupt may come while start() waits for the new thread: then it runs anyway
        # (and stops at its first poll); wait for it unless it never started
        if began.wait(1.0):
            worker.join()
        raise
    worker.join()
    ok, value = out[0]
    if not ok:
        raise value
    return value


@contextlib.contextmanager
def sigint_held():
    """Hold Ctrl-C while the block runs and raise ``KeyboardInterrupt`` after it: for a short operation on
    state shared with threads (a ``queue.Queue`` put or get) that a ``KeyboardInterrupt`` must not cut in
    half. Raised between a lock's acquire and its release, it leaves the queue's lock in a state where a thread
    fails with ``RuntimeError: release unlocked lock`` or the next put blocks forever.

    Only in the main thread and while SIGINT has Python's default handler (otherwise the block just runs).
    The block must not wait for long: Ctrl-C takes effect only when it ends.

        >>> with sigint_held():
        ...     pass
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    caught = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            raise KeyboardInterrupt
