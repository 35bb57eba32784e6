"""Stopping a case run cleanly on SIGINT (Ctrl-C) or SIGTERM: :class:`StopOnSignal`."""
from __future__ import annotations

import signal


class StopOnSignal:
    """SIGINT/SIGTERM -> stop at the next call of the progress callback (raise
    KeyboardInterrupt from it, so the step being written is complete; it is called at
    least every 0.05 s of wall time, :func:`flexmbs.simulate.simulate`); twice -> at once.

    A context manager: the handlers are installed on entry (the main thread only, as
    Python requires) and the previous ones restored on exit; :meth:`check` raises
    ``KeyboardInterrupt`` once a signal was received, ``received`` is its number."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.received: int | None = None
        self.saved = {}

    def __enter__(self):
        for s in self.SIGNALS:
            self.saved[s] = signal.signal(s, self._handler)
        return self

    def __exit__(self, *exc):
        for s, h in self.saved.items():
            signal.signal(s, h)
        return False

    def _handler(self, signum, frame):
        if self.received is not None:
            raise KeyboardInterrupt(signal.Signals(signum).name)
        self.received = signum

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` if a signal was received."""
        if self.received is not None:
            raise KeyboardInterrupt(signal.Signals(self.received).name)

    def exit_status(self) -> int:
        """``128 + signal number`` of the signal received (SIGINT if none): 130, 143."""
        return 128 + int(self.received or signal.SIGINT)

    def signal_name(self) -> str:
        """``"SIGINT"`` or ``"SIGTERM"`` (SIGINT if none was received)."""
        return signal.Signals(self.received or signal.SIGINT).name
