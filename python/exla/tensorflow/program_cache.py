"""The programs of one exla function: one per signature, built once.

A signature's program (:class:`exla.tensorflow.program.Program`) is built the first
time the function is traced for it. A failure is remembered in its place, so
that retracing the same signature does not run exla's pipeline again: the
function then runs the original for it. A program that failed at run time
stays listed, as not rewritten, with the runs its rewrite made before: what
ran is never forgotten.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, Callable, Hashable

from exla.tensorflow.program_info import ProgramInfo

__all__ = ["ProgramCache"]


class _Failure:
    """A signature exla failed on, and the program it had built for it (None: the build failed)."""

    def __init__(self, exc: BaseException, program: Any = None) -> None:
        self.exc = exc
        self.program = program


class ProgramCache:
    """Programs by signature key ``(concrete function, flat input specs, platform)``."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._programs: dict[Hashable, Any] = {}

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The program for ``key``, built by ``build`` the first time.

        Raises:
          Exception: what ``build`` raised for this key, then and every time after.
        """
        with self._lock:
            program = self._programs.get(key)
            if program is None:
                try:
                    program = build()
                except Exception as exc:  # noqa: BLE001 - remembered, raised to the caller
                    program = _Failure(exc)
                self._programs[key] = program
        if isinstance(program, _Failure):
            raise program.exc
        return program

    def forget(self, concrete: Any, failure: BaseException) -> None:
        """Marks every program of ``concrete`` as failed: it runs the original from now on."""
        with self._lock:
            for key, program in list(self._programs.items()):
                if key[0] is concrete:
                    built = program.program if isinstance(program, _Failure) else program
                    self._programs[key] = _Failure(failure, built)

    def infos(self) -> list[ProgramInfo]:
        """What exla did for each signature it built a program for.

        A program that failed at run time is listed as not rewritten (the
        original runs for its signature), with the runs of its rewrite.
        """
        with self._lock:
            built = [(p.program, False) if isinstance(p, _Failure) else (p, True)
                     for p in self._programs.values()]
        infos = []
        for program, used in built:
            if program is not None:
                info = program.info()
                infos.append(info if used else dataclasses.replace(info, rewritten=False))
        return infos
