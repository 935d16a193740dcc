"""A small stderr progress bar (no dependency), throttled to a few updates per second.

On a terminal the bar redraws in place; when stderr is a file or a pipe (logs, CI)
it writes one plain line per stage when the stage ends, without control codes.
"""

from __future__ import annotations

import sys
import time
from typing import Optional


class Progress:
    """``with Progress("phase 1 merges", total=n) as bar: bar.update(1)``.

    Disabled bars cost one attribute check per update.
    """

    def __init__(self, desc: str, total=None, unit: str = "", enabled: bool = True, stream=None):
        self.desc = desc
        self.total = total
        self.unit = unit
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.n = 0
        self.extra = ""
        self.start = time.perf_counter()
        self._last = 0.0
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())

    def update(self, n: int = 1, extra: Optional[str] = None) -> None:
        self.n += n
        if extra is not None:
            self.extra = extra
        if not (self.enabled and self.tty):
            return
        now = time.perf_counter()
        if now - self._last >= 0.2:
            self._last = now
            self._draw(now)

    def _draw(self, now: float, end: str = "") -> None:
        elapsed = now - self.start
        if self.total:
            frac = min(1.0, self.n / self.total)
            filled = int(frac * 24)
            bar = "#" * filled + "-" * (24 - filled)
            text = f"{self.desc}: [{bar}] {self.n}/{self.total}{self.unit}"
        elif self.n or self.extra:
            text = f"{self.desc}: {self.n}{self.unit}"
        else:  # nothing was counted (a stage timed as a whole): no stray "0"
            text = self.desc
        if self.extra:
            text += f" {self.extra}"
        if self.tty:
            self.stream.write(f"\r{text} ({elapsed:.1f}s)\x1b[K{end}")
        else:
            self.stream.write(f"{text} ({elapsed:.1f}s){end}")
        self.stream.flush()

    def close(self) -> float:
        """Finish the bar; returns the seconds since it started."""
        now = time.perf_counter()
        if self.enabled:
            self._draw(now, end="\n")
        return now - self.start

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.close()
        elif self.enabled and self.tty and self._last:
            self.stream.write("\n")
        return False
