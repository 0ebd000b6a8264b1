"""Each setting is declared once (a field of exla.options.Options); everything else follows.

These tests run over the declarations, so a setting added later is checked
without touching them: its flags parse, its keyword reaches every entry point
(signature, docstring, resolution), the command line has it, and the C++
core receives it when it is declared ``core``.
"""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import exla
from exla import _core, _entry_settings
from tests._frameworks import require
from exla._setting import NAMES, OPTIONAL_NAMES, PATH, SIZE, SWITCH
from exla.options import (EXLA_FLAG_NAMES, Options, declared_settings, explicit_settings,
                          resolve_keywords, resolve_options)

SETTINGS = declared_settings()
KEYWORDS = [s for s in SETTINGS if s.keyword]

# Two distinct values of each kind: (flag text, value it denotes).
SAMPLES = {
    SIZE: [("2MB", 2_000_000), ("3KiB", 3 * 1024)],
    SWITCH: [("true", True), ("false", False)],
    NAMES: [("dce", ("dce",)), ("dce,remove-copies", ("dce", "remove-copies"))],
    OPTIONAL_NAMES: [("dce", ("dce",)), ("remove-copies", ("remove-copies",))],
    PATH: [("/tmp/exla-a", "/tmp/exla-a"), ("/tmp/exla-b", "/tmp/exla-b")],
}


# Every entry point that takes the settings; the TensorFlow frontend's load
# TensorFlow (skipped where the environment leaves it out).
ENTRY_POINTS = ["exla.function", "exla.jit", "exla.optimize_hlo", "exla.explain", "ExlaFunction"]
TENSORFLOW_ENTRY_POINTS = {"exla.function", "ExlaFunction"}


def _entry_point(where: str):
    if where in TENSORFLOW_ENTRY_POINTS:
        require("tensorflow")
    if where == "ExlaFunction":
        return exla.ExlaFunction.__init__
    return getattr(exla, where.removeprefix("exla."))


def test_every_setting_has_a_kind_with_samples_and_a_help_text():
    assert [s.name for s in SETTINGS] == [f for f in Options.__dataclass_fields__]
    for s in SETTINGS:
        assert s.kind in SAMPLES, s.name
        assert s.help.strip().endswith("."), s.name


@pytest.mark.parametrize("declaration", SETTINGS, ids=lambda s: s.name)
def test_every_flag_sets_its_setting(declaration):
    (text, value), _ = SAMPLES[declaration.kind]
    for flag in declaration.all_flags():
        assert f"--{flag}" in EXLA_FLAG_NAMES
        options = Options.from_flags(f"--{flag}={text}")
        assert getattr(options, declaration.name) == value, flag


@pytest.mark.parametrize("declaration", KEYWORDS, ids=lambda s: s.name)
def test_resolution_keyword_then_variable_then_exla_flags_then_xla_flags(declaration):
    (low_text, low), (high_text, high) = SAMPLES[declaration.kind]
    flag = f"--{declaration.all_flags()[0]}"
    name = declaration.name
    environ = {"XLA_FLAGS": f"{flag}={low_text}"}
    assert getattr(resolve_options(environ=environ), name) == low
    environ["EXLA_FLAGS"] = f"{flag}={high_text}"
    assert getattr(resolve_options(environ=environ), name) == high
    if declaration.env:
        environ[declaration.env] = low_text
        assert getattr(resolve_options(environ=environ), name) == low
        assert getattr(resolve_keywords(environ), name) == low
    keyword = high if declaration.kind is not NAMES else list(high)
    assert getattr(resolve_options(environ=environ, **{name: keyword}), name) == high
    assert getattr(resolve_keywords(environ, **{name: keyword}), name) == high
    # None leaves the setting to the other sources.
    assert getattr(resolve_options(environ=environ, **{name: None}), name) == \
        getattr(resolve_options(environ=environ), name)


def test_resolve_keywords_reads_no_flags():
    environ = {"EXLA_FLAGS": "--xla_tensor_size_threshold=1MB --exla_strict"}
    assert resolve_keywords(environ) == Options()


@pytest.mark.parametrize("where", ENTRY_POINTS)
def test_entry_points_show_every_setting_in_signature_and_docstring(where):
    fn = _entry_point(where)
    parameters = inspect.signature(fn).parameters
    for s in KEYWORDS:
        parameter = parameters[s.name]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is None
        assert parameter.annotation == s.kind.annotation
    if fn.__doc__ and where != "ExlaFunction":
        assert _entry_settings.MARKER not in fn.__doc__
        for s in KEYWORDS:
            assert f"\n      {s.name}: " in fn.__doc__, (where, s.name)


@pytest.mark.parametrize("where", ["function", "optimize_hlo", "resolve_options"])
def test_unknown_keywords_are_type_errors_everywhere(where):
    hlo = "HloModule m\n\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a)\n}\n"
    if where == "function":
        require("tensorflow")  # exla.function loads the TensorFlow frontend
    calls = {
        "function": lambda: exla.function(lambda x: x, treshold="1MB"),
        "optimize_hlo": lambda: exla.optimize_hlo(hlo, treshold="1MB"),
        "resolve_options": lambda: resolve_options(treshold="1MB", environ={}),
    }
    with pytest.raises(TypeError, match="unexpected keyword argument 'treshold'"):
        calls[where]()


def test_explicit_settings_normalise_and_drop_none():
    assert explicit_settings({"passes": "dce, remove-copies", "split_size": None,
                              "memory_limit": "1KB"}) == {"passes": ("dce", "remove-copies"),
                                                          "memory_limit": 1000}


@pytest.mark.parametrize("declaration", [s for s in SETTINGS if s.core], ids=lambda s: s.name)
def test_core_settings_reach_the_cpp_options(declaration):
    _, (_, value) = SAMPLES[declaration.kind]
    core = _core._core_options(Options(**{declaration.name: value}), large_sums=True)
    got = getattr(core, declaration.name)
    assert (tuple(got) if isinstance(got, list) else got) == value
    assert core.large_sums is True
    assert _core._core_options(Options(), large_sums=False).passes == []  # the default pipeline


def test_cpp_options_refuse_an_empty_pass_list():
    with pytest.raises(ValueError, match="pass list is empty"):
        _core.extension().Options().passes = []


def test_command_line_has_one_option_per_setting():
    done = subprocess.run([sys.executable, "-m", "exla", "optimize", "--help"],
                          capture_output=True, text=True, check=True)
    for s in KEYWORDS:
        assert f"--{s.name.replace('_', '-')}" in done.stdout, s.name
    for s in declared_settings():
        if s.keyword:
            assert s.help.split()[0] in done.stdout


def test_flag_help_and_tables_list_every_flag():
    from exla import options

    for s in SETTINGS:
        for flag in s.all_flags():
            assert f"--{flag}{s.kind.flag_syntax}" in options._FLAG_HELP
        assert f"\n{s.name} " in options.__doc__
        assert f"\n      {s.name}: " in Options.__doc__
