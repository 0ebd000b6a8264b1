"""The one module of exla that uses JAX's private API (``jax._src``).

Every program ``jax.jit`` compiles, including the small helper programs JAX
compiles for eager operations, passes through one function,
``jax._src.compiler.backend_compile_and_load(backend, module, executable_devices,
options, host_callbacks)``, with ``module`` the StableHLO ``ir.Module`` about to
be handed to XLA. That is the one place where an unchanged JAX script can be
routed through exla, so this module replaces that function by a wrapper that
asks a :class:`CompileHook` whether to compile a rewritten module instead.

Everything else (jax's caches, calling convention, donation, the executable
that runs) stays JAX's own: a program exla leaves unchanged is compiled from
JAX's own module, and nothing at all is added to a call.

The version (:mod:`exla.bridge.versions`) and the layout are checked once, at
first use: a release outside the supported range, or one whose compile step
does not look as described, fails with one clear message naming it, instead
of an AttributeError deep inside JAX or a silent fallback on every program.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
from typing import Any, Protocol, Sequence

from exla.bridge import versions, xla
from exla.bridge.xla import enable_x64 as enable_x64  # for JAX code: one definition
from exla.options import strip_xla_flags

__all__ = ["CompileHook", "Program", "install_compile_hook", "uninstall_compile_hook",
           "hook_installed", "lowered_hlo_text", "jax_version", "check_jax", "enable_x64"]

_log = logging.getLogger("exla")

_COMPILE_PARAMETERS = ("backend", "module", "executable_devices", "options", "host_callbacks")


class _Jax:
    """The pieces of ``jax._src`` that exla uses, found once."""

    def __init__(self, compiler: Any, mlir: Any, ir: Any, version: str) -> None:
        self.compiler = compiler
        self.mlir = mlir
        self.ir = ir
        self.version = version


def check_jax() -> str:
    """Checks that the installed jax is supported and offers what exla hooks; returns its version.

    Raises:
      ImportError: as :func:`_jax` (cached: cheap after the first call).
    """
    return _jax().version


def jax_version() -> str:
    """The installed jax's version (imports jax)."""
    import jax  # on first use, as every jax import here: exla imports without jax

    return getattr(jax, "__version__", "")


@functools.lru_cache(maxsize=None)
def _jax() -> _Jax:
    """Imports jax, checks its version and the private API exla needs, and returns it.

    Raises:
      ImportError: jax is missing, outside the supported range
        (:class:`exla.bridge.versions.UnsupportedVersionError`), or its
        compile step differs from what exla hooks (named, with the version).
    """
    # jaxlib aborts the process on a flag in XLA_FLAGS it does not know, such
    # as exla's: they must leave the environment before jax starts a backend.
    strip_xla_flags()
    try:
        import jax.extend.mlir.ir as ir
        from jax._src import compiler
        from jax._src.interpreters import mlir
    except ImportError as e:
        raise ImportError("exla's JAX support needs jax and jaxlib (pip install 'exla[jax]'); "
                          f"importing them failed: {e}") from e
    version = jax_version()
    versions.check("jax", version)
    problems = []
    target = getattr(compiler, "backend_compile_and_load", None)
    if target is None:
        problems.append("jax._src.compiler.backend_compile_and_load is missing")
    else:
        parameters = tuple(inspect.signature(inspect.unwrap(target)).parameters)
        if parameters != _COMPILE_PARAMETERS:
            problems.append(f"jax._src.compiler.backend_compile_and_load takes {parameters}, "
                            f"not {_COMPILE_PARAMETERS}")
    for owner, name in ((mlir, "module_to_bytecode"), (ir, "Module"), (ir, "StringAttr")):
        if not hasattr(owner, name):
            problems.append(f"{owner.__name__}.{name} is missing")
    if problems:
        raise ImportError(f"jax {version or '(unknown version)'} does not offer the compile step "
                          f"exla hooks: {'; '.join(problems)}")
    return _Jax(compiler, mlir, ir, version)


