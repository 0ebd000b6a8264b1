"""One traced signature of a TensorFlow function as an XLA program rewritten by exla.

A :class:`Program` is built from a TensorFlow ``ConcreteFunction`` (one input
signature of a ``tf.function(jit_compile=True)``):

1. TensorFlow lowers the function to HLO (``hlo_serialized``; the parameters
   are the function's flat explicit inputs, then its captured inputs);
2. exla's pipeline rewrites the HLO;
3. if a pass really changed it, the HLO becomes a StableHLO portable artifact
   that :func:`emit` runs through TensorFlow's ``XlaCallModule`` op
   (:func:`exla.bridge.tensorflow_call.xla_call_module`), reading the
   captured variables first and assigning the variables the program writes
   (``input_output_alias`` in the HLO header) afterwards.

This module uses a TensorFlow internal that is not part of its public API
(``compiler_ir``); exla pins the TensorFlow version.

>>> import tensorflow as tf
>>> from exla.options import Options
>>> f = tf.function(lambda x: tf.reduce_sum(x * x), jit_compile=True)
>>> concrete = f.get_concrete_function(tf.TensorSpec([4], tf.float32))
>>> program = build_program("f", concrete, [tf.TensorSpec([4], tf.float32)], "CPU", Options())
>>> program.changed, program.n_outputs, [(r.element_type, r.dims) for r in program.signature.results]
(False, 1, [('f32', ())])
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import time
from typing import Any, Sequence

import tensorflow as tf

from exla._hlo_signature import HloSignature, read_signature
from exla.bridge import xla as bridge
from exla.bridge.tensorflow import hlo_generator, untracked_resource_variable
from exla.bridge.tensorflow_call import xla_call_module
from exla.memory_limit import runtime_memory
from exla.memory_limit.search import planned_memory_cached
from exla.optimize import optimize_hlo
from exla.tensorflow.program_info import ProgramInfo

__all__ = ["Capture", "Program", "UnsupportedProgram", "build_program", "emit", "extract_hlo",
           "start_runtime"]

_log = logging.getLogger("exla")


class UnsupportedProgram(Exception):
    """The function uses something exla cannot pass through ``XlaCallModule``."""


@dataclasses.dataclass(frozen=True)
class Capture:
    """A captured input of the function: a variable (read before the call) or a tensor."""

    variable: Any = None
    tensor: Any = None

    def value(self) -> Any:
        """The tensor to pass as the HLO parameter."""
        return self.variable.value() if self.variable is not None else self.tensor


@dataclasses.dataclass
class Program:
    """exla's result for one input signature of a function.

    Attributes:
      name: the function's name (for messages).
      platform: ``CPU``, ``CUDA`` or ``ROCM``: where the program runs.
      report: the pipeline's :class:`exla.report.Report`.
      changed: a pass other than the clean-ups rewrote the module; only then
        is ``artifact`` set and the rewritten program used.
      artifact: the StableHLO portable artifact of the rewritten module.
      signature: entry parameters/results/aliases of the HLO.
      n_outputs: the number of the function's own flat outputs (the results
        after them are new values of variables).
      captures: the captured inputs, in HLO parameter order after the explicit ones.
      updates: ``(result index, variable)`` for every variable the program writes.
      seconds: time spent building the program (lowering, passes, conversion).
      inputs: ``(shape, dtype name)`` of the flat explicit inputs.
      run_counter: an int64 ``tf.Variable`` that the rewritten program itself
        increments each time it runs (made by the first :func:`emit`), so
        that what ran is known from the runtime, not from what was built.
    """

    name: str
    platform: str
    report: Any
    changed: bool
    artifact: bytes | None
    signature: HloSignature
    n_outputs: int
    captures: list[Capture]
    updates: list[tuple[int, Any]]
    seconds: float
    inputs: tuple[tuple[tuple[int, ...], str], ...] = ()
    run_counter: Any = None

    def runs(self) -> int:
        """How many times the rewritten program has run (0 when it never did)."""
        if self.run_counter is None:
            return 0
        with tf.init_scope():
            return int(self.run_counter.numpy())

    def info(self) -> Any:
        """The public view of this program: an :class:`exla.ProgramInfo`."""
        return ProgramInfo(name=self.name, platform=self.platform, inputs=self.inputs,
                           rewritten=self.changed, report=self.report,
                           variables_written=tuple(v.name for _, v in self.updates),
                           seconds=self.seconds, runs=self.runs())


def extract_hlo(concrete: Any, flat_specs: Sequence[Any], platform: str) -> str:
    """HLO text of ``concrete`` for static ``flat_specs`` as TensorFlow lowers it for ``platform``.

    Uses ``hlo_serialized`` (``hlo`` elides large constants). Must be called in
    the eager context (e.g. under ``tf.init_scope()``), with a concrete function
    whose captures are eager tensors/variables.
    """
    if not all(s.shape.is_fully_defined() for s in flat_specs):
        raise UnsupportedProgram(
            f"input shapes must be static, got {[tuple(s.shape) for s in flat_specs]}")
    tf_platform = "CPU" if platform == "CPU" else ("TPU" if platform == "TPU" else "GPU")
    generate = hlo_generator(concrete, flat_specs)
    proto = generate(stage="hlo_serialized", platform_name=tf_platform)
    return bridge.proto_to_text(proto)


def _captures(concrete: Any) -> list[Capture]:
    by_handle = {id(v.handle): v for v in concrete.variables}
    captures = []
    for tensor in concrete.captured_inputs:
        if tensor.dtype == tf.resource:
            variable = by_handle.get(id(tensor))
            if variable is None:
                raise UnsupportedProgram("the function captures a resource that is not a tf.Variable")
            captures.append(Capture(variable=variable))
        else:
            captures.append(Capture(tensor=tensor))
    return captures


def _updates(signature: HloSignature, n_outputs: int, n_explicit: int,
             captures: list[Capture]) -> list[tuple[int, Any]]:
    """``(result index, variable)`` pairs; checks that the results are outputs then updates."""
    updates = []
    for result, parameter in signature.aliases:
        if parameter < n_explicit:
            raise UnsupportedProgram("the function writes a variable passed as an argument")
        capture = captures[parameter - n_explicit]
        if capture.variable is None:
            raise UnsupportedProgram(f"result {result} aliases a captured tensor, not a variable")
        updates.append((result, capture.variable))
    extra = sorted(r for r, _ in updates)
    if extra != list(range(n_outputs, len(signature.results))):
        raise UnsupportedProgram(
            f"the HLO has {len(signature.results)} results; expected {n_outputs} outputs followed "
            f"by the {len(updates)} variable updates")
    return updates


def _dump_dir(root: str | None, name: str) -> str:
    """A new directory ``root/name[.N]`` for one program's dump ('' when not dumping)."""
    if not root:
        return ""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "function"
    base = os.path.join(root, safe)
    os.makedirs(root, exist_ok=True)
    for n in range(1, 10_000):
        path = base if n == 1 else f"{base}.{n}"
        try:
            os.mkdir(path)  # atomic: concurrent builds never share a directory
            return path
        except FileExistsError:
            continue
    raise RuntimeError(f"too many dump directories for {name} under {root}")


