"""Malformed HLO text is rejected with a ValueError that says where and why;
unknown but regular syntax is carried through verbatim.

Error messages must name the line and column (1-based) and quote the
offending token: "line L, column C: <what> (near '<token>')".
"""

from __future__ import annotations

import re

import pytest


from tests._extension import load_extension  # noqa: E402

_exla = load_extension()

VALID = """\
HloModule m, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}

ENTRY main {
  x = f32[4]{0} parameter(0)
  y = f32[4]{0} parameter(1)
  ROOT z = f32[4]{0} add(x, y)
}
"""

END = re.compile(r"end of (input|file|text)", re.I)


def _replace(old: str, new: str) -> str:
    assert VALID.count(old) == 1, old
    return VALID.replace(old, new)


def _position(text: str, line_text: str, token: str) -> tuple[int, int]:
    """1-based (line, column) of `token` in the line containing `line_text`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line_text in line:
            return number, line.index(token) + 1
    raise AssertionError(line_text)


def _error(text: str) -> str:
    with pytest.raises(ValueError) as info:
        _exla.round_trip(text)
    message = str(info.value)
    assert re.search(r"\bline \d+\b", message), message
    assert re.search(r"\bcolumn \d+\b", message), message
    return message


def _assert_at(message: str, line: int, *columns: int) -> None:
    assert re.search(rf"\bline {line}\b", message), message
    if columns:
        found = re.search(r"\bcolumn (\d+)\b", message)
        assert found and int(found.group(1)) in columns, (message, columns)


def test_valid_module_round_trips():
    assert re.sub(r"\s+", " ", _exla.round_trip(VALID)).strip() == \
        re.sub(r"\s+", " ", VALID).strip()


# Cases whose offending token is a piece of the text: (text, line containing
# the token, token).
TOKEN_CASES = {
    "unknown_shape_type": (_replace("x = f32[4]{0}", "x = f33[4]{0}"),
                           "x = f33", "f33"),
    "missing_equals": (_replace("y = f32[4]{0}", "y f32[4]{0}"),
                       "y f32", "f32"),
    "operand_not_defined": (_replace("add(x, y)", "add(x, w)"),
                            "add(x, w)", "w"),
    "duplicate_instruction_name": (
        _replace("y = f32[4]{0} parameter(1)", "x = f32[4]{0} parameter(1)"),
        "parameter(1)", "x"),
    "bad_dimensions_attribute": (
        _replace("add(x, y)", "broadcast(x), dimensions={0,q}"),
        "dimensions={0,q}", "q"),
    "attribute_without_value": (
        _replace("add(x, y)", "add(x, y), dimensions"),
        "add(x, y), dimensions", "dimensions"),
    "bad_slice_attribute": (
        _replace("add(x, y)", "slice(x), slice={[0:two]}"),
        "slice={", "two"),
    # Found by the mutation fuzzer (experiments/fuzzing/fuzz_mutate.py): XLA's parser
    # refuses each of these, and exla accepted them.
    "operand_used_before_its_definition": (
        _replace("y = f32[4]{0} parameter(1)",
                 "w = f32[4]{0} negate(y)\n  y = f32[4]{0} parameter(1)"),
        "negate(y)", "y"),
    "unknown_opcode_operand_not_defined": (
        _replace("add(x, y)", "foo-bar(x, nope), some_attr={1,2}"),
        "foo-bar", "nope"),
}


@pytest.mark.parametrize("case", sorted(TOKEN_CASES))
def test_error_names_line_column_and_token(case):
    text, line_text, token = TOKEN_CASES[case]
    message = _error(text)
    line, column = _position(text, line_text, token)
    # At the token, or just after it where the parser expected what follows.
    _assert_at(message, line, column, column + len(token))
    assert f"'{token}" in message, message


def test_unterminated_computation_brace():
    message = _error(VALID.rstrip()[:-1])
    assert END.search(message) or "'}'" in message, message
    _assert_at(message, 7)


def test_unterminated_attribute_brace_points_at_its_instruction():
    text = _replace("add(x, y)", 'add(x, y), metadata={op_name="a"')
    message = _error(text)
    # The brace is opened on line 6; an error only at the end of the input
    # would not tell the user which instruction is broken.
    assert "line 6" in message or "metadata" in message, message


def test_truncated_file():
    text = VALID[:VALID.index("add(") + 2]  # "...ROOT z = f32[4]{0} ad"
    message = _error(text)
    _assert_at(message, 6)
    assert END.search(message), message


def test_truncated_inside_shape():
    text = VALID[:VALID.index("f32[4]{0} parameter(1)") + 5]
    message = _error(text)
    _assert_at(message, 5)


@pytest.mark.parametrize("text", ["", "   \n\t\n  "], ids=["empty", "blank"])
def test_empty_input(text):
    message = _error(text)
    assert END.search(message) or "empty" in message, message


@pytest.mark.parametrize("garbage", [
    bytes(range(256)).decode("latin-1"),
    "\x7fELF\x02\x01\x01\x00" + "\x00" * 8,
    "\x08\x01\x12\x04main\x1a\x9c\x02",  # the start of a serialized proto
], ids=["all_bytes", "elf_header", "proto_bytes"])
def test_binary_garbage(garbage):
    message = _error(garbage)
    _assert_at(message, 1, 1)
    assert "near '" in message, message
    assert message.isprintable(), repr(message)


def test_garbage_after_module():
    text = VALID + "\x00\x01garbage"
    message = _error(text)
    _assert_at(message, 8)


def test_unknown_regular_opcode_is_carried_verbatim():
    text = _replace("add(x, y)", "foo-bar(x, y), some_attr={1,2}")
    out = _exla.round_trip(text)
    assert "ROOT z = f32[4]{0} foo-bar(x, y), some_attr={1,2}" in out, out
    assert _exla.round_trip(out) == out


def test_unknown_attributes_are_carried_verbatim():
    text = _replace(
        "add(x, y)",
        'custom-call(x, y), custom_call_target="my_target", '
        'backend_config={"a": {"b": [1, 2]}, "s": "}{"}, '
        'frontend_attributes={k="v{",z="1"}, '
        'sharding={devices=[2,1]0,1}, api_version=API_VERSION_TYPED_FFI, '
        'weird_attr=[0:3], metadata={op_name="a\\"b" source_line=3}')
    out = _exla.round_trip(text)
    assert re.sub(r"\s+", " ", out).strip() == \
        re.sub(r"\s+", " ", text).strip()
    assert _exla.round_trip(out) == out


def _nested_tuple(depth: int) -> str:
    return "(" * depth + "f32[2]{0}" + ")" * depth


def test_deeply_nested_tuple_shape_is_refused_without_crashing():
    """A tuple shape 100,000 levels deep once overflowed the parser's stack
    (a segfault); it must be a ValueError at the offending parenthesis. Run in
    a child so that a crash fails this test instead of killing the run."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from exla import _exla\n"
        "depth = 100_000\n"
        "shape = '(' * depth + 'f32[2]{0}' + ')' * depth\n"
        "text = 'HloModule m\\nENTRY e {\\n  ROOT p = ' + shape + ' parameter(0)\\n}\\n'\n"
        "try:\n"
        "    _exla.round_trip(text)\n"
        "except ValueError as e:\n"
        "    print(e)\n"
        "    sys.exit(0)\n"
        "sys.exit(3)\n")
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=120)
    assert child.returncode == 0, (child.returncode, child.stderr[-2000:])
    message = child.stdout
    assert "nested more than 256 levels" in message, message
    # The 257th '(' of line 3: "  ROOT p = " is 11 characters.
    _assert_at(message, 3, 11 + 257)


