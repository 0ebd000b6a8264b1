"""Bodies that `test_fresh_interpreter.py` runs through `tests._fresh_interpreter`.

Not collected by a plain run (the name starts with an underscore): each is
run by node id in a child interpreter.
"""

import pytest

from tests._fresh_interpreter import in_child


def test_passes_in_a_child():
    assert in_child()


def test_fails():
    assert 1 + 1 == 3, "the body's own assertion"


def test_skips():
    pytest.skip("the body's own reason")
