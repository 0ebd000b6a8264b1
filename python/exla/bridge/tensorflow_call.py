"""Runs an HLO module with TensorFlow's own XLA.

The module is converted to a StableHLO portable artifact (:mod:`exla.bridge.xla`)
and executed by TensorFlow's ``XlaCallModule`` op inside a
``tf.function(jit_compile=True)``, so it runs on whatever device TensorFlow uses,
compiled by the XLA that TensorFlow ships. This is how exla executes rewritten
programs, and how the tests compare them with the originals.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import logging
import re
import threading
from typing import Any, Sequence

__all__ = ["call_hlo", "EntryLayout", "entry_layout", "ArrayShape"]

_log = logging.getLogger("exla")

# XLA primitive type -> TensorFlow dtype name.
_DTYPES = {
    "pred": "bool",
    "s8": "int8",
    "s16": "int16",
    "s32": "int32",
    "s64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "c64": "complex64",
    "c128": "complex128",
    "f8e4m3fn": "float8_e4m3fn",
    "f8e5m2": "float8_e5m2",
}


@dataclasses.dataclass(frozen=True)
class ArrayShape:
    """An array shape of an HLO module: XLA element type and dimensions."""

    element_type: str  # XLA's name: "f32", "s32", "pred", ...
    dims: tuple[int, ...]

    @property
    def tf_dtype(self) -> Any:
        import tensorflow as tf

        if self.element_type not in _DTYPES:
            raise NotImplementedError(
                f"element type {self.element_type!r} has no TensorFlow equivalent")
        return tf.as_dtype(_DTYPES[self.element_type])


@dataclasses.dataclass(frozen=True)
class EntryLayout:
    """The entry computation's signature, from the module's header line.

    Attributes:
      parameters: one shape per entry parameter.
      results: the leaves of the result shape, in order (a tuple result is
        flattened, as ``XlaCallModule`` returns one tensor per leaf).
      result_is_tuple: whether the entry computation returns a tuple.
    """

    parameters: tuple[ArrayShape, ...]
    results: tuple[ArrayShape, ...]
    result_is_tuple: bool


class _ShapeReader:
    """Reads XLA's shape syntax: ``f32[2,3]{1,0}``, ``(s32[], f32[4]{0})``, ``token[]``."""

    _ARRAY = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\]")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def _skip_space(self) -> None:
        # Whitespace and comments: XLA writes "/*index=5*/" into long tuples.
        while self.pos < len(self.text):
            if self.text[self.pos].isspace():
                self.pos += 1
            elif self.text.startswith("/*", self.pos):
                end = self.text.find("*/", self.pos + 2)
                if end < 0:
                    raise ValueError(f"unterminated comment in {self.text!r}")
                self.pos = end + 2
            else:
                return

    def _skip_braces(self) -> None:
        # Layouts, e.g. "{1,0}" or "{1,0:T(8,128)S(1)}": nothing the call needs.
        self._skip_space()
        if self.pos < len(self.text) and self.text[self.pos] == "{":
            depth = 0
            while self.pos < len(self.text):
                char = self.text[self.pos]
                depth += char == "{"
                depth -= char == "}"
                self.pos += 1
                if depth == 0:
                    return
            raise ValueError(f"unbalanced braces in shape {self.text!r}")

    def expect(self, literal: str) -> None:
        self._skip_space()
        if not self.text.startswith(literal, self.pos):
            raise ValueError(f"expected {literal!r} at {self.text[self.pos:self.pos + 30]!r}")
        self.pos += len(literal)

    def peek(self) -> str:
        self._skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def shape(self) -> list:
        """A shape: an ArrayShape, or a list of shapes for a tuple."""
        if self.peek() == "(":
            self.pos += 1
            elements: list = []
            if self.peek() == ")":
                self.pos += 1
                return elements
            while True:
                elements.append(self.shape())
                if self.peek() == ",":
                    self.pos += 1
                    continue
                self.expect(")")
                return elements
        self._skip_space()
        match = self._ARRAY.match(self.text, self.pos)
        if match is None:
            raise ValueError(f"cannot read a shape at {self.text[self.pos:self.pos + 30]!r}")
        self.pos = match.end()
        self._skip_braces()
        dims = []
        for dim in filter(None, (d.strip() for d in match.group(2).split(","))):
            if not dim.isdigit():
                raise NotImplementedError(f"dynamic dimension {dim!r} is not supported")
            dims.append(int(dim))
        return ArrayShape(match.group(1), tuple(dims))  # type: ignore[return-value]


def _leaves(shape) -> list[ArrayShape]:
    if isinstance(shape, ArrayShape):
        return [shape]
    return [leaf for element in shape for leaf in _leaves(element)]