def test_tuple_shapes_up_to_the_limit_round_trip():
    text = f"HloModule m\nENTRY e {{\n  ROOT p = {_nested_tuple(256)} parameter(0)\n}}\n"
    assert _exla.round_trip(text).split() == text.split()
    message = _error(text.replace(_nested_tuple(256), _nested_tuple(257)))
    assert "nested more than 256 levels" in message, message


@pytest.mark.parametrize("dimension", ["99999999999999999999", "-99999999999999999999",
                                       "9223372036854775808"])
def test_dimension_overflowing_int64_is_a_value_error(dimension):
    """It used to escape as IndexError('stoll')."""
    text = _replace("y = f32[4]{0} parameter(1)", f"y = f32[{dimension}]{{0}} parameter(1)")
    message = _error(text)
    _assert_at(message, 5, len("  y = f32[") + 1)
    assert "64 bits" in message and dimension in message, message


def test_truncated_right_after_an_operand_list_opens():
    """A file cut just after `add(`: it used to escape as an internal error
    (std::out_of_range from a look-ahead past the end)."""
    text = VALID[:VALID.index("add(") + 4]
    message = _error(text)
    _assert_at(message, 6)


def test_attribute_given_twice():
    text = _replace("add(x, y)", "broadcast(x), dimensions={0}, dimensions={0}")
    message = _error(text)
    assert "attribute 'dimensions' is given twice" in message, message
    _assert_at(message, 6, text.splitlines()[5].rindex("dimensions") + 1)


