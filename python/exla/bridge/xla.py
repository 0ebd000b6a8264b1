"""The one module of exla that uses jaxlib's private APIs.

jaxlib is XLA's own Python distribution, so it has XLA's HLO parser and printer,
the HLO -> StableHLO converter and a CPU compiler whose buffer assignment gives
XLA's planned memory. Some of these are semi-public (``jax.extend.mlir``,
``jax.errors``); the rest live in private modules that move between releases
(``HloModule`` is in ``jax._src.lib._jax`` up to jaxlib 0.9 and in
``jax._src.lib.hlo`` from 0.10). Every use is here, behind :func:`_xla`, which
finds each piece by what the installed jaxlib offers (:data:`_FEATURES`), not
by its version number, and fails once, naming the version and the missing
feature, on a jaxlib that lacks one.

jax, jaxlib, numpy and TensorFlow are imported on first use: importing exla
loads none of them (numpy alone takes longer to import than exla).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import logging
import threading
from typing import Any, Iterator

from exla import _core, _fault_injection
from exla.bridge import versions
from exla.options import Options, strip_xla_flags

__all__ = [
    "CpuExecutable",
    "MemoryStats",
    "compile_cpu",
    "proto_to_text",
    "text_to_proto",
    "text_to_stablehlo",
    "stablehlo_to_text",
    "text_to_portable_artifact",
    "verify",
    "verify_without_exla",
    "planned_memory",
    "memory_stats_of",
    "jaxlib_version",
    "enable_x64",
]

_log = logging.getLogger("exla")

# Each piece of jaxlib exla uses: where to look, in order (the first place
# that has it wins). Public or semi-public places come first.
_FEATURES: dict[str, tuple[tuple[str, str], ...]] = {
    "Error": (("jax.errors", "JaxRuntimeError"), ("jax._src.lib.xla_client", "XlaRuntimeError")),
    "HloModule": (("jax._src.lib.hlo", "HloModule"), ("jax._src.lib._jax", "HloModule")),
    "HloPrintOptions": (("jax._src.lib.hlo", "HloPrintOptions"),
                        ("jax._src.lib._jax", "HloPrintOptions")),
    "hlo_module_from_text": (("jax._src.lib.hlo", "hlo_module_from_text"),
                             ("jax._src.lib._jax", "hlo_module_from_text")),
    "XlaComputation": (("jax._src.lib.xla_client", "XlaComputation"),
                       ("jax._src.lib.hlo", "XlaComputation")),
    "DeviceList": (("jax._src.lib.xla_client", "DeviceList"),),
    "CompileOptions": (("jax._src.lib.xla_client", "CompileOptions"),),
    "DeviceAssignment": (("jax._src.lib.xla_client", "DeviceAssignment"),),
    "make_cpu_client": (("jax._src.lib.xla_client", "make_cpu_client"),),
    "hlo_to_stablehlo": (("jax.extend.mlir", "hlo_to_stablehlo"),),
    "serialize_portable_artifact": (("jax.extend.mlir", "serialize_portable_artifact"),),
    "refine_polymorphic_shapes": (("jax.extend.mlir", "refine_polymorphic_shapes"),),
    "mlir_module_to_xla_computation": (("jax._src.lib._jax", "mlir.mlir_module_to_xla_computation"),),
    "stablehlo_dialect": (("jax.extend.mlir.dialects.stablehlo", ""),),
    "mlir_ir": (("jax.extend.mlir.ir", ""),),
    # Only for verify_without_exla (exla's tests): XLA's importer emits mhlo.
    "make_ir_context": (("jax._src.interpreters.mlir", "make_ir_context"),),
    "mhlo_dialect": (("jaxlib.mlir.dialects.mhlo", ""),),
}
_OPTIONAL = frozenset({"make_ir_context", "mhlo_dialect"})
"""Pieces only exla's own tests use: missing, they fail where used, not at load."""