def build_program(name: str, concrete: Any, flat_specs: Sequence[Any], platform: str,
                  options: Any, *, dump_root: str | None = None,
                  convert_unchanged: bool = False, check_compile: bool = False) -> Program:
    """Lowers ``concrete`` to HLO, runs exla's pipeline and prepares the call.

    Args:
      name: the function's name, for messages and the dump directory.
      concrete: the function traced for ``flat_specs`` in the eager context.
      flat_specs: static ``tf.TensorSpec`` of the flat explicit inputs.
      platform: from :func:`exla.bridge.tensorflow_call.current_platform`.
      options: :class:`exla.options.Options` (threshold, split_size, memory_limit,
        passes, strict).
      dump_root: write the module before/after every pass under this directory.
      convert_unchanged: make the artifact even when no pass changed the
        module, if it writes variables (a VJP runs it without the writes).
      check_compile: compile the rewritten module with XLA now (see
        :func:`_check_compiles`), for a program that will run inside a graph,
        where a compile failure could no longer fall back to the original.

    Raises:
      UnsupportedProgram: a construct exla cannot pass through.
      Exception: whatever a pass or the conversion raises.
    """
    start = time.perf_counter()
    text = extract_hlo(concrete, flat_specs, platform)
    signature = read_signature(text)
    captures = _captures(concrete)
    n_explicit = len(flat_specs)
    if len(signature.parameters) != n_explicit + len(captures):
        raise UnsupportedProgram(
            f"the HLO has {len(signature.parameters)} parameters; expected {n_explicit} inputs "
            f"and {len(captures)} captured inputs")
    n_outputs = len(concrete.outputs)
    updates = _updates(signature, n_outputs, n_explicit, captures)
    rewritten, report = optimize_hlo(
        text, **options.replace(dump_dir=_dump_dir(dump_root, name) or None).keywords())
    runtime_memory.attach(report, "tensorflow", start_runtime)
    changed = report.rewrote_program
    artifact = None
    if changed or (convert_unchanged and updates):
        if read_signature(rewritten).results != signature.results:
            raise UnsupportedProgram("the rewritten module changed the entry result types")
        artifact = bridge.text_to_portable_artifact(rewritten)
        if check_compile and changed:
            _check_compiles(name, rewritten, platform)
    seconds = time.perf_counter() - start
    _log.debug("exla: %s for %s: changed=%s in %.3fs", name, [tuple(s.shape) for s in flat_specs],
               changed, seconds)
    return Program(name=name, platform=platform, report=report, changed=changed, artifact=artifact,
                   signature=signature, n_outputs=n_outputs, captures=captures, updates=updates,
                   seconds=seconds,
                   inputs=tuple((tuple(s.shape.as_list()), s.dtype.name) for s in flat_specs))


