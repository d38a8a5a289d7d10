"""Progress of long runs on a text stream: a redrawn bar on a terminal, plain lines elsewhere.

On a terminal the progress is a tqdm bar (checks done of all, failures so far, elapsed and
remaining time), redrawn on every step. Anywhere else (CI, a pipe, a file) carriage returns
would pile up in the log, so :class:`PlainProgress` writes a plain line instead, only when the
run crosses a :data:`LINE_STEP` fraction of its steps or :data:`LINE_EVERY_S` seconds have passed
since the last line, and a last line when it ends. Both take the same four calls
(``update``, ``set_postfix_str``, ``write``, ``close``), so a runner needs not know which it has.
"""

from __future__ import annotations

import math
import time
from typing import Any, TextIO

from tqdm import tqdm

__all__ = ["LINE_EVERY_S", "LINE_STEP", "PlainProgress", "is_terminal", "progress_for"]

#: :class:`PlainProgress`: a line at each crossing of this fraction of the steps ...
LINE_STEP = 0.1
#: ... or when this many seconds have passed since the last line (a slow stretch).
LINE_EVERY_S = 30.0


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is an interactive terminal (false for files, pipes and streams
    without ``isatty``)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except ValueError:  # a closed stream
        return False


def _clock(seconds: float) -> str:
    """``seconds`` as ``m:ss`` (``h:mm:ss`` from an hour)."""
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


class PlainProgress:
    """Progress as plain lines (module docstring): ``done/total unit (pct), elapsed, left,
    postfix``. The time left is the rate of the steps after the first (which carries the
    start-up, and on an empty cache the compile) times the steps to go, shown once a
    :data:`LINE_STEP` fraction of the steps is done ("?" before)."""

    def __init__(self, total: int, stream: TextIO, unit: str = "check") -> None:
        self.total, self.stream, self.unit = int(total), stream, unit
        self.done, self.postfix = 0, ""
        self._t0 = self._last = time.monotonic()
        self._t_first = math.nan  # when the first step was done
        self._step_shown = 0  # the last LINE_STEP step a line was written for
        self._done_shown = 0  # ``done`` when the last line was written

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:  # noqa: ARG002
        """The text after the counts on the next line."""
        self.postfix = text

    def _line(self) -> str:
        elapsed = time.monotonic() - self._t0
        pct = 100.0 * self.done / self.total if self.total else 100.0
        left = math.nan
        if self.done > 1 and self.done >= LINE_STEP * self.total:
            rate = (time.monotonic() - self._t_first) / (self.done - 1)
            left = rate * (self.total - self.done)
        left_text = _clock(left) if math.isfinite(left) else "?"
        text = (f"{self.done}/{self.total} {self.unit}s ({pct:.0f}%), "
                f"{_clock(elapsed)} elapsed, {left_text} left")
        return f"{text}; {self.postfix}" if self.postfix else text

    def _emit(self) -> None:
        self.stream.write(self._line() + "\n")
        self.stream.flush()
        self._last, self._done_shown = time.monotonic(), self.done

    def update(self, n: int = 1) -> None:
        """``n`` more steps done; a line when a step boundary is crossed or it is time."""
        if self.done == 0 and n > 0:
            self._t_first = time.monotonic()
        self.done += int(n)
        step = math.floor(self.done / self.total / LINE_STEP + 1e-9) if self.total else 0
        if step > self._step_shown or time.monotonic() - self._last >= LINE_EVERY_S:
            self._step_shown = max(step, self._step_shown)
            self._emit()

    def write(self, text: str, file: TextIO | None = None) -> None:
        """A line of its own (e.g. a failure) on ``file`` (default the progress stream)."""
        out = self.stream if file is None else file
        out.write(text + "\n")
        out.flush()

    def close(self) -> None:
        """The last line, unless the counts are what the last line said already."""
        if self.done != self._done_shown:
            self._emit()


def progress_for(total: int, stream: TextIO, unit: str = "check") -> Any:
    """A tqdm bar on a terminal (redrawn on every step: on a cold cache the next step may come
    only after a compile, and the last ones of a burst must not stay hidden until then), else a
    :class:`PlainProgress`."""
    if is_terminal(stream):
        return tqdm(total=total, file=stream, unit=unit, dynamic_ncols=True, mininterval=0.0,
                    miniters=1)
    return PlainProgress(total, stream, unit)