@dataclasses.dataclass(frozen=True)
class MemoryStats:
    """XLA's buffer assignment for a compiled module, in bytes.

    Attributes:
      temp_bytes: scratch memory of intermediate values: the figure that
        decides whether a program runs out of memory.
      argument_bytes: memory of the entry parameters.
      output_bytes: memory of the results (including tuple index tables).
      alias_bytes: output memory that aliases parameters (donated buffers).
      generated_code_bytes: size of the generated code (0 on the CPU).
      constant_bytes: the literals the executable holds (buffer assignment's
        constant allocations), which none of the figures above include.
      platform: the backend whose compiler planned these figures ("cpu",
        "cuda", ...).
    """

    temp_bytes: int
    argument_bytes: int
    output_bytes: int
    alias_bytes: int
    generated_code_bytes: int
    constant_bytes: int = 0
    platform: str = "cpu"

    @property
    def total_bytes(self) -> int:
        """Arguments, outputs not aliased to arguments, temporaries and constants:
        what the program makes the process hold."""
        return (self.temp_bytes + self.argument_bytes + self.output_bytes - self.alias_bytes
                + self.constant_bytes)


class _Xla:
    """The pieces of jaxlib that exla uses, found once (attributes named as in :data:`_FEATURES`)."""

    def __init__(self, pieces: dict[str, Any], version: str) -> None:
        for name, piece in pieces.items():
            setattr(self, name, piece)
        self.version = version
        self._client = None
        self._partitioned_clients: dict[int, Any] = {}
        self._lock = threading.Lock()

    def cpu_client(self, devices: int = 1) -> Any:
        # The only global state of the bridge: creating a client is cheap but
        # it owns a thread pool, so one is kept (and one per device count that
        # sharded modules need). exla's own clients, not jax's backend, so
        # that JAX_PLATFORMS or jax's configuration cannot change them.
        with self._lock:
            if devices <= 1:
                if self._client is None:
                    self._client = self.make_cpu_client()
                return self._client
            if devices not in self._partitioned_clients:
                self._partitioned_clients[devices] = self.make_cpu_client(num_devices=devices)
            return self._partitioned_clients[devices]


def _find(module_name: str, path: str) -> Any:
    """``module_name``'s attribute ``path`` (both dotted; "" for the module itself), or None.

    Some of jaxlib's modules are attributes of their parent rather than files
    (``jax._src.lib._jax`` is jaxlib's extension, bound as a name), so the
    longest importable prefix is imported and the rest followed as attributes.
    """
    parts = module_name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:] + (path.split(".") if path else []):
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj
    return None


@contextlib.contextmanager
def enable_x64() -> Iterator[None]:
    """64-bit types in JAX for the length of a ``with`` block, on every supported jax.

    jax >= 0.8 offers ``jax.enable_x64(True)`` as a context manager; 0.9
    removed ``jax.experimental.enable_x64``, the only form jax 0.7 has.
    """
    import jax  # on first use (module doc), as every jax, numpy, TensorFlow import here

    state = getattr(jax, "enable_x64", None)
    if state is not None:
        with state(True):
            yield
        return
    from jax.experimental import enable_x64 as experimental_enable_x64

    with experimental_enable_x64():
        yield


def jaxlib_version() -> str:
    """The installed jaxlib's version ("" if it cannot be read)."""
    from jax._src import lib as jax_lib

    return getattr(jax_lib, "version_str", "") or ".".join(
        str(v) for v in getattr(jax_lib, "version", ()))


@functools.lru_cache(maxsize=None)
def _xla() -> _Xla:
    """Imports jaxlib, checks its version and finds the pieces exla uses.

    Raises:
      ImportError: jax/jaxlib are missing, outside the supported range
        (:class:`exla.bridge.versions.UnsupportedVersionError`), or lack a
        piece exla needs (named, with the version).
    """
    # jaxlib reads XLA_FLAGS (and aborts the process on a flag it does not know,
    # such as exla's) when it first needs XLA's debug options, so exla's flags
    # must leave the environment before anything below runs.
    strip_xla_flags()
    try:
        import jax  # noqa: F401 - jaxlib's private modules need jax imported first
    except ImportError as e:
        raise ImportError(
            "exla's XLA bridge needs jax and jaxlib (pip install 'exla[jax]'); importing them "
            f"failed: {e}") from e
    version = jaxlib_version()
    versions.check("jaxlib", version)
    pieces, missing = {}, []
    for name, places in _FEATURES.items():
        found = next((p for p in (_find(m, a) for m, a in places) if p is not None), None)
        if found is None and name not in _OPTIONAL:
            missing.append(f"{name} (looked for " + ", ".join(f"{m}.{a}" for m, a in places) + ")")
        pieces[name] = found
    if missing:
        raise ImportError(f"jaxlib {version or '(unknown version)'} lacks what exla needs: "
                          + "; ".join(missing))
    return _Xla(pieces, version)


