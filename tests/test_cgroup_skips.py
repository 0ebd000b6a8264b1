"""tests/_cgroup.py: only a test marked needs_cgroup may skip for want of a cgroup."""

from __future__ import annotations

import pytest

from tests import _cgroup


class _Node:
    """The part of a pytest item that skip_without_cgroup reads."""

    nodeid = "tests/x.py::test_capped"

    def __init__(self, marked: bool) -> None:
        self._marked = marked

    def get_closest_marker(self, name: str):
        return object() if self._marked and name == _cgroup.MARKER else None


@pytest.fixture
def no_cgroup(monkeypatch):
    monkeypatch.setattr(_cgroup, "cgroup_available", lambda: False)
    monkeypatch.setattr(_cgroup, "_skipped", [])


def test_a_marked_test_is_skipped_and_counted(no_cgroup, monkeypatch):
    monkeypatch.setenv("EXLA_REQUIRE_EXTENSION", "1")
    with pytest.raises(pytest.skip.Exception, match="no memory cgroup can be created here"):
        _cgroup.skip_without_cgroup(_Node(marked=True))
    assert _cgroup.skipped() == [_Node.nodeid]


def test_an_unmarked_test_fails_in_ci_and_skips_elsewhere(no_cgroup, monkeypatch):
    monkeypatch.setenv("EXLA_REQUIRE_EXTENSION", "1")
    with pytest.raises(pytest.fail.Exception, match="only a test marked needs_cgroup"):
        _cgroup.skip_without_cgroup(_Node(marked=False))
    monkeypatch.delenv("EXLA_REQUIRE_EXTENSION")
    with pytest.raises(pytest.skip.Exception):
        _cgroup.skip_without_cgroup(_Node(marked=False))


def test_nothing_happens_where_a_cgroup_can_be_made(monkeypatch):
    monkeypatch.setattr(_cgroup, "cgroup_available", lambda: True)
    _cgroup.skip_without_cgroup(_Node(marked=False))
