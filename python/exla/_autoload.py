"""exla without code changes: ``XLA_FLAGS="--xla_tensor_size_threshold=1GB" python script.py``.

pip installs ``exla-autoload.pth`` into site-packages. Python runs its single
line at start-up; the line only checks the environment and imports this module
when exla's flags are present (``--xla_tensor_*``, ``--xla_memory_limit`` or
``--exla_*`` in ``XLA_FLAGS``, or ``EXLA_FLAGS``) and ``EXLA_DISABLE`` is not a
true value (the line cannot import anything, so it only recognises
``1``/``true``/``yes``/``on``;
:func:`install` reads ``EXLA_DISABLE`` again with exla's boolean parser,
:func:`exla.options.parse_bool`). :func:`install` then

1. removes exla's flags from ``XLA_FLAGS`` before TensorFlow or jaxlib read it
   (both abort the process on a flag they do not know), keeping XLA's own
   flags, and moves them to ``EXLA_FLAGS`` so child processes inherit them;
2. installs an import hook: when the script imports TensorFlow, every
   ``tf.function(jit_compile=True)`` is routed through exla
   (:mod:`exla.tensorflow.patch`); when it imports jax, every program ``jax.jit``
   compiles (:mod:`exla.jax.compile_hook`). Until then exla costs nothing more.

A malformed or unknown exla flag (``--xla_tensor_size_treshold=1GB``) is
removed from ``XLA_FLAGS`` too, logged, and makes ``import tensorflow`` fail
with a clear message instead of TensorFlow aborting the process.

>>> should_activate({"XLA_FLAGS": "--xla_tensor_size_threshold=1GB"})
True
>>> should_activate({"XLA_FLAGS": "--xla_cpu_enable_fast_math=false"})
False
>>> should_activate({"EXLA_FLAGS": "--xla_tensor_size_threshold=1GB", "EXLA_DISABLE": "1"})
False
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import logging
import os
import sys
from typing import Any, Mapping, MutableMapping, Sequence

from exla.options import Options, consume_env_flags, exla_disabled

__all__ = ["should_activate", "install", "flag_error"]

_log = logging.getLogger("exla")

# The flags only exla reads (XLA's own --xla_* flags stay for XLA). The .pth
# line repeats this tuple: it cannot import anything.
_EXLA_PREFIXES = ("--xla_tensor_", "--xla_memory_limit", "--exla_")
_flag_error: str | None = None


def _disabled(environ: Mapping[str, str]) -> bool:
    """EXLA_DISABLE, read by the one boolean parser; an invalid value is logged and disables exla.

    exla must never break a working program: a value that is neither true nor
    false leaves the program as it would run without exla, with an error that
    says why.
    """
    try:
        return exla_disabled(environ)
    except ValueError as exc:
        _log.error("exla: %s; running without exla", exc)
        return True


def should_activate(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment asks for exla (the check the ``.pth`` line makes)."""
    environ = os.environ if environ is None else environ
    if _disabled(environ):
        return False
    xla_flags = environ.get("XLA_FLAGS", "")
    return any(p in xla_flags for p in _EXLA_PREFIXES) or bool(environ.get("EXLA_FLAGS", "").strip())


def flag_error() -> str | None:
    """The message of the flag error found at start-up, if any."""
    return _flag_error


def _move_to_exla_flags(before: str, environ: MutableMapping[str, str]) -> None:
    """Appends the exla-only flags removed from XLA_FLAGS to EXLA_FLAGS (for child processes)."""
    kept = environ.get("XLA_FLAGS", "").split()
    moved = [t for t in before.split() if t not in kept and t.startswith(_EXLA_PREFIXES)]
    if not moved:
        return
    # Before the user's own EXLA_FLAGS, which win over XLA_FLAGS.
    combined = " ".join([*moved, environ.get("EXLA_FLAGS", "").strip()]).strip()
    try:
        Options.from_flags(combined, source="EXLA_FLAGS")
    except ValueError:
        return  # quoting the tokenizer cannot split on spaces: children re-read nothing
    environ["EXLA_FLAGS"] = combined