def start_runtime() -> None:
    """Starts TensorFlow's own XLA runtime (a copy separate from jaxlib's): compiles
    and runs a trivial jit-compiled function, eagerly. What the process then
    holds more is the runtime's fixed cost
    (:func:`exla.memory_limit.runtime_memory.measure`)."""
    with tf.init_scope():
        trivial = tf.function(lambda x: x * 2.0 + 1.0, jit_compile=True)
        trivial(tf.ones([4])).numpy()


def _check_compiles(name: str, text: str, platform: str) -> None:
    """Compiles the rewritten module with XLA; raises what XLA raises.

    TensorFlow compiles ``XlaCallModule`` when the graph first runs. Called
    eagerly, a failure there still reaches exla, which runs the original; in
    a graph that another function runs (Keras's train step) it would reach
    the user instead. So such programs are compiled here first, with
    jaxlib's CPU client (a module the memory-limit search already compiled
    is not compiled again). Other platforms are not checked: jaxlib here has
    no GPU backend.
    """
    if platform != "CPU":
        _log.debug("exla: %s: the rewritten module's compile is not checked on %s", name, platform)
        return
    planned_memory_cached(text)


def _count_run(program: Program) -> None:
    """Adds an increment of ``program.run_counter`` to the graph being traced."""
    if program.run_counter is None:
        # Made outside every graph, and with the class itself rather than
        # tf.Variable: a tf.function being traced again (a new signature of
        # the dispatcher) refuses new tf.Variables through its creator scope.
        with tf.init_scope():
            program.run_counter = untracked_resource_variable(
                0, dtype=tf.int64, trainable=False, name=f"exla_runs_{program.name}")
    program.run_counter.assign_add(1, read_value=False)


def emit(program: Program, flat_inputs: Sequence[Any], *, apply_updates: bool = True) -> list[Any]:
    """Adds the rewritten program to the graph being traced; returns the function's flat outputs.

    Must be called while tracing a ``tf.function(jit_compile=True)``:
    ``XlaCallModule`` only runs compiled. Reads the captured variables, calls
    the program and, with ``apply_updates``, assigns the variables it writes.
    """
    if program.artifact is None:
        raise ValueError(f"{program.name}: the program was not converted; call the original")
    values = list(flat_inputs) + [c.value() for c in program.captures]
    results = xla_call_module(program.artifact, values, program.signature, program.platform)
    _count_run(program)
    if apply_updates:
        for index, variable in program.updates:
            variable.assign(results[index])
    return list(results[:program.n_outputs])