@pytest.mark.parametrize("layout", ["{0}", "{}", "{0,0}", "{2,0}", "{2,1,0}"])
def test_layout_that_does_not_fit_the_rank(layout):
    text = _replace("x = f32[4]{0} parameter(0)", f"x = f32[4,2]{layout} parameter(0)")
    text = text.replace("(f32[4]{0}, f32[4]{0})", f"(f32[4,2]{layout}, f32[4]{{0}})")
    message = _error(text)
    assert "layout" in message, message
    _assert_at(message, 4, len("  x = f32[4,2]") + 1)


def test_layout_with_tiling_is_accepted():
    text = VALID.replace("f32[4]{0}", "f32[4]{0:T(128)}")
    assert "f32[4]{0:T(128)}" in _exla.round_trip(text)


@pytest.mark.parametrize("header,words", [
    ("(f32[4]{0})->f32[4]{0}", ["lists 1 parameter(s) but ENTRY 'main' has 2"]),
    ("(f32[4]{0}, f32[5]{0})->f32[4]{0}", ["gives parameter 1 the shape f32[5]"]),
    ("(f32[4]{0}, f32[4]{0})->s32[4]{0}", ["gives the result the shape s32[4]"]),
    ("(f32[4]{0}, f32[4]{0}}->f32[4]{0}", ["expected ')'"]),
    ("(f32[4]{0}, f32[4#]{0})->f32[4]{0}", ["expected ']'"]),
], ids=["count", "parameter", "result", "brace", "garbage"])
def test_entry_computation_layout_must_fit_the_entry(header, words):
    """XLA's parser reads the header's layout (and aborts the process when
    the parameter count differs); exla refuses such a header with its position."""
    text = VALID.replace("(f32[4]{0}, f32[4]{0})->f32[4]{0}", header)
    message = _error(text)
    for word in words:
        assert word in message, message
    _assert_at(message, 1)


@pytest.mark.parametrize("value", ['{a=="b"}', '{a=b}', '{a="b",}', '{="b"}', '{a="b"'],
                         ids=["double_equals", "unquoted", "trailing_comma", "no_name", "open"])
def test_frontend_attributes_must_be_quoted_pairs(value):
    """XLA's parser refuses these (the mutation fuzzer found '=='); exla did not."""
    message = _error(_replace("add(x, y)", f"add(x, y), frontend_attributes={value}"))
    assert "frontend_attributes" in message or "bracket" in message, message
    _assert_at(message, 6)


def test_frontend_attributes_xla_prints_round_trip():
    text = _replace("add(x, y)", 'add(x, y), frontend_attributes={a="1",_xla_b="x \\"y\\" z"}')
    assert 'frontend_attributes={a="1",_xla_b="x \\"y\\" z"}' in _exla.round_trip(text)
