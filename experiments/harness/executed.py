"""What actually ran: the loops and XLA's planned memory of the executable a row timed.

A row's memory figures and its claim that exla rewrote the program must come
from the executable that ran, not from a separate ``optimize_hlo`` call on
the same function: exla may fall back to the original program, or decide
that nothing needs changing, and a separate call would not show it.

* TensorFlow: the parent gives the child ``--xla_dump_to`` (:func:`dump_flags`);
  TensorFlow's own XLA writes the HLO and the buffer assignment of every
  program it compiles to run (module names carry ``XlaMustCompile``). After
  the child has ended, even when the memory cap killed it,
  :func:`tf_executed` picks the module of the timed function (exla's
  dispatcher is ``exla_<name>``) and reads it. The rewritten program runs
  inside TensorFlow's ``XlaCallModule`` op, whose instructions keep
  ``op_name="XlaCallModule/..."`` in the compiled module: that is the marker
  that the program which ran is exla's.
* JAX: the child compiles with JAX's ahead-of-time API
  (``jax.jit(f).lower(*args).compile()``; exla's compile hook rewrites it as
  it rewrites any ``jax.jit``), times that executable, and reads its
  ``as_text()`` and ``memory_analysis()`` (:func:`jax_executed`).

Fields (columns): ``loops``: ``while`` loops in the executable that ran;
``loops_plain``: the same in the plain program's executable; ``ran_rewritten``:
``yes``/``no``, whether the executable that ran is exla's rewritten program;
``planned_peak_mb``/``planned_temp_mb``/``planned_constant_mb``: XLA's buffer
assignment of that executable (arguments + outputs not aliased + temporaries,
temporaries, and the literals it holds);
``planned_from``: ``executable`` for figures read this way.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["count_loops", "buffer_assignment", "dump_flags", "tf_executed", "jax_executed",
           "normalized_hlo"]

_MIB = 2**20
_WHILE = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+ = .*?\bwhile\(", re.MULTILINE)
_ALLOCATION = re.compile(r"^allocation \d+: size (\d+), (.*)$", re.MULTILINE)
TF_MARKER = 'op_name="XlaCallModule'
DUMP_DIR_NAME = "xla_dump"


def count_loops(hlo_text: str) -> int:
    """The ``while`` instructions of an HLO module's text.

    >>> count_loops('  %w = (s32[]) while(%t), condition=%c, body=%b\\n  %x = f32[] add(%a, %b)')
    1
    """
    return len(_WHILE.findall(hlo_text))


def buffer_assignment(text: str) -> dict[str, int]:
    """Bytes by kind from XLA's ``*buffer-assignment.txt`` dump.

    ``arguments`` (entry parameters), ``outputs`` (maybe-live-out
    allocations), ``aliased`` (both), ``temp`` (everything else but constants
    and thread-local scratch), ``constants`` (the literals) and ``peak`` =
    arguments + outputs - aliased + temp. exla's memory limit bounds
    ``peak + constants`` (:attr:`exla.bridge.xla.MemoryStats.total_bytes`).

    >>> buffer_assignment("allocation 0: size 100, parameter 0, shape |f32[25]| at ShapeIndex {}:\\n"
    ...                   "allocation 1: size 8, output shape is |f64[]|, maybe-live-out:\\n"
    ...                   "allocation 2: size 4, constant:\\n"
    ...                   "allocation 3: size 64, preallocated-temp:\\n")
    {'arguments': 100, 'outputs': 8, 'aliased': 0, 'temp': 64, 'constants': 4, 'peak': 172}
    """
    out = {"arguments": 0, "outputs": 0, "aliased": 0, "temp": 0, "constants": 0}
    for size_text, kind in _ALLOCATION.findall(text):
        size = int(size_text)
        parameter, live_out = "parameter" in kind, "maybe-live-out" in kind
        if parameter:
            out["arguments"] += size
        if live_out:
            out["outputs"] += size
        if parameter and live_out:
            out["aliased"] += size
        if "constant" in kind and not (parameter or live_out):
            out["constants"] += size
        if not (parameter or live_out or "constant" in kind or "thread-local" in kind):
            out["temp"] += size
    out["peak"] = out["arguments"] + out["outputs"] - out["aliased"] + out["temp"]
    return out


def dump_flags(dump_dir: Path) -> list[str]:
    """XLA flags that make TensorFlow's XLA dump what it compiles to run.

    Only modules of jit-compiled functions (``XlaMustCompile`` in their name)
    are dumped, so exla's own planning compilations (jaxlib's CPU client) are not.
    """
    return [f"--xla_dump_to={dump_dir}", "--xla_dump_hlo_module_re=.*XlaMustCompile.*"]


def _modules(dump_dir: Path) -> dict[str, dict[str, Path]]:
    """Dumped modules: stem -> {"hlo": after optimisations, "buffers": buffer assignment}."""
    found: dict[str, dict[str, Path]] = {}
    for path in dump_dir.glob("*after_optimizations*.txt"):
        name = path.name
        if name.endswith("after_optimizations.txt"):
            found.setdefault(name[: -len("after_optimizations.txt")], {})["hlo"] = path
        elif name.endswith("after_optimizations-buffer-assignment.txt"):
            stem = name[: -len("after_optimizations-buffer-assignment.txt")]
            found.setdefault(stem, {})["buffers"] = path
    return found


def tf_executed(dump_dir: Path, program: str, exla: bool) -> dict[str, Any]:
    """Fields of the TensorFlow program named ``program`` that ran (see the module doc).

    ``exla``: the row ran through exla, whose dispatcher is ``exla_<program>``;
    its module carries the rewritten program (``XlaCallModule``) only when
    exla's program is what ran. The newest module of either name is read
    (after a failure at run time exla runs the original function itself). Without a dumped module (the child died before
    XLA compiled, or no function of that name ran), returns ``{}``.
    """
    if not dump_dir.is_dir():
        return {}
    # exla's dispatcher, or (after a failure at run time) the original function.
    wanted = re.compile(rf"\.a_inference_{'(exla_)?' if exla else ''}{re.escape(program)}_\d+__")
    chosen = [(stem, files) for stem, files in _modules(dump_dir).items()
              if wanted.search("." + stem.split(".", 1)[-1]) and "hlo" in files]
    if not chosen:
        return {}
    # The newest compilation of that function: the one the timed calls used.
    stem, files = max(chosen, key=lambda item: item[1]["hlo"].stat().st_mtime)
    text = files["hlo"].read_text(errors="replace")
    fields: dict[str, Any] = {"loops": count_loops(text), "executed_module": stem.split(".")[1][:80]}
    if exla:
        fields["ran_rewritten"] = "yes" if TF_MARKER in text else "no"
    if "buffers" in files:
        stats = buffer_assignment(files["buffers"].read_text(errors="replace"))
        fields.update(planned_peak_mb=stats["peak"] / _MIB, planned_temp_mb=stats["temp"] / _MIB,
                      planned_constant_mb=stats["constants"] / _MIB, planned_from="executable")
    return fields


_NOISE = re.compile(r"(, metadata=\{[^}]*\}|, frontend_attributes=\{[^}]*\}|^HloModule \S+)",
                    re.MULTILINE)


def normalized_hlo(text: str) -> str:
    """An executable's HLO text without its module name and metadata (to compare programs).

    >>> normalized_hlo('HloModule jit_f, x\\n%a = f32[] add(%b, %c), metadata={op_name="x"}')
    ' x\\n%a = f32[] add(%b, %c)'
    """
    return _NOISE.sub("", text)


def jax_executed(compiled: Any, plain: Any | None = None) -> dict[str, Any]:
    """Fields of a JAX ``Compiled`` executable, the one the row times.

    ``plain``: the same program's executable compiled without exla (for the
    exla backend): ``loops_plain`` and ``ran_rewritten`` (whether the two
    executables differ) come from it.
    """
    stats = compiled.memory_analysis()
    peak = (stats.temp_size_in_bytes + stats.argument_size_in_bytes
            + stats.output_size_in_bytes - stats.alias_size_in_bytes)
    text = compiled.as_text()
    fields: dict[str, Any] = {"loops": count_loops(text), "planned_peak_mb": peak / _MIB,
                              "planned_temp_mb": stats.temp_size_in_bytes / _MIB,
                              "planned_from": "executable"}
    if plain is not None:
        plain_text = plain.as_text()
        plain_stats = plain.memory_analysis()
        fields.update(loops_plain=count_loops(plain_text),
                      planned_temp_plain_mb=plain_stats.temp_size_in_bytes / _MIB,
                      ran_rewritten="yes" if normalized_hlo(text) != normalized_hlo(plain_text)
                      else "no")
    else:
        fields.update(loops_plain=fields["loops"], planned_temp_plain_mb=fields["planned_temp_mb"])
    return fields
