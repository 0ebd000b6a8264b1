"""exla's exception type.

Bad input (malformed HLO, an unknown pass name, a bad size or flag) raises
``ValueError`` with a message that names the problem. Everything else that goes
wrong inside exla raises :class:`ExlaError`.

>>> import exla
>>> issubclass(exla.ExlaError, RuntimeError)
True
"""

from __future__ import annotations

__all__ = ["ExlaError", "MemoryLimitError", "FrontendUnavailableError"]


class ExlaError(RuntimeError):
    """exla itself failed: an internal error of its C++ core, or a function exla
    could not rewrite while strict mode is on.

    >>> import exla
    >>> try:
    ...     raise exla.ExlaError("example")
    ... except exla.ExlaError as e:
    ...     print(e)
    example
    """


class MemoryLimitError(ValueError):
    """The memory limit is below what the program itself must hold: its own
    arguments and outputs. No rewrite can meet such a limit, so exla raises this
    on every path (``optimize_hlo``, ``exla.function``, ``exla.jit``, the
    ``--xla_memory_limit`` flag), strict or not, instead of running the program
    without it.

    >>> import exla
    >>> issubclass(exla.MemoryLimitError, ValueError)
    True
    """


class FrontendUnavailableError(AttributeError):
    """A frontend's name (``exla.function``, ``exla.jit``, ...) was asked for, but
    its framework cannot be imported here; the message names the framework and
    the extra to install, and the ``ImportError`` is its cause. An
    ``AttributeError``, as Python expects of a module's missing name: so
    ``hasattr(exla, "function")`` is False where TensorFlow is not installed,
    and ``from exla import function`` is an ``ImportError`` there.
    """
