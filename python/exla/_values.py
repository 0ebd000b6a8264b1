"""How users write sizes and booleans: one syntax for every entry point.

Sizes (``100MB``, ``1GiB``, a number of bytes) and booleans (``1``/``0``,
``true``/``false``, ...) come from keyword arguments, ``XLA_FLAGS``/``EXLA_FLAGS``
and environment variables; :mod:`exla.options` reads them all through these
functions, so every entry point accepts and refuses the same text.
"""

from __future__ import annotations

import numbers
import os
import re
from typing import Mapping

__all__ = ["parse_size", "parse_bool", "keyword_bool", "env_bool", "exla_disabled",
           "format_size", "format_flops", "format_seconds"]

# ---------------------------------------------------------------------------
# Sizes
# ---------------------------------------------------------------------------

# The same grammar as the patched XLA's flag parser
# (xla_patches/src/xla/service/exla/exla_size.cc); tests/test_size_syntax.py
# checks that the two agree.
_UNITS = {
    "": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
}

_ACCEPTED_SIZES = (
    "accepted sizes: a whole number of bytes (123), optionally followed by a "
    "decimal unit KB/MB/GB (powers of 1000) or a binary unit KiB/MiB/GiB "
    "(powers of 1024), case-insensitive, no space: 100MB, 1GiB"
)

# ASCII only, like the C++ parser: Python's \d would also take "１６" (full-width digits).
_SIZE_RE = re.compile(r"^(?P<number>[0-9]+)(?P<unit>[a-zA-Z]*)$", re.ASCII)

_INT64_MAX = 2**63 - 1


def parse_size(value: str | int, *, flag: str | None = None) -> int:
    """Returns the number of bytes that ``value`` denotes.

    Args:
      value: an integer number of bytes, or a string such as ``"123"``,
        ``"100MB"`` (10**8 bytes) or ``"100MiB"`` (100 * 2**20 bytes). Units
        are case-insensitive; decimal units (KB, MB, GB) are powers of 1000
        and binary units (KiB, MiB, GiB) powers of 1024. Surrounding
        whitespace is ignored.
      flag: the flag the value came from, only used in error messages.

    Returns:
      The size in bytes, ``>= 0``.

    Raises:
      ValueError: ``value`` is not a size. The message names the value (and the
        flag) and lists the accepted forms.

    >>> parse_size("1GB"), parse_size("1kib"), parse_size(42)
    (1000000000, 1024, 42)
    """
    where = f" for {flag}" if flag else ""
    if isinstance(value, bool):  # bool is an int subclass; True is no size.
        raise ValueError(f"invalid size {value!r}{where}; {_ACCEPTED_SIZES}")
    if isinstance(value, float) and value.is_integer() and value >= 0:
        value = int(value)
    if isinstance(value, numbers.Integral):
        if value < 0:
            raise ValueError(f"invalid size {value!r}{where}: sizes cannot be negative")
        if value > _INT64_MAX:
            raise ValueError(f"invalid size {value!r}{where}: larger than 2**63 - 1 bytes "
                             "(sizes are 64-bit signed integers)")
        return int(value)
    if not isinstance(value, str):
        raise ValueError(f"invalid size {value!r}{where}; {_ACCEPTED_SIZES}")
    match = _SIZE_RE.match(value.strip())
    unit = match.group("unit").lower() if match else None
    if match is None or unit not in _UNITS:
        if value.strip().startswith("-"):
            raise ValueError(f"invalid size {value!r}{where}: sizes cannot be negative")
        raise ValueError(f"invalid size {value!r}{where}; {_ACCEPTED_SIZES}")
    size = int(match.group("number")) * _UNITS[unit]
    if size > _INT64_MAX:
        raise ValueError(f"invalid size {value!r}{where}: larger than 2**63 - 1 bytes")
    return size


# ---------------------------------------------------------------------------
# Booleans
# ---------------------------------------------------------------------------

_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def parse_bool(value: str | bool, *, name: str) -> bool:
    """The boolean ``value`` denotes, for the flag or variable ``name``.

    Accepts ``1``/``0``, ``true``/``false``, ``yes``/``no`` and ``on``/``off``,
    case-insensitive, with surrounding whitespace ignored.

    Raises:
      ValueError: anything else; the message names ``name`` and the value.

    >>> parse_bool("Off", name="EXLA_STRICT"), parse_bool("1", name="EXLA_STRICT")
    (False, True)
    >>> parse_bool("maybe", name="EXLA_STRICT")
    Traceback (most recent call last):
    ValueError: invalid value 'maybe' for EXLA_STRICT; expected one of 1, 0, true, false, yes, no, on, off (case-insensitive)
    """
    if isinstance(value, bool):
        return value
    text = value.strip().lower() if isinstance(value, str) else None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"invalid value {value!r} for {name}; expected one of 1, 0, true, false, "
                     "yes, no, on, off (case-insensitive)")


def keyword_bool(value: object, *, name: str) -> bool:
    """A boolean keyword argument ``name``: True or False (a NumPy bool too).

    Anything else is refused rather than taken for its truth value: the
    string ``"false"`` is truthy, and would turn on what the caller meant to
    turn off (text is for flags and variables: :func:`parse_bool`).

    Raises:
      ValueError: ``value`` is not a boolean; the message names ``name``.

    >>> keyword_bool(False, name="fast_math")
    False
    >>> keyword_bool("no", name="fast_math")
    Traceback (most recent call last):
    ValueError: fast_math must be True or False, got 'no'
    """
    if isinstance(value, bool):
        return value
    # NumPy's bool scalar type: numpy.bool_ in NumPy 1, numpy.bool in NumPy 2
    # (without importing NumPy: a caller without it has no such values).
    if type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")


def env_bool(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """The boolean environment variable ``name``: False when unset or empty, else :func:`parse_bool`.

    >>> env_bool("EXLA_STRICT", {"EXLA_STRICT": "false"}), env_bool("EXLA_STRICT", {})
    (False, False)
    """
    environ = os.environ if environ is None else environ
    value = environ.get(name, "")
    return False if not value.strip() else parse_bool(value, name=name)


def exla_disabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``EXLA_DISABLE`` switches exla off (every function runs unrewritten).

    >>> exla_disabled({"EXLA_DISABLE": "false"}), exla_disabled({"EXLA_DISABLE": "on"})
    (False, True)
    """
    return env_bool("EXLA_DISABLE", environ)


def format_size(num_bytes: int | None) -> str:
    """A short human-readable size with decimal units, e.g. ``"28.8 GB"``.

    >>> format_size(28_800_000_000), format_size(512), format_size(None)
    ('28.8 GB', '512 B', 'n/a')
    """
    if num_bytes is None:
        return "n/a"
    size = float(num_bytes)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(size) < 1000 or unit == "TB":
            break
        size /= 1000
    if unit == "B":
        return f"{int(num_bytes)} B"
    return f"{size:.3g} {unit}" if abs(size) < 100 else f"{size:.0f} {unit}"


def format_flops(flops: int) -> str:
    """``1234567`` -> ``"1.23 MFLOP"``."""
    value, unit = float(flops), 0
    units = ["FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"]
    while value >= 1000 and unit < len(units) - 1:
        value, unit = value / 1000, unit + 1
    return f"{flops} FLOP" if unit == 0 else f"{value:.3g} {units[unit]}"


def format_seconds(seconds: float) -> str:
    """``0.0123`` -> ``"12.3 ms"``."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"
