"""Loading exla's C++ extension in tests.

Without the extension a test module is skipped, unless EXLA_REQUIRE_EXTENSION
is set (CI sets it, so nothing is skipped silently there).
"""

from __future__ import annotations

import os

import pytest


def load_extension():
    try:
        from exla import _exla
        from exla.bridge import tensorflow_call, xla  # noqa: F401
    except ImportError as e:
        if os.environ.get("EXLA_REQUIRE_EXTENSION"):
            raise
        pytest.skip(f"exla is not built ({e})", allow_module_level=True)
    return _exla
