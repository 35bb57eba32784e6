"""The progress bar of ``flexmbs run``: plain text on stderr, one line redrawn on a
terminal, a line every few seconds otherwise."""
from __future__ import annotations

import sys
import time


class ProgressBar:
    """Plain-text progress on ``stream`` (default: ``sys.stderr`` when the bar is made),
    at most every ``interval`` seconds."""

    def __init__(self, t0: float, t_end: float, stream=None, interval: float = 0.25,
                 width: int = 30):
        stream = sys.stderr if stream is None else stream
        self.t0, self.t_end, self.stream, self.width = t0, t_end, stream, width
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.interval = interval if self.tty else 5.0
        self.start = time.perf_counter()
        self.last = -1e9
        self.shown = False
        self.estimated = False

    #: a run expected to take longer than this [s] says so once, after ESTIMATE_AFTER s
    LONG_RUN, ESTIMATE_AFTER = 60.0, 2.0

    def __call__(self, t: float, t_end: float, stats) -> bool:
        now = time.perf_counter()
        if not self.estimated and now - self.start >= self.ESTIMATE_AFTER and t > self.t0:
            self.estimated = True
            total = (now - self.start) * (self.t_end - self.t0) / (t - self.t0)
            if total > self.LONG_RUN:
                steps = getattr(stats, "steps", 0)
                n = steps * (self.t_end - self.t0) / (t - self.t0)
                self.stream.write(("\n" if self.shown and self.tty else "")
                                  + f"estimated run time {_duration(total)} (about {n:.3g} "
                                  f"steps at {steps / (now - self.start):.0f} steps/s); "
                                  f"Ctrl-C stops and keeps the steps so far\n")
                self.stream.flush()
        if now - self.last < self.interval and t < self.t_end:
            return False
        self.last = now
        frac = min(max((t - self.t0) / (self.t_end - self.t0), 0.0), 1.0)
        n = int(round(frac * self.width))
        steps = getattr(stats, "steps", 0)
        newton = getattr(stats, "newton_iterations", 0)
        rate = steps / max(now - self.start, 1e-9)
        line = (f"[{'#' * n}{'.' * (self.width - n)}] t = {t:.5g}/{self.t_end:.5g} s  "
                f"{steps} steps  {rate:.0f} steps/s  Newton {newton / max(steps, 1):.2f}/step")
        self.stream.write(("\r" + line) if self.tty else (line + "\n"))
        self.stream.flush()
        self.shown = True
        return False

    def close(self) -> None:
        """End the bar's line (on a terminal); once: the next message starts a line."""
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False


def _duration(seconds: float) -> str:
    """``"3 min 20 s"``, ``"2 h 05 min"``, ``"45 s"``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"