def entry_layout(text: str) -> EntryLayout:
    """Reads ``entry_computation_layout={(params)->result}`` from the header line.

    Raises:
      ValueError: the header has no entry computation layout.
    """
    header = text.lstrip().split("\n", 1)[0]
    start = header.find("entry_computation_layout={")
    if start < 0:
        raise ValueError("the HloModule header line has no entry_computation_layout")
    reader = _ShapeReader(header[start + len("entry_computation_layout={"):])
    parameters = reader.shape()
    reader.expect("->")
    result = reader.shape()
    reader.expect("}")
    if not isinstance(parameters, list):
        raise ValueError("the entry computation layout has no parameter list")
    for parameter in parameters:
        if not isinstance(parameter, ArrayShape):
            raise NotImplementedError("tuple-shaped entry parameters are not supported")
    return EntryLayout(tuple(parameters), tuple(_leaves(result)), isinstance(result, list))


@dataclasses.dataclass
class _Compiled:
    function: Any  # the tf.function
    layout: EntryLayout


_CACHE_SIZE = 64
_cache: "collections.OrderedDict[tuple[str, str], _Compiled]" = collections.OrderedDict()
_cache_lock = threading.Lock()


def _platform_of_current_device() -> str:
    """The XlaCallModule platform name of the device TensorFlow places ops on now."""
    import tensorflow as tf

    # An eager op lands where a jit-compiled function would: on the GPU when
    # there is one, or wherever an enclosing tf.device() scope says.
    device = tf.DeviceSpec.from_string(tf.zeros(()).device).device_type or "CPU"
    if device == "GPU":
        return "ROCM" if tf.test.is_built_with_rocm() else "CUDA"
    return device  # "CPU" or "TPU"


def _make_function(text: str, platform: str) -> _Compiled:
    import tensorflow as tf
    from tensorflow.compiler.tf2xla.ops import gen_xla_ops

    from exla.bridge import xla as bridge
    from exla.options import strip_xla_flags

    # TensorFlow aborts on exla's flags in XLA_FLAGS when it first compiles.
    strip_xla_flags()
    if "entry_computation_layout={" not in text.lstrip().split("\n", 1)[0]:
        # Hand-written text may omit the layout; XLA's printer always writes it.
        text = bridge.proto_to_text(bridge.text_to_proto(text))
    layout = entry_layout(text)
    artifact = bridge.text_to_portable_artifact(text)
    out_dtypes = [r.tf_dtype for r in layout.results]
    out_shapes = [tf.TensorShape(r.dims) for r in layout.results]

    @tf.function(jit_compile=True, autograph=False)
    def run(*args):
        return gen_xla_ops.xla_call_module(
            args=list(args),
            version=9,  # the serialization version TensorFlow 2.21 reads (DESIGN.md)
            module=artifact,
            Sout=out_shapes,
            Tout=out_dtypes,
            platforms=[platform],
        )

    return _Compiled(run, layout)


def _compiled(text: str, platform: str) -> _Compiled:
    key = (hashlib.sha256(text.encode()).hexdigest(), platform)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    compiled = _make_function(text, platform)
    with _cache_lock:
        _cache[key] = compiled
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return compiled


def _check_arguments(args: list, layout: EntryLayout) -> None:
    if len(args) != len(layout.parameters):
        raise ValueError(
            f"the module takes {len(layout.parameters)} arguments, got {len(args)}")
    for i, (arg, parameter) in enumerate(zip(args, layout.parameters)):
        if arg.dtype != parameter.tf_dtype or tuple(arg.shape) != parameter.dims:
            raise ValueError(
                f"argument {i} is {arg.dtype.name}{list(arg.shape)} but the module's parameter "
                f"{i} is {parameter.element_type}{list(parameter.dims)}")


def call_hlo(text: str, args: Sequence[Any], platform: str | None = None) -> list:
    """Runs an HLO module with TensorFlow's XLA and returns its results.

    Args:
      text: HLO text of the module.
      args: one value per entry parameter (tensors, numpy arrays or anything
        ``tf.convert_to_tensor`` takes), with the parameters' dtypes and shapes.
      platform: ``XlaCallModule``'s platform name, ``"CPU"``, ``"CUDA"``,
        ``"ROCM"`` or ``"TPU"``. Defaults to the device TensorFlow places ops
        on in the current context.

    Returns:
      One ``tf.Tensor`` per leaf of the entry computation's result, in order;
      a single array result gives a list of one tensor.

    Raises:
      ValueError: XLA rejects the module, or the arguments do not match the
        module's parameters.

    The compiled ``tf.function`` is cached per (module text, platform).
    """
    import numpy as np
    import tensorflow as tf

    if platform is None:
        platform = _platform_of_current_device()
    compiled = _compiled(text, platform)
    tensors = []
    for arg, parameter in zip(args, compiled.layout.parameters):
        # Python numbers and lists take the parameter's dtype; arrays and
        # tensors keep theirs, so that a wrong precision is an error, not a
        # silent conversion.
        if isinstance(arg, (int, float, bool, complex, list, tuple)) and not isinstance(arg, np.generic):
            arg = tf.convert_to_tensor(arg, dtype=parameter.tf_dtype)
        tensors.append(tf.convert_to_tensor(arg))
    tensors.extend(tf.convert_to_tensor(a) for a in args[len(tensors):])
    _check_arguments(tensors, compiled.layout)
    results = compiled.function(*tensors)
    return list(results)
