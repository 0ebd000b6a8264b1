"""XLA's verdict on HLO text, from a child process that may die.

`exla.bridge.xla.verify_without_exla` asks XLA alone (its parser, HLO ->
StableHLO importer and MLIR verifier). XLA's parser CHECK-fails on some
malformed modules, which kills the process, so the verdicts come from a
child process: `XlaVerdicts.verdict(text)` sends it the text and reads back
accept or reject with XLA's message. The child answers each text from a
forked copy of itself; a copy that dies is a rejection ("XLA aborts: ...").

Run as a script, this file is the child: one JSON request per line on
stdin, one JSON verdict per line on stdout.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]


@dataclasses.dataclass(frozen=True)
class Verdict:
    accepted: bool
    message: str = ""
    aborted: bool = False  # XLA killed the process instead of returning an error


class XlaVerdicts:
    """A child process answering `verify_without_exla` for one text at a time."""

    def __init__(self) -> None:
        self._process = None
        self._stderr = None
        self.aborts = 0

    def _start(self) -> None:
        import exla

        env = dict(os.environ)
        env.pop("XLA_FLAGS", None)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(exla.__file__).resolve().parents[1]), str(_REPO),
             env.get("PYTHONPATH", "")])
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            [sys.executable, __file__], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._stderr, env=env, text=True)

    def verdict(self, text: str) -> Verdict:
        if self._process is None or self._process.poll() is not None:
            self._start()
        try:
            self._process.stdin.write(json.dumps({"text": text}) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        except BrokenPipeError:
            line = ""
        if line:
            answer = json.loads(line)
            aborted = answer.get("aborted", False)
            self.aborts += aborted
            return Verdict(answer["ok"], answer["message"], aborted)
        # The child died: XLA aborted on this text.
        code = self._process.wait()
        self._stderr.seek(0)
        tail = self._stderr.read().decode(errors="replace").strip().splitlines()
        lines = [l for l in tail if "Check failed" in l or "F0000" in l or "error" in l.lower()]
        self._process = None
        self.aborts += 1
        return Verdict(False, f"XLA aborts (exit {code}): "
                              f"{(lines or tail or [''])[-1][:500]}", aborted=True)

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.stdin.close()
            self._process.wait(timeout=30)
        self._process = None


def _verdict_in_fork(xla, text: str) -> dict:
    """XLA's verdict from a forked copy of this process, which may die.

    Forking after the imports costs milliseconds where restarting the
    worker would cost seconds of imports after every abort.
    """
    read_end, write_end = os.pipe()
    with tempfile.TemporaryFile() as stderr:
        pid = os.fork()
        if pid == 0:  # the copy: answer or die
            os.close(read_end)
            os.dup2(stderr.fileno(), 2)
            try:
                xla.verify_without_exla(text)
                answer = {"ok": True, "message": ""}
            except ValueError as e:
                answer = {"ok": False, "message": str(e)}
            with os.fdopen(write_end, "w") as out:
                out.write(json.dumps(answer))
            os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end) as result:
            line = result.read()
        _, status = os.waitpid(pid, 0)
        if line:
            return json.loads(line)
        stderr.seek(0)
        tail = stderr.read().decode(errors="replace").strip().splitlines()
        lines = [l for l in tail if "Check failed" in l or l.startswith("F")]
        return {"ok": False, "aborted": True,
                "message": f"XLA aborts (wait status {status}): "
                           f"{(lines or tail or [''])[-1][:500]}"}


def _serve() -> None:
    import logging

    logging.disable(logging.WARNING)
    from exla.bridge import xla

    xla._xla()  # import jaxlib once, before forking
    xla._mlir_context()
    for line in sys.stdin:
        answer = _verdict_in_fork(xla, json.loads(line)["text"])
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _serve()
