"""Sizes, flags and options (exla.options)."""

from __future__ import annotations

import logging

import pytest

from exla import options as opts
from exla.options import Options, format_size, parse_size, split_xla_flags


@pytest.mark.parametrize("value, expected", [
    (0, 0),
    (123, 123),
    ("123", 123),
    ("  42  ", 42),
    ("100KB", 100_000),
    ("100kb", 100_000),
    ("100MB", 100_000_000),
    ("2gb", 2_000_000_000),
    ("100KiB", 102_400),
    ("2mib", 2 * 2**20),
    ("1GiB", 2**30),
    (4.0, 4),
])
def test_parse_size_accepts(value, expected):
    assert parse_size(value) == expected


@pytest.mark.parametrize("value", ["", "abc", "GB", "10XB", "1e9", "1.5", "1.5GB", "1 GB", "7B", "1TB",
                                   "-1", "-1MB", -5, True, None, [1], 1.5])
def test_parse_size_rejects_with_value_and_forms(value):
    with pytest.raises(ValueError) as info:
        parse_size(value, flag="--xla_tensor_size_threshold")
    message = str(info.value)
    assert repr(value) in message
    assert "--xla_tensor_size_threshold" in message


def test_parse_size_error_lists_accepted_forms():
    with pytest.raises(ValueError, match=r"KB/MB/GB.*KiB/MiB/GiB"):
        parse_size("12 parsecs")


@pytest.mark.parametrize("value, text", [
    (None, "n/a"), (0, "0 B"), (999, "999 B"), (1500, "1.5 KB"), (28_800_000_000, "28.8 GB"),
    (100_000_000, "100 MB"), (123_456_789, "123 MB"), (2 * 10**12, "2 TB"),
])
def test_format_size(value, text):
    assert format_size(value) == text


def test_options_normalises_and_is_frozen():
    options = Options(threshold="1GB", split_size=2048, passes="dce, tensor-splitter",
                      disabled_passes=["a"])
    assert options.threshold == 10**9
    assert options.split_size == 2048
    assert options.passes == ("dce", "tensor-splitter")
    assert options.disabled_passes == ("a",)
    assert options == Options(threshold=10**9, split_size="2048", passes=("dce", "tensor-splitter"),
                              disabled_passes=("a",))
    with pytest.raises(AttributeError):
        options.threshold = 5  # type: ignore[misc]
    assert options.replace(threshold="1KiB").threshold == 1024
    with pytest.raises(ValueError, match="'lots'"):
        Options(threshold="lots")


def test_from_flags_reads_exla_flags_and_ignores_xla_flags():
    options = Options.from_flags(
        "--xla_dump_to=/tmp/x --xla_tensor_size_threshold=1GiB --xla_tensor_split_size=100MB "
        "--exla_passes=dce,tensor-splitter --exla_dump_to=/tmp/d --exla_strict "
        "--xla_disable_hlo_passes=dce,algsimp --xla_cpu_enable_fast_math=false")
    assert options == Options(threshold=2**30, split_size=10**8, passes=("dce", "tensor-splitter"),
                              disabled_passes=("dce", "algsimp"), dump_dir="/tmp/d", strict=True)
    assert Options.from_flags("--exla_strict=false").strict is False
    assert Options.from_flags("") == Options()


def test_from_flags_base_is_updated():
    base = Options(threshold=5, split_size=7)
    assert Options.from_flags("--xla_tensor_split_size=9", base=base) == Options(threshold=5, split_size=9)


@pytest.mark.parametrize("typo", ["--xla_tensor_size_treshold=1GB", "--xla_tensor_limit=1GB",
                                  "--exla_pases=dce"])
def test_unknown_exla_flag_is_named(typo):
    with pytest.raises(ValueError) as info:
        split_xla_flags(f"--xla_dump_to=/tmp/x {typo}")
    message = str(info.value)
    assert repr(typo.split("=")[0]) in message
    assert "--xla_tensor_size_threshold=SIZE" in message  # lists exla's flags


def test_bad_size_names_the_flag():
    with pytest.raises(ValueError, match=r"'12 apples'.*--xla_tensor_split_size"):
        Options.from_flags("--xla_tensor_split_size='12 apples'")


def test_split_removes_only_exla_flags_and_keeps_order():
    options, rest = split_xla_flags(
        "  --xla_dump_to=/tmp/a  --xla_tensor_size_threshold=100MiB\t--xla_dump_hlo_as_text "
        "--xla_disable_hlo_passes=tensor-splitter,algsimp --exla_strict")
    assert options.threshold == 100 * 2**20
    assert options.strict
    assert options.disabled_passes == ("tensor-splitter", "algsimp")
    # --xla_disable_hlo_passes is XLA's too, so it stays.
    assert rest == "--xla_dump_to=/tmp/a --xla_dump_hlo_as_text --xla_disable_hlo_passes=tensor-splitter,algsimp"


