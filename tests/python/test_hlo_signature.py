"""exla._hlo_signature: the entry signature, read by the C++ parser through the binding."""

from __future__ import annotations

import pytest

from exla._hlo_signature import ArrayShape, read_signature

LAYOUT_HEADER = """HloModule m, is_scheduled=true, entry_computation_layout={(f32[2,3]{0,1:T(2,128)}, pred[], s8[4]{0})->(bf16[7,1]{1,0}, (c64[2]{0}, u32[]), /*index=2*/f64[])}, allow_spmd_sharding_propagation_to_output={true}

ENTRY e {
  a = f32[2,3]{0,1:T(2,128)} parameter(0)
  b = pred[] parameter(1)
  c = s8[4]{0} parameter(2)
  x = bf16[7,1]{1,0} constant({ {1}, {2}, {3}, {4}, {5}, {6}, {7} })
  y = c64[2]{0} constant({(1,0), (2,0)})
  z = u32[] constant(3)
  inner = (c64[2]{0}, u32[]) tuple(y, z)
  w = f64[] constant(1)
  ROOT t = (bf16[7,1]{1,0}, (c64[2]{0}, u32[]), /*index=2*/f64[]) tuple(x, inner, w)
}
"""


def test_parameters_and_flattened_results():
    sig = read_signature(LAYOUT_HEADER)
    assert sig.parameters == (ArrayShape("f32", (2, 3)), ArrayShape("pred", ()), ArrayShape("s8", (4,)))
    assert sig.results == (ArrayShape("bf16", (7, 1)), ArrayShape("c64", (2,)),
                           ArrayShape("u32", ()), ArrayShape("f64", ()))
    assert sig.result_is_tuple and sig.aliases == ()


def test_single_result_without_header_layout():
    sig = read_signature("HloModule m\n\nENTRY e {\n  ROOT c = s32[] constant(1)\n}\n")
    assert sig.parameters == () and sig.results == (ArrayShape("s32", ()),)
    assert not sig.result_is_tuple


def test_aliases():
    text = """HloModule m, input_output_alias={ {1}: (2, {}, may-alias), {0}: (0, {}, must-alias) }

ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  c = f32[3] parameter(2)
  ROOT t = (f32[3], f32[3]) tuple(b, a)
}
"""
    assert read_signature(text).aliases == ((1, 2), (0, 0))
    whole = text.replace("{0}: (0, {}, must-alias)", "{0}: (0, {})")
    assert read_signature(whole).aliases == ((1, 2), (0, 0))


def test_alias_into_a_tuple_part_is_refused():
    text = """HloModule m, input_output_alias={ {0, 1}: (0, {}) }

ENTRY e {
  a = f32[3] parameter(0)
  i = (f32[3], f32[3]) tuple(a, a)
  ROOT t = ((f32[3], f32[3])) tuple(i)
}
"""
    with pytest.raises(NotImplementedError, match="part of a tuple"):
        read_signature(text)


@pytest.mark.parametrize("text, match", [
    ("HloModule m\n\nENTRY e {\n  p = (f32[2], f32[]) parameter(0)\n  ROOT g = f32[] get-tuple-element(p), index=1\n}\n",
     "tuple-shaped entry parameters"),
    ("HloModule m\n\nENTRY e {\n  p = f32[<=4] parameter(0)\n  ROOT n = f32[<=4] negate(p)\n}\n",
     "dynamic dimension"),
])
def test_unsupported_signatures(text, match):
    with pytest.raises(NotImplementedError, match=match):
        read_signature(text)


@pytest.mark.parametrize("text, match", [
    ("HloModule m\n\nENTRY e {\n  ROOT c = f32[2 constant(1)\n}\n", "line 4"),
    ("HloModule m, input_output_alias={ {0}: (x, {}) }\n\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n",
     "malformed input_output_alias"),
])
def test_malformed_text_is_a_value_error(text, match):
    with pytest.raises(ValueError, match=match):
        read_signature(text)
