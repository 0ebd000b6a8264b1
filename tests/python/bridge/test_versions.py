"""The supported versions: declared once, enforced where a frontend starts, installed as extras."""

from __future__ import annotations

import importlib.metadata

import pytest

from exla.bridge import versions
from exla.bridge import xla as xla_bridge


def test_a_version_outside_the_range_is_an_error_that_names_it():
    versions.check("jax", "0.7.1")
    versions.check("jax", "0.12.0.1")
    for old_or_new in ("0.6.2", "0.13.0"):
        with pytest.raises(versions.UnsupportedVersionError,
                           match=rf"exla supports jax >=0.7.1,<0.13; jax {old_or_new} is installed"):
            versions.check("jax", old_or_new)


def test_versions_compare_by_release_number():
    assert versions.in_range("0.10.2", ">=0.7.1,<0.13")
    assert not versions.in_range("0.7.0", ">=0.7.1,<0.13")
    assert versions.in_range("2.21.0rc1", ">=2.20,<2.22")
    assert not versions.in_range("2.22.0", ">=2.20,<2.22")


@pytest.fixture
def fresh_bridges(monkeypatch):
    """The bridges' cached lookups forgotten before and after the test."""
    from exla.bridge import jax as jax_bridge

    for cached in (xla_bridge._xla, jax_bridge._jax):
        cached.cache_clear()
    yield
    monkeypatch.undo()
    for cached in (xla_bridge._xla, jax_bridge._jax):
        cached.cache_clear()


def test_exla_jit_refuses_an_unsupported_jax_when_it_starts(monkeypatch, fresh_bridges):
    import jax

    import exla

    monkeypatch.setitem(versions.SUPPORTED, "jax", ">=99")
    with pytest.raises(versions.UnsupportedVersionError, match=f"jax {jax.__version__} is installed"):
        exla.jit(lambda x: x)


def test_a_missing_piece_of_jaxlib_is_named_with_the_version(monkeypatch, fresh_bridges):
    monkeypatch.setitem(xla_bridge._FEATURES, "HloModule",
                        (("jax._src.lib", "NoSuchHloModule"), ("jax._src.lib._jax", "Nope")))
    with pytest.raises(ImportError) as raised:
        xla_bridge._xla()
    message = str(raised.value)
    assert f"jaxlib {xla_bridge.jaxlib_version()} lacks what exla needs: HloModule" in message
    assert "jax._src.lib.NoSuchHloModule" in message


def test_every_piece_is_found_on_the_installed_jaxlib(fresh_bridges):
    pieces = xla_bridge._xla()
    for name in xla_bridge._FEATURES:
        assert name in xla_bridge._OPTIONAL or getattr(pieces, name) is not None, name


def _extra(requirement: str) -> str | None:
    marker = requirement.partition(";")[2]
    return marker.split("==")[1].strip().strip("'\"") if "extra ==" in marker else None


@pytest.mark.parametrize("extra, names", [
    (None, ["numpy"]), ("jax", ["jax", "jaxlib"]),
    ("tensorflow", ["tensorflow", "jax", "jaxlib"]),
])
def test_the_installed_requirements_are_the_declared_ranges(extra, names):
    """setup.py reads bridge/versions.py: the package's metadata carries its ranges."""
    requirements = importlib.metadata.requires("exla") or []
    mine = {r.partition(";")[0].replace(" ", "") for r in requirements if _extra(r) == extra}
    for name in names:
        (spec,) = [r[len(name):] for r in mine if r.split("<")[0].split(">")[0] == name]
        assert set(spec.split(",")) == set(versions.SUPPORTED[name].split(",")), (name, spec)
    if extra is None:
        assert mine == {"numpy" + versions.SUPPORTED["numpy"]}  # no framework for everyone