class Program:
    """A program JAX is about to compile, as the hook sees it."""

    def __init__(self, module: Any, executable_devices: Sequence[Any], host_callbacks: Sequence[Any],
                 backend: Any = None, options: Any = None) -> None:
        self._module = module
        self._devices = executable_devices
        self._backend = backend
        self._options = options
        self.num_devices = len(executable_devices)
        self.has_host_callbacks = bool(host_callbacks)

    @property
    def platform(self) -> str:
        """The backend JAX compiles this program for ("cpu", "cuda", "rocm", "tpu"...)."""
        return getattr(self._backend, "platform", "cpu")

    def planned_memory(self, text: str) -> xla.MemoryStats:
        """XLA's buffer assignment of HLO ``text`` compiled as this program
        would be: by its backend, for its devices, with its compile options
        (the executable is not run)."""
        executable = _original(self._backend, self.module_from_text(text), self._devices,
                               self._options, [])
        return xla.memory_stats_of(executable.get_compiled_memory_stats(), self.platform)

    @functools.cached_property
    def name(self) -> str:
        """The module's name, e.g. ``jit_f`` for ``jax.jit(f)``."""
        ir = _jax().ir
        return ir.StringAttr(self._module.operation.attributes["sym_name"]).value

    @functools.cached_property
    def function_names(self) -> tuple[str, ...]:
        """The names of the module's functions (``main`` and nested ``jax.jit`` calls)."""
        ir = _jax().ir
        names = []
        for op in self._module.body.operations:
            if "sym_name" in op.attributes:
                names.append(ir.StringAttr(op.attributes["sym_name"]).value)
        return tuple(names)

    def hlo_text(self) -> str:
        """The module as HLO text (XLA's StableHLO -> HLO converter)."""
        return xla.stablehlo_to_text(_jax().mlir.module_to_bytecode(self._module))

    def module_from_text(self, text: str) -> Any:
        """An ``ir.Module`` of HLO text, in the context of JAX's module."""
        bytecode = xla.text_to_stablehlo(text)
        with self._module.context:
            return _jax().ir.Module.parse(bytecode)


def lowered_hlo_text(lowered: Any) -> str:
    """HLO text of a ``jax.stages.Lowered``, exactly as the compile hook sees it.

    Unlike ``lowered.as_text(dialect="hlo")``, nested ``jax.jit`` calls are
    inlined (see :func:`exla.bridge.xla.stablehlo_to_text`).
    """
    return xla.stablehlo_to_text(_jax().mlir.module_to_bytecode(lowered.compiler_ir("stablehlo")))


class CompileHook(Protocol):
    """What decides, for each program JAX compiles, whether exla rewrites it."""

    def rewrite(self, program: Program) -> str | None:
        """HLO text to compile instead of ``program``, or None to compile it unchanged."""

    def compile_failed(self, program: Program, error: Exception) -> None:
        """The rewritten module failed to convert or compile: raise, or return to fall back."""

    def compiled(self, program: Program) -> None:
        """The rewritten module compiled: JAX runs its executable from now on."""


_lock = threading.Lock()
_hook: CompileHook | None = None
_original: Any = None


def _compile_and_load(backend: Any, module: Any, executable_devices: Any, options: Any,
                      host_callbacks: Sequence[Any]) -> Any:
    hook = _hook
    if hook is not None:
        program = Program(module, executable_devices, host_callbacks, backend, options)
        text = hook.rewrite(program)
        if text is not None:
            try:
                rewritten = program.module_from_text(text)
                executable = _original(backend, rewritten, executable_devices, options,
                                       host_callbacks)
            except Exception as error:  # noqa: BLE001 - the hook raises or falls back
                hook.compile_failed(program, error)
            else:
                hook.compiled(program)
                return executable
    return _original(backend, module, executable_devices, options, host_callbacks)


def install_compile_hook(hook: CompileHook) -> None:
    """Routes every compilation of JAX through ``hook`` (replacing an earlier hook).

    Raises:
      ImportError: jax is missing or not the release this bridge supports.
    """
    global _hook, _original
    compiler = _jax().compiler
    with _lock:
        _hook = hook
        if compiler.backend_compile_and_load is not _compile_and_load:
            _original = compiler.backend_compile_and_load
            compiler.backend_compile_and_load = _compile_and_load


def uninstall_compile_hook() -> None:
    """Restores JAX's own compilation."""
    global _hook
    with _lock:
        _hook = None
        if _original is not None:
            _jax().compiler.backend_compile_and_load = _original


def hook_installed() -> CompileHook | None:
    """The hook in place, if any."""
    return _hook