def _drop_exla_looking_flags(environ: MutableMapping[str, str]) -> None:
    """After a flag error: remove every --xla_tensor_*/--exla_* token so XLA cannot abort on it."""
    flags = environ.get("XLA_FLAGS", "")
    kept = [t for t in flags.split() if not t.startswith(_EXLA_PREFIXES)]
    if kept:
        environ["XLA_FLAGS"] = " ".join(kept)
    else:
        environ.pop("XLA_FLAGS", None)


def _take_flags(environ: MutableMapping[str, str]) -> None:
    global _flag_error
    before = environ.get("XLA_FLAGS", "")
    try:
        consume_env_flags(environ)
    except ValueError as exc:
        _flag_error = (f"exla: {exc}. Fix the flag, or set EXLA_DISABLE=1 to run without exla "
                       f"(exla removed it from XLA_FLAGS so that XLA does not abort).")
        _drop_exla_looking_flags(environ)
        _log.error("%s", _flag_error)
        return
    _move_to_exla_flags(before, environ)


class _PatchingLoader(importlib.abc.Loader):
    """Loads ``tensorflow`` (or ``jax``) with its own loader, then patches it."""

    def __init__(self, loader: Any, after: Any = None) -> None:
        self._loader = loader
        self._after = after or _after_tensorflow_import

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        self._after()

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, ...
        return getattr(self._loader, name)


class _TensorFlowImportHook(importlib.abc.MetaPathFinder):
    """Finds ``tensorflow`` with the other finders and wraps its loader."""

    _module, _after = "tensorflow", None

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != self._module:
            return None
        if _flag_error is not None:
            raise ImportError(_flag_error)
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _PatchingLoader(spec.loader, self._after)
        return spec


_hook = _TensorFlowImportHook()


# -- JAX: every jax.jit compile goes through exla (exla.jax.compile_hook) ---

def _after_jax_import() -> None:
    try:
        sys.meta_path.remove(_jax_hook)
    except ValueError:
        pass
    try:
        from exla.jax import compile_hook  # imports jax: only once the script has

        compile_hook.enable_environment()
    except Exception as exc:  # noqa: BLE001 - exla must never stop the user's program
        _log.warning("exla: could not hook into JAX (%s: %s); running without exla",
                     type(exc).__name__, exc)


class _JaxImportHook(_TensorFlowImportHook):
    """Finds ``jax`` and routes its compilations through exla once it is loaded."""

    _module, _after = "jax", staticmethod(_after_jax_import)


_jax_hook = _JaxImportHook()


def _remove_hook() -> None:
    try:
        sys.meta_path.remove(_hook)
    except ValueError:
        pass


def _after_tensorflow_import() -> None:
    _remove_hook()
    try:
        from exla.tensorflow import patch  # imports TensorFlow: only once the script has

        patch.install()
    except Exception as exc:  # noqa: BLE001 - exla must never stop the user's program
        _log.warning("exla: could not hook into TensorFlow (%s: %s); running without exla",
                     type(exc).__name__, exc)


def install(environ: MutableMapping[str, str] | None = None) -> None:
    """Takes exla's flags out of ``XLA_FLAGS`` and routes TensorFlow's jit functions through exla.

    Called by the ``.pth`` line at start-up; harmless to call again. Patches
    TensorFlow at once if it is already imported, else when it is imported.
    """
    environ = os.environ if environ is None else environ
    if _disabled(environ):
        return
    _take_flags(environ)
    if "jax" in sys.modules:
        if _flag_error is None:
            _after_jax_import()
    elif _jax_hook not in sys.meta_path:
        sys.meta_path.insert(0, _jax_hook)
    if "tensorflow" in sys.modules:
        if _flag_error is None:
            _after_tensorflow_import()
        return
    if _hook not in sys.meta_path:
        sys.meta_path.insert(0, _hook)
