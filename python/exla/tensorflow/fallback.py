"""What an exla function does when exla fails: fall back, warn once, or raise.

exla must never be the reason a working program stops working: a failure
inside exla runs the original function, with one warning per reason. Two
failures reach the user instead: a memory limit below the program's own
inputs and outputs (:class:`exla.MemoryLimitError`, the user's error on every
path) and, under ``strict``, every failure.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from exla.errors import ExlaError, MemoryLimitError

__all__ = ["FallbackPolicy", "reason"]

_log = logging.getLogger("exla")


def reason(exc: BaseException) -> str:
    """A one-line reason for a warning.

    TensorFlow's tracing errors start with "in user code:" and end with the
    actual error, so the last line is taken for those.

    >>> reason(ValueError("in user code:\\n  File x\\n\\n  TypeError: bad"))
    'ValueError: TypeError: bad'
    """
    lines = [line.strip() for line in str(exc).strip().split("\n") if line.strip()]
    text = (lines[-1] if lines and lines[0].startswith("in user code") else
            (lines[0] if lines else type(exc).__name__))
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}"


class FallbackPolicy:
    """The failure policy of one function, named ``name`` in its messages.

    ``strict`` is asked at each failure (the setting is resolved when needed,
    so that ``EXLA_STRICT`` set after the function was made still counts).
    """

    def __init__(self, name: str, strict: Callable[[], bool]) -> None:
        self._name = name
        self._strict = strict
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def raise_if_not_recoverable(self, exc: Exception) -> None:
        """Raises what must reach the user; returns when the original may run instead.

        Under ``strict`` an :class:`ExlaError` is raised as it is: it may come
        from a nested call that already named the function.
        """
        if isinstance(exc, MemoryLimitError):
            raise exc
        if self._strict():
            if isinstance(exc, ExlaError):
                raise exc
            raise ExlaError(f"exla failed on function {self._name!r}: "
                            f"{type(exc).__name__}: {exc}") from exc

    def warn_failure(self, exc: BaseException) -> None:
        """One warning per reason: exla failed and the original function runs."""
        text = reason(exc)
        self.warn_once(text, "exla failed on function %r (" + text.replace("%", "%%")
                       + "); running the original function")

    def warn_once(self, key: str, message: str) -> None:
        """Logs ``message % name`` the first time ``key`` comes up."""
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        _log.warning(message, self._name)
