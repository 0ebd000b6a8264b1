"""Helpers shared by the pass tests: lower real programs to HLO text, run
exla's passes on it, execute it and measure it.

Everything goes through exla's own layers: `exla._exla.optimize` for the
passes, `exla.bridge.xla` for HLO text and XLA's planned memory, and
`exla.bridge.tensorflow_call.call_hlo` to execute HLO text with TensorFlow's
XLA. The extension is required when EXLA_REQUIRE_EXTENSION is set (CI);
otherwise a test module is skipped if it has not been built.
"""

from __future__ import annotations

import re

import numpy as np


from tests._extension import core_optimize, load_extension  # noqa: E402,F401  (re-exported)


def tf_hlo(fn, *args) -> str:
    """HLO text of a jit-compiled tf.function at `args` (arrays or TensorSpecs)."""
    from exla.bridge import xla

    proto = fn.experimental_get_compiler_ir(*args)(stage="hlo_serialized")
    return xla.proto_to_text(proto)


def jax_hlo(f, *args) -> str:
    """HLO text of jax.jit(f) at `args`."""
    import jax
    from exla.bridge import xla

    lowered = jax.jit(f).lower(*args)
    return xla.proto_to_text(
        lowered.compiler_ir("hlo").as_serialized_hlo_module_proto())


def run_passes(text: str, passes: list[str], **options) -> tuple[str, bool]:
    """Runs `passes`; returns the new text and whether the first pass changed it."""
    from exla import _exla

    optimized = core_optimize(text, passes=passes, **options)
    return optimized.text, optimized.passes[0].changed


def execute(text: str, args) -> list[np.ndarray]:
    """Runs HLO text through TensorFlow's XLA."""
    from exla.bridge.tensorflow_call import call_hlo

    outputs = call_hlo(text, list(args))
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    return [np.asarray(o.numpy() if hasattr(o, "numpy") else o)
            for o in outputs]


def planned_temp_bytes(text: str) -> int:
    """XLA's planned temporary memory (buffer assignment) for the program."""
    from exla.bridge import xla

    return int(xla.planned_memory(text).temp_bytes)


_ENTRY_RE = re.compile(r"^ENTRY .*?^\}", re.M | re.S)
_ARRAY_RE = re.compile(
    r"^\s*(?:ROOT\s+)?%?[\w.\-]+ = (\w+)\[([\d,]*)\]\S* ([\w\-]+)\(", re.M)


def entry_arrays(text: str) -> list[tuple[str, tuple[int, ...], str]]:
    """(element type, dims, opcode) of every array instruction of ENTRY."""
    entry = _ENTRY_RE.search(text).group(0)
    return [(t, tuple(int(d) for d in dims.split(",") if d), op)
            for t, dims, op in _ARRAY_RE.findall(entry)]


def max_entry_rank(text: str) -> int:
    """Largest rank in ENTRY, not counting unit dimensions (x[:, None, :]
    is still a matrix)."""
    return max(sum(1 for d in dims if d != 1)
               for _, dims, _ in entry_arrays(text))


def count_entry_opcode(text: str, opcode: str) -> int:
    return sum(1 for _, _, op in entry_arrays(text) if op == opcode)


def largest_entry_elements(text: str) -> int:
    return max(int(np.prod(dims)) for _, dims, _ in entry_arrays(text))


def memory_factor(label: str, before: str, after: str) -> float:
    """Prints and returns planned temp memory before / after."""
    b, a = planned_temp_bytes(before), planned_temp_bytes(after)
    factor = b / max(a, 1)
    print(f"\n{label}: XLA planned temp {b / 1e6:.3f} MB -> {a / 1e6:.3f} MB "
          f"(factor {factor:.1f})")
    return factor


def assert_close(actual, expected, rtol, label=""):
    """|actual - expected| <= rtol * max|expected| elementwise (a relative
    error measured against the output's scale, which is what reassociation
    and the |x|^2+|y|^2-2xy expansion preserve)."""
    actual = np.asarray(actual, np.float64)
    expected = np.asarray(expected, np.float64)
    assert actual.shape == expected.shape, (label, actual.shape, expected.shape)
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    err = float(np.max(np.abs(actual - expected))) / scale
    assert err <= rtol, f"{label}: relative error {err:.3e} > {rtol:.1e}"
    return err


def rng(seed):
    return np.random.default_rng(seed)


def tf_function(f):
    import tensorflow as tf

    return tf.function(f, jit_compile=True)


def compiled_memory(text: str) -> dict[str, int]:
    """XLA's buffer assignment for `text` compiled for the CPU (jaxlib), in
    bytes: temporaries, arguments, outputs, and the constants the executable
    holds (allocations marked is_constant, which none of the other figures
    include)."""
    from tensorflow.compiler.xla.service import hlo_pb2

    from exla.bridge import xla

    jaxlib = xla._xla()  # the bridge's own handle on jaxlib's CPU client
    client = jaxlib.cpu_client(1)
    devices = jaxlib.DeviceList(tuple(client.devices()[:1]))
    executable = client.compile_and_load(xla.text_to_stablehlo(text), devices,
                                         jaxlib.CompileOptions())
    stats = executable.get_compiled_memory_stats()
    assignment = hlo_pb2.BufferAssignmentProto.FromString(
        stats.serialized_buffer_assignment_proto)
    return {
        "temp": int(stats.temp_size_in_bytes),
        "arguments": int(stats.argument_size_in_bytes),
        "outputs": int(stats.output_size_in_bytes),
        "constants": sum(int(a.size) for a in assignment.buffer_allocations
                         if a.is_constant),
    }
