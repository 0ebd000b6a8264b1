"""The framework versions exla supports, declared once.

``setup.py`` reads :data:`SUPPORTED` (without importing exla) to write the
package's requirements and extras, and each bridge calls :func:`check` when it
first loads its framework, so that a version outside the range is one clear
error naming it, never a silent fallback on every program.

Within a range, each bridge finds the private API it needs by what it offers
(see :mod:`exla.bridge.xla` and :mod:`exla.bridge.jax`), not by the version
number: the range says what was tested, the lookups say what is there.

>>> check("jax", "0.7.1")
>>> check("jax", "0.6.2")
Traceback (most recent call last):
  ...
exla.bridge.versions.UnsupportedVersionError: exla supports jax >=0.7.1,<0.13; jax 0.6.2 is installed (pip install "jax>=0.7.1,<0.13")
"""

from __future__ import annotations

import logging
import re

__all__ = ["SUPPORTED", "UnsupportedVersionError", "check", "parse_version", "in_range"]

_log = logging.getLogger("exla")

# What exla is tested with, oldest to newest (CI runs both ends). Keep this a
# literal: setup.py reads it with ``ast.literal_eval``.
SUPPORTED = {
    "python": ">=3.11",
    "jax": ">=0.7.1,<0.13",
    "jaxlib": ">=0.7.1,<0.13",
    "numpy": ">=1.26",
    "tensorflow": ">=2.20,<2.22",
    "gpflow": ">=2.11,<2.12",
    "tf_keras": ">=2.20,<2.22",
}


class UnsupportedVersionError(ImportError):
    """A framework's installed version is outside the range exla supports."""


def parse_version(text: str) -> tuple[int, ...]:
    """The leading numeric release of a version string.

    >>> parse_version("0.12.0.1"), parse_version("2.21.0rc1"), parse_version("2.20.0.dev20250101")
    ((0, 12, 0, 1), (2, 21, 0), (2, 20, 0))
    """
    parts = []
    for part in text.split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        parts.append(int(match.group()))
        if match.end() != len(part):
            break
    return tuple(parts)


def _compare(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return (a > b) - (a < b)


def in_range(version: str, spec: str) -> bool:
    """Whether ``version`` satisfies a comma-separated ``>=``/``<`` specifier.

    >>> in_range("0.12.0.1", ">=0.7.1,<0.13"), in_range("0.13.0", ">=0.7.1,<0.13")
    (True, False)
    """
    have = parse_version(version)
    for clause in spec.split(","):
        op, bound = re.match(r"\s*(>=|<|==)\s*(\S+)", clause).groups()
        order = _compare(have, parse_version(bound))
        if (op == ">=" and order < 0) or (op == "<" and order >= 0) or (op == "==" and order != 0):
            return False
    return True


def check(framework: str, version: str) -> None:
    """Raises :class:`UnsupportedVersionError` if ``version`` of ``framework`` is not supported.

    An unparseable version (a source build without one) is let through with a
    log line: the bridges' lookups still decide whether it works.
    """
    spec = SUPPORTED[framework]
    if not parse_version(version):
        _log.info("exla: cannot read %s's version %r; assuming it is supported", framework, version)
        return
    if not in_range(version, spec):
        raise UnsupportedVersionError(
            f"exla supports {framework} {spec}; {framework} {version} is installed "
            f'(pip install "{framework}{spec}")')