@pytest.mark.parametrize("flags", ["", "   ", "--xla_dump_to=/tmp/a   --xla_dump_hlo_as_text",
                                   "--xla_disable_hlo_passes=algsimp"])
def test_split_without_exla_flags_returns_input_unchanged(flags):
    options, rest = split_xla_flags(flags)
    assert rest == flags
    assert options.threshold is None


def test_split_keeps_quoted_values_verbatim():
    flags = """--xla_dump_to="/tmp/a b" --xla_tensor_split_size='10MB' --xla_gpu_x='c d'"""
    options, rest = split_xla_flags(flags)
    assert options.split_size == 10**7
    assert rest == """--xla_dump_to="/tmp/a b" --xla_gpu_x='c d'"""


def test_flag_space_value_is_rejected_precisely():
    # XLA takes "--name value" as a bare flag and stops reading at "value".
    with pytest.raises(ValueError) as info:
        split_xla_flags("--xla_tensor_size_threshold 1GB")
    assert "'--xla_tensor_size_threshold=1GB'" in str(info.value)
    with pytest.raises(ValueError, match="must be quoted"):
        split_xla_flags("--xla_tensor_size_threshold=1 GB")


def test_stray_word_after_xla_flag_warns_and_passes_through(caplog):
    flags = "--xla_tensor_size_threshold=1KB --xla_cpu_enable_fast_math false --xla_dump_to=/x"
    with caplog.at_level(logging.WARNING, logger="exla"):
        options, rest = split_xla_flags(flags)
    assert options.threshold == 1000
    assert rest == "--xla_cpu_enable_fast_math false --xla_dump_to=/x"
    assert "'--xla_cpu_enable_fast_math=false'" in caplog.text


def test_flags_from_file(tmp_path):
    path = tmp_path / "flags"
    path.write_text("--xla_dump_to=/tmp/a\n--xla_tensor_size_threshold=2KB\n")
    options, rest = split_xla_flags(str(path))
    assert options.threshold == 2000
    assert rest == "--xla_dump_to=/tmp/a"
    with pytest.raises(ValueError, match="file of flags"):
        split_xla_flags(str(tmp_path / "missing"))


def test_from_env_exla_flags_win_and_must_be_exla_flags():
    env = {"XLA_FLAGS": "--xla_tensor_size_threshold=1MB --xla_tensor_split_size=1KB",
           "EXLA_FLAGS": "--xla_tensor_size_threshold=2MB --exla_passes=dce"}
    assert Options.from_env(env) == Options(threshold=2 * 10**6, split_size=1000, passes=("dce",))
    assert env["XLA_FLAGS"].startswith("--xla_tensor_size_threshold")  # not modified
    with pytest.raises(ValueError, match="belong in XLA_FLAGS"):
        Options.from_env({"EXLA_FLAGS": "--xla_dump_to=/tmp"})


def test_consume_env_flags_edits_xla_flags():
    env = {"XLA_FLAGS": "--xla_dump_to=/a --xla_tensor_size_threshold=1MB", "EXLA_FLAGS": "--exla_strict"}
    assert opts.consume_env_flags(env) == Options(threshold=10**6, strict=True)
    assert env["XLA_FLAGS"] == "--xla_dump_to=/a"
    env = {"XLA_FLAGS": "--xla_tensor_size_threshold=1MB"}
    assert opts.consume_env_flags(env).threshold == 10**6
    assert "XLA_FLAGS" not in env  # nothing left for XLA


def test_stripped_process_flags_are_remembered(monkeypatch):
    monkeypatch.setattr(opts, "_removed_from_xla_flags", Options())
    monkeypatch.setenv("XLA_FLAGS", "--xla_tensor_size_threshold=3KB --xla_dump_to=/a")
    monkeypatch.delenv("EXLA_FLAGS", raising=False)
    assert opts.strip_xla_flags().threshold == 3000
    import os

    assert os.environ["XLA_FLAGS"] == "--xla_dump_to=/a"
    assert Options.from_env().threshold == 3000


# -- one boolean syntax for every flag and variable -----------------------------

@pytest.mark.parametrize("text, expected", [
    ("1", True), ("true", True), ("TRUE", True), ("Yes", True), ("on", True), (" on ", True),
    ("0", False), ("false", False), ("False", False), ("NO", False), ("off", False),
])
def test_parse_bool_accepts(text, expected):
    assert opts.parse_bool(text, name="EXLA_STRICT") is expected


@pytest.mark.parametrize("text", ["", "2", "y", "enable", "truee", "-1", "ｔｒｕｅ"])
def test_parse_bool_rejects_with_the_name_and_value(text):
    with pytest.raises(ValueError, match=r"invalid value .* for EXLA_STRICT; expected one of 1, 0, "):
        opts.parse_bool(text, name="EXLA_STRICT")