def _message(error: Exception) -> str:
    # XlaRuntimeError messages start with the status code ("INVALID_ARGUMENT: ").
    text = str(error)
    for prefix in ("INVALID_ARGUMENT: ", "UNKNOWN: ", "INTERNAL: "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _print_options(xla: _Xla, short: bool) -> Any:
    if short:
        options = xla.HloPrintOptions.short_parsable()
        # short_parsable() drops backend configs and control dependencies, which
        # can change what a program means (custom-call configs, ordering of
        # side effects); exla must carry them through.
        options.print_backend_config = True
        options.print_control_dependencies = True
    else:
        options = xla.HloPrintOptions()
    # Never elide constants as "{...}": the text must be the whole program.
    options.print_large_constants = True
    return options


def proto_to_text(proto: bytes, *, short: bool = True) -> str:
    """Prints a serialized ``HloModuleProto`` as parseable HLO text.

    Args:
      proto: a serialized ``xla.HloModuleProto``, e.g. from TensorFlow's
        ``f.experimental_get_compiler_ir(*args)(stage='hlo_serialized')``.
      short: XLA's short parsable form (names without ``%``, no metadata, no
        computation signatures). ``False`` gives XLA's long form (metadata
        included). Both contain every constant in full, backend configs and
        control dependencies.

    Raises:
      ValueError: ``proto`` is not a valid ``HloModuleProto``.
    """
    xla = _xla()
    if not isinstance(proto, (bytes, bytearray, memoryview)):
        raise TypeError(f"proto must be bytes, got {type(proto).__name__}")
    try:
        module = xla.XlaComputation(bytes(proto)).get_hlo_module()
        return module.to_string(_print_options(xla, short))
    except xla.Error as e:
        raise ValueError(f"not a valid HloModuleProto: {_message(e)}") from None


def _parse(text: str) -> Any:
    xla = _xla()
    if not isinstance(text, str):
        raise TypeError(f"HLO text must be str, got {type(text).__name__}")
    # XLA's text parser CHECK-fails, killing the process, on some malformed
    # modules (a parameter number out of range); exla's verifier turns those
    # into a ValueError with line and column first. Syntax is XLA's to judge:
    # where exla's own parser cannot read the text (it wants one instruction
    # per line, XLA does not), XLA's parser decides and gives its message.
    try:
        _core.verify(text)
    except ValueError as e:
        if str(e).startswith("invalid HLO module"):
            raise
    try:
        return xla.hlo_module_from_text(text)
    except xla.Error as e:
        raise ValueError(_message(e)) from None


def text_to_proto(text: str) -> bytes:
    """Parses HLO text with XLA's parser.

    XLA's parser checks the syntax, names, operand counts and attributes, but
    not that the shapes are consistent (``f32[3] add(f32[2], f32[2])`` passes);
    :func:`verify` checks those too.

    Returns:
      The serialized ``HloModuleProto``.

    Raises:
      ValueError: exla's verifier (structure, references, parameter numbers,
        shapes exla can infer; line and column) or XLA's parser rejects the
        text.
    """
    return _parse(text).as_serialized_hlo_module_proto()


def _without_copies(text: str) -> str:
    """The module with ``copy`` instructions removed (C++ pass ``remove-copies``).

    TensorFlow puts copies around results that alias variables. XLA's HLO ->
    StableHLO converter turns them into ``mhlo.copy``, which has no StableHLO
    equivalent, so serializing the artifact would fail. A copy is the identity
    on values (StableHLO has no layouts), so removing it changes nothing.
    """
    if "copy(" not in text:
        return text
    return _core.optimize(text, Options(passes=("remove-copies",))).text


def _drop_attribute(line: str, key: str) -> str:
    """``line`` without its ``, key={...}`` attribute (braces and quotes matched)."""
    start = line.find(f", {key}={{")
    if start < 0:
        return line
    depth, quoted, i = 0, False, start + len(key) + 3
    while i < len(line):
        c = line[i]
        if c == '"' and line[i - 1] != "\\":
            quoted = not quoted
        elif not quoted and c == "{":
            depth += 1
        elif not quoted and c == "}":
            depth -= 1
            if depth == 0:
                return line[:start] + line[i + 1:]
        i += 1
    return line


def _without_gspmd_result_sharding(text: str) -> str:
    """A module in Shardy's round-trip form without the GSPMD copy of its result sharding.

    A module JAX lowered for Shardy keeps its meshes in the header
    (``xla.sdy.meshes``) and its result shardings in
    ``xla.sdy.FuncResultSharding`` custom calls; XLA's StableHLO -> HLO
    converter also writes them in GSPMD's form on the entry's root. Converted
    back, that copy becomes GSPMD ``mhlo.sharding`` attributes on the results,
    which make jaxlib turn Shardy off for the whole module, and XLA's GSPMD
    partitioner then fails on the Shardy custom calls. The Shardy form says
    it all, so the copy goes.
    """
    if "xla.sdy.meshes" not in text.lstrip().split("\n", 1)[0]:
        return text
    lines = text.split("\n")
    in_entry = False
    for i, line in enumerate(lines):
        if line.startswith("ENTRY "):
            in_entry = True
        elif in_entry and line.lstrip().startswith("ROOT "):
            lines[i] = _drop_attribute(line, "sharding")
            break
    return "\n".join(lines)


def text_to_stablehlo(text: str) -> bytes:
    """Converts HLO text to StableHLO MLIR bytecode (XLA's own converter).

    ``copy`` instructions are removed first (see :func:`_without_copies`), and
    so is the GSPMD copy of the result sharding of a module in Shardy's form
    (see :func:`_without_gspmd_result_sharding`).
    """
    if _fault_injection.failing("stablehlo"):
        raise RuntimeError(_fault_injection.message("stablehlo"))
    xla = _xla()
    proto = text_to_proto(_without_gspmd_result_sharding(_without_copies(text)))
    try:
        return xla.hlo_to_stablehlo(proto)
    except xla.Error as e:
        raise ValueError(f"cannot convert the module to StableHLO: {_message(e)}") from None


def stablehlo_to_text(module: bytes, *, inline_calls: bool = True) -> str:
    """Converts a StableHLO module (MLIR bytecode or text as bytes) to HLO text.

    The inverse of :func:`text_to_stablehlo`, for the programs JAX hands to
    XLA: parameters stay flat (no tuple), several results become a tuple root,
    donated parameters become the module's ``input_output_alias``.

    Args:
      module: the module, as ``jax``'s ``module_to_bytecode`` gives it.
      inline_calls: inline the module's function calls first. JAX lowers every
        nested ``jax.jit`` (``jax.nn.relu`` is one) to a ``func.call``, which
        becomes an HLO ``call`` that exla's passes do not look into; XLA inlines
        them as its first step anyway. Done with jaxlib's StableHLO shape
        refinement pipeline, whose first pass is MLIR's inliner; if it rejects
        the module, the calls stay.

    Raises:
      ValueError: the module is not valid StableHLO.
    """
    xla = _xla()
    if isinstance(module, str):
        module = module.encode()
    if inline_calls:
        try:
            module = xla.refine_polymorphic_shapes(
                module, enable_shape_assertions=False, validate_static_shapes=True)
        except xla.Error as e:
            _log.debug("exla: calls left in the module (%s)", _message(e))
    try:
        computation = xla.mlir_module_to_xla_computation(
            module, use_tuple_args=False, return_tuple=False)
        return computation.get_hlo_module().to_string(_print_options(xla, True))
    except xla.Error as e:
        raise ValueError(f"cannot convert the StableHLO module to HLO: {_message(e)}") from None


@functools.lru_cache(maxsize=1)
def _tensorflow_stablehlo_version() -> str:
    # The StableHLO version of the TensorFlow that will deserialize the
    # artifact; importing TensorFlow is slow, hence only here.
    from tensorflow.compiler.mlir.stablehlo import stablehlo

    return stablehlo.get_current_version()


def text_to_portable_artifact(text: str, target: str | None = None) -> bytes:
    """Serializes HLO text as a StableHLO portable artifact.

    This is the form TensorFlow's ``XlaCallModule`` op executes.

    Args:
      text: HLO text.
      target: the StableHLO version to write, e.g. ``"1.13.7"``. Defaults to
        the installed TensorFlow's version
        (``tensorflow.compiler.mlir.stablehlo.stablehlo.get_current_version()``).

    Raises:
      ValueError: XLA rejects the text or the target version.
    """
    xla = _xla()
    bytecode = text_to_stablehlo(text)
    if target is None:
        target = _tensorflow_stablehlo_version()
    try:
        return xla.serialize_portable_artifact(bytecode, target)
    except xla.Error as e:
        raise ValueError(
            f"cannot serialize a StableHLO artifact for version {target!r}: {_message(e)}") from None


def _verifier_message(error: Exception) -> str:
    # MLIR reports "error:" lines followed by notes and a generic line about
    # StableHLO versions; the errors are what matter.
    lines = [line.split("error:", 1)[1].strip() for line in _message(error).splitlines()
             if "error:" in line and "Failed to parse using StableHLO" not in line]
    return "; ".join(lines) or _message(error)


def verify(text: str) -> None:
    """Checks that an HLO module is valid, shapes included.

    XLA's parser (:func:`text_to_proto`) does not infer shapes; this converts
    the module to StableHLO and runs the StableHLO verifier, which checks every
    operation's result type against its operands, as compiling it would.

    Raises:
      ValueError: the module is malformed or ill-typed; the message names the
        offending instruction, e.g. ``loc("a"): 'stablehlo.add' op requires
        the same shape for all operands and results``.
    """
    xla = _xla()
    bytecode = text_to_stablehlo(text)
    # Serializing at jaxlib's own StableHLO version is no conversion, only a
    # parse of the bytecode with verification.
    target = xla.stablehlo_dialect.get_current_version()
    try:
        xla.serialize_portable_artifact(bytecode, target)
    except xla.Error as e:
        raise ValueError(f"invalid module: {_verifier_message(e)}") from None


@functools.lru_cache(maxsize=1)
def _mlir_context() -> Any:
    """An MLIR context with the dialects XLA's HLO importer produces."""
    xla = _xla()
    if xla.make_ir_context is None or xla.mhlo_dialect is None:
        raise ImportError(f"jaxlib {xla.version} has no MLIR context with the mhlo dialect "
                          "(jax._src.interpreters.mlir.make_ir_context, jaxlib.mlir.dialects.mhlo)")
    context = xla.make_ir_context()
    xla.mhlo_dialect.register_mhlo_dialect(context)
    return context


def verify_without_exla(text: str) -> None:
    """XLA's own verdict on HLO text, exla's verifier not consulted.

    :func:`text_to_proto` and :func:`verify` run exla's verifier first (XLA's
    parser aborts the process on some malformed modules), so they cannot
    tell whether exla and XLA agree. This runs XLA alone: its HLO parser
    (``hlo_module_from_text``: syntax, names, operand counts, attributes),
    its HLO -> StableHLO importer, and the MLIR verifier of the imported
    module (every operation's types against its operands). ``copy`` stays
    (``mhlo.copy``, verified as it is).

    XLA's parser CHECK-fails on some malformed modules (a parameter number
    out of range), killing the process: call this in a process that may die.

    Raises:
      ValueError: XLA rejects the text; the message is XLA's.
    """
    xla = _xla()
    if not isinstance(text, str):
        raise TypeError(f"HLO text must be str, got {type(text).__name__}")
    try:
        proto = xla.hlo_module_from_text(text).as_serialized_hlo_module_proto()
    except xla.Error as e:
        raise ValueError(f"XLA's parser: {_message(e)}") from None
    try:
        bytecode = xla.hlo_to_stablehlo(proto)
    except xla.Error as e:
        raise ValueError(f"XLA's HLO importer: {_verifier_message(e)}") from None
    ir = xla.mlir_ir
    with _mlir_context():
        try:
            module = ir.Module.parse(bytecode)
            if not module.operation.verify():  # parse verifies; be explicit
                raise ValueError("MLIR verifier: the module does not verify")
        except ir.MLIRError as e:
            raise ValueError(f"MLIR verifier: {e}") from None


def _partitioned_options(xla: _Xla, text: str, devices: int) -> Any:
    """Compile options for a sharded module: XLA's SPMD partitioner over ``devices``.

    As JAX compiles it: one replica, ``devices`` partitions, Shardy when the
    module carries Shardy's meshes (GSPMD otherwise), and results whose
    sharding the module leaves open decided by the partitioner.
    """
    import numpy as np

    options = xla.CompileOptions()
    options.num_replicas = 1
    options.num_partitions = devices
    build = options.executable_build_options
    build.use_spmd_partitioning = True
    header = text.lstrip().split("\n", 1)[0]
    build.use_shardy_partitioner = "xla.sdy.meshes" in header
    build.allow_spmd_sharding_propagation_to_output = [True]
    options.device_assignment = xla.DeviceAssignment.create(
        np.arange(devices).reshape(1, devices))
    return options


_PLANNING_LLVM_LEVEL = 0
"""LLVM's optimisation level when compiling only for XLA's figures (0: none).

Most of a CPU compile is LLVM optimising the generated kernels, which comes
after buffer assignment and cannot change it: over the memory model's corpus
of 150 modules both levels gave the same figures (2026-11-27, jaxlib 0.7.1),
and level 0 compiled them in 113 s against 278 s. Programs that run are
compiled at XLA's default level.
"""


def planned_memory(text: str, *, devices: int | None = None, client: Any = None) -> MemoryStats:
    """XLA's planned memory for an HLO module, from compiling it for the CPU.

    The module is compiled (not run) with jaxlib's CPU client; the figures are
    XLA's buffer assignment after its optimisations (fusion, buffer reuse), so
    ``temp_bytes`` is the scratch memory the program would need. They are
    deterministic and need no GPU; a GPU build plans somewhat differently.
    LLVM's optimisations are left out (`_PLANNING_LLVM_LEVEL`): XLA assigns
    buffers on the HLO module before LLVM sees it, so the figures are those
    of a full compile (``generated_code_bytes`` aside), in less than half its time.

    A sharded module (``sharding=`` annotations, as JAX hands a sharded
    ``jax.jit`` to XLA) is compiled for the devices its shardings name, with
    XLA's SPMD partitioner, and the figures are those of one device's
    program: what each device holds.

    Args:
      text: HLO text.
      devices: the devices to partition the module over; None: as many as
        its shardings name (1 for a module without shardings).
      client: compile with this PJRT client instead (e.g. jax's GPU backend,
        ``jax.extend.backend.get_backend()``): the figures are then that
        backend's, its platform named in them. None: exla's own CPU client.

    Raises:
      ValueError: XLA rejects the text or the module is ill-typed.
      RuntimeError: XLA fails to compile the module.
    """
    xla = _xla()
    if devices is None:
        summary = _core.module_summary(text)
        devices = summary.devices if summary.sharded else 1
    bytecode = text_to_stablehlo(text)
    platform = "cpu" if client is None else client.platform
    client = xla.cpu_client(devices) if client is None else client
    device_list = xla.DeviceList(tuple(client.devices()[:devices]))
    options = xla.CompileOptions() if devices <= 1 else _partitioned_options(xla, text, devices)
    if platform == "cpu":
        options.executable_build_options.debug_options.xla_backend_optimization_level = \
            _PLANNING_LLVM_LEVEL
    try:
        executable = client.compile_and_load(bytecode, device_list, options)
    except xla.Error as e:
        if "Failed to parse using StableHLO" in str(e):  # the verifier, not the compiler
            raise ValueError(f"invalid module: {_verifier_message(e)}") from None
        raise RuntimeError(f"XLA could not compile the module for the {platform}: "
                           f"{_message(e)}") from None
    return memory_stats_of(executable.get_compiled_memory_stats(), platform)


def _memory_stats(executable: Any) -> MemoryStats:
    return memory_stats_of(executable.get_compiled_memory_stats(), "cpu")


def memory_stats_of(stats: Any, platform: str) -> MemoryStats:
    """:class:`MemoryStats` of XLA's ``CompiledMemoryStats``.

    ``stats`` is what a loaded executable's ``get_compiled_memory_stats()`` or
    a ``jax.stages.Compiled``'s ``memory_analysis()`` returns, for whichever
    backend compiled it (``platform``: ``"cpu"``, ``"cuda"``, ...).
    """
    proto = getattr(stats, "serialized_buffer_assignment_proto", b"") or b""
    return MemoryStats(
        temp_bytes=int(stats.temp_size_in_bytes),
        argument_bytes=int(stats.argument_size_in_bytes),
        output_bytes=int(stats.output_size_in_bytes),
        alias_bytes=int(stats.alias_size_in_bytes),
        generated_code_bytes=int(stats.generated_code_size_in_bytes),
        constant_bytes=constant_bytes(bytes(proto)),
        platform=platform,
    )


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[i]
        value |= (byte & 0x7F) << shift
        i += 1
        if byte < 0x80:
            return value, i
        shift += 7


def _fields(data: bytes):
    """``(field number, wire type, value)`` of a protobuf message's top level."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 2:
            length, i = _varint(data, i)
            value, i = data[i:i + length], i + length
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f"unexpected protobuf wire type {wire}")
        yield number, wire, value


# Field numbers of xla/service/hlo.proto: BufferAssignmentProto.buffer_allocations,
# BufferAllocationProto.size and .is_constant.
_ALLOCATIONS, _SIZE, _IS_CONSTANT = 3, 2, 12


def constant_bytes(buffer_assignment: bytes) -> int:
    """Bytes of the constant allocations of a serialized ``BufferAssignmentProto``.

    Read from the wire format directly: the proto's Python classes ship only
    with TensorFlow, whose import costs seconds that a JAX user should not pay.
    """
    total = 0
    for number, wire, allocation in _fields(buffer_assignment):
        if number != _ALLOCATIONS or wire != 2:
            continue
        fields = {n: v for n, w, v in _fields(allocation) if w == 0}
        if fields.get(_IS_CONSTANT):
            total += fields.get(_SIZE, 0)
    return total


class CpuExecutable:
    """An HLO module compiled for the CPU by jaxlib's client (see :func:`compile_cpu`)."""

    def __init__(self, executable: Any, client: Any) -> None:
        self._executable = executable
        self._client = client

    def memory_stats(self) -> MemoryStats:
        """XLA's buffer assignment of the compiled module (see :func:`planned_memory`)."""
        return _memory_stats(self._executable)

    def put(self, args: Any) -> list:
        """The arrays ``args`` copied to the CPU device, ready for :meth:`run`."""
        device = self._client.devices()[0]
        if hasattr(self._client, "buffer_from_pyval"):  # jaxlib <= 0.10
            return [self._client.buffer_from_pyval(a, device) for a in args]
        # jaxlib >= 0.11 creates arrays through jax alone; 64-bit types stay
        # 64-bit only with x64 on (jax would make f64 arrays f32 otherwise).
        import jax
        import numpy as np

        with enable_x64():
            return [jax.device_put(np.asarray(a), device) for a in args]

    def run(self, buffers: list) -> list:
        """Runs the module on arrays from :meth:`put` and waits for its results,
        which stay on the device: a timing of this call is the program's alone."""
        results = self._executable.execute_sharded(buffers)
        outputs = [leaf[0] for leaf in results.disassemble_into_single_device_arrays()]
        for output in outputs:
            output.block_until_ready()
        return outputs

    def __call__(self, *args: Any) -> list:
        """Runs the module on NumPy arrays; returns its results as NumPy arrays."""
        import numpy as np

        return [np.asarray(o) for o in self.run(self.put(args))]


def compile_cpu(text: str) -> CpuExecutable:
    """Compiles an HLO module (one device) for the CPU with XLA's full pipeline.

    Used to run and time modules (the cost model's calibration and its
    comparison with XLA); exla's own execution goes through jax or
    TensorFlow.

    Raises:
      ValueError: XLA rejects the text or the module is ill-typed.
      RuntimeError: XLA fails to compile the module.
    """
    xla = _xla()
    client = xla.cpu_client()
    devices = xla.DeviceList(tuple(client.devices()[:1]))
    try:
        executable = client.compile_and_load(text_to_stablehlo(text), devices,
                                             xla.CompileOptions())
    except xla.Error as e:
        if "Failed to parse using StableHLO" in str(e):
            raise ValueError(f"invalid module: {_verifier_message(e)}") from None
        raise RuntimeError(f"XLA could not compile the module for the CPU: {_message(e)}") from None
    return CpuExecutable(executable, client)
