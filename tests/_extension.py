"""Loading exla's C++ extension in tests.

Without the extension a test module is skipped, unless EXLA_REQUIRE_EXTENSION
is set (CI sets it, so nothing is skipped silently there).
"""

from __future__ import annotations

import os

import pytest


def extension_required() -> bool:
    """Whether EXLA_REQUIRE_EXTENSION is set (CI): then nothing may be skipped silently."""
    return os.environ.get("EXLA_REQUIRE_EXTENSION", "") not in ("", "0")


def load_extension():
    try:
        from exla import _exla
        from exla.bridge import tensorflow_call, xla  # noqa: F401
    except ImportError as e:
        if extension_required():
            raise
        pytest.skip(f"exla is not built ({e})", allow_module_level=True)
    return _exla


def core_optimize(text: str, **fields):
    """``_exla.optimize`` with the ``exla::Options`` fields given by name (None: the default):
    an ``OptimizedModule`` (``text``, ``passes``).

    >>> optimized = core_optimize("HloModule m\\n\\nENTRY e {\\n  ROOT x = f32[2] parameter(0)\\n}",
    ...                              passes=["dce"])  # doctest: +SKIP
    """
    from exla import _exla

    options = _exla.Options()
    for name, value in fields.items():
        if value is not None:
            setattr(options, name, value)
    return _exla.optimize(text, options)