@pytest.mark.parametrize("name", ["EXLA_STRICT", "EXLA_DISABLE"])
def test_false_means_false_for_every_variable(name):
    # EXLA_STRICT=false once turned strict mode on, while EXLA_DISABLE=false left exla on.
    for value in ("false", "0", "no", "off", "FALSE"):
        assert opts.env_bool(name, {name: value}) is False
    for value in ("true", "1", "yes", "on"):
        assert opts.env_bool(name, {name: value}) is True
    assert opts.env_bool(name, {}) is False and opts.env_bool(name, {name: ""}) is False
    with pytest.raises(ValueError, match=name):
        opts.env_bool(name, {name: "maybe"})


def test_strict_flag_uses_the_same_booleans():
    assert Options.from_flags("--exla_strict").strict
    assert Options.from_flags("--exla_strict=on").strict
    assert not Options.from_flags("--exla_strict=Off").strict
    with pytest.raises(ValueError, match="--exla_strict"):
        Options.from_flags("--exla_strict=maybe")


def test_fast_math_flag_and_keyword():
    assert not Options().fast_math and not Options.from_flags("").fast_math
    assert Options.from_flags("--exla_fast_math").fast_math
    assert not Options.from_flags("--exla_fast_math=false").fast_math
    with pytest.raises(ValueError, match="--exla_fast_math"):
        Options.from_flags("--exla_fast_math=fast")
    assert opts.resolve_options(environ={"EXLA_FLAGS": "--exla_fast_math"}).fast_math
    assert opts.resolve_options(fast_math=True, environ={}).fast_math
    assert not opts.resolve_options(environ={}).fast_math


@pytest.mark.parametrize("value", ["false", "no", 0, 1, "True"])
def test_boolean_keywords_are_true_or_false_not_truthy(value):
    # bool("false") is True: a keyword taken for its truth value would turn
    # on what the caller meant to turn off. Every entry point refuses it.
    import numpy as np

    import exla

    assert opts.keyword_bool(np.bool_(True), name="strict") is True
    hlo = "HloModule m\n\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a)\n}\n"
    calls = {
        "resolve_options fast_math": lambda: opts.resolve_options(fast_math=value, environ={}),
        "resolve_options strict": lambda: opts.resolve_options(strict=value, environ={}),
        "optimize_hlo fast_math": lambda: exla.optimize_hlo(hlo, threshold="1KB", fast_math=value),
        "optimize_hlo strict": lambda: exla.optimize_hlo(hlo, threshold="1KB", strict=value),
        "optimize_hlo planned_memory": lambda: exla.optimize_hlo(hlo, planned_memory=value),
        "jit fast_math": lambda: exla.jit(lambda x: x, fast_math=value),
        "jit strict": lambda: exla.jit(lambda x: x, strict=value),
    }
    _assert_refused(calls, value)


@pytest.mark.parametrize("value", ["false", "no", 0, 1, "True"])
def test_boolean_keywords_of_exla_function_are_true_or_false_not_truthy(value):
    import exla
    from tests._frameworks import require

    require("tensorflow")  # exla.function loads the TensorFlow frontend
    _assert_refused({
        "function fast_math": lambda: exla.function(lambda x: x, fast_math=value),
        "function strict": lambda: exla.function(lambda x: x, strict=value),
    }, value)


def _assert_refused(calls: dict, value: object) -> None:
    for where, call in calls.items():
        with pytest.raises(ValueError, match=r"must be True or False, got"):
            call()
            pytest.fail(f"{where} accepted {value!r}")


def test_resolve_options_reads_every_source(monkeypatch):
    environ = {"XLA_FLAGS": "--xla_tensor_size_threshold=1GB --xla_disable_hlo_passes=dce",
               "EXLA_FLAGS": "--xla_tensor_split_size=10MB", "EXLA_STRICT": "off",
               "EXLA_DUMP_TO": "/tmp/exla-dumps"}
    options = opts.resolve_options(split_size="1MB", environ=environ)
    assert options.threshold == 10**9 and options.split_size == 10**6
    assert "dce" not in options.passes and "tensor-splitter" in options.passes
    assert options.dump_dir == "/tmp/exla-dumps" and not options.strict
    assert opts.resolve_options(environ=dict(environ, EXLA_STRICT="yes")).strict
    assert opts.resolve_options(strict=True, environ=environ).strict


# -- sizes: the int64 bound and ASCII digits --------------------------------------

@pytest.mark.parametrize("value", [2**63, 2**70, float(2**70), "9223372036854775808"])
def test_sizes_beyond_int64_are_rejected_precisely(value):
    with pytest.raises(ValueError, match=r"larger than 2\*\*63 - 1 bytes"):
        parse_size(value, flag="threshold")


@pytest.mark.parametrize("value", ["１６KB", "１６", "١٢٣", "16ＫＢ"])
def test_non_ascii_digits_and_units_are_rejected(value):
    with pytest.raises(ValueError, match="invalid size"):
        parse_size(value)
