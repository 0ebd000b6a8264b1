"""exla's exception type.

Bad input (malformed HLO, an unknown pass name, a bad size or flag) raises
``ValueError`` with a message that names the problem. Everything else that goes
wrong inside exla raises :class:`ExlaError`.

>>> import exla
>>> issubclass(exla.ExlaError, RuntimeError)
True
"""

from __future__ import annotations

__all__ = ["ExlaError"]


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
