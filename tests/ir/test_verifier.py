"""exla's HLO verifier (cc/ir/verifier.cc): malformed modules are refused with a
ValueError naming the problem and where it is; every corpus program and every
pass output verifies clean."""

from __future__ import annotations


import pytest

from experiments.corpus import programs
from tests._extension import core_optimize, load_extension  # noqa: E402
from tests._frameworks import require  # noqa: E402

_exla = load_extension()

import exla  # noqa: E402
from exla.bridge import xla  # noqa: E402


def _module(entry: str, extra: str = "") -> str:
    return f"HloModule m\n{extra}\nENTRY main {{\n{entry}\n}}\n"


ADD = """
add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}"""

LESS = """
less {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT l = pred[] compare(x, y), direction=LT
}"""

# (name, module text, words the error must contain)
INVALID = [
    ("duplicate parameter number",
     _module("  a = f32[4] parameter(0)\n  b = f32[4] parameter(0)\n  ROOT c = f32[4] add(a, b)"),
     ["duplicate parameter number 0", "line 5, column 3"]),
    ("gap in parameter numbers",
     _module("  a = f32[4] parameter(0)\n  b = f32[4] parameter(2)\n  ROOT c = f32[4] add(a, b)"),
     ["parameter numbers must be 0..1", "1 is missing"]),
    ("two ENTRY computations",
     "HloModule m\nENTRY first {\n  ROOT a = f32[] parameter(0)\n}\n"
     "ENTRY second {\n  ROOT b = f32[] parameter(0)\n}\n",
     ["second ENTRY", "'first'", "line 5, column 7"]),
    ("negative dimension",
     _module("  a = f32[-3] parameter(0)\n  ROOT n = f32[-3] negate(a)"),
     ["negative dimension -3"]),
    ("constant with the wrong element count",
     _module("  ROOT c = f32[4] constant({1, 2, 3})"),
     ["constant literal has 3 element(s)", "holds 4"]),
    ("constant of a matrix with the wrong element count",
     _module("  ROOT c = s32[2,2] constant({ {1, 2}, {3, 4}, {5, 6} })"),
     ["has 6 element(s)", "holds 4"]),
    ("rank-3 constant whose index comments hide a missing value",
     _module("  ROOT c = f32[1,1,2] constant({ { /*i0=0*/ { /*i1=0*/ {1} } } })"),
     ["constant literal has 1 element(s)", "holds 2"]),
    ("constant with a comment that is not closed",
     _module("  ROOT c = f32[1,1,1] constant({ /*i0=0 { {1} } })"),
     ["constant literal has", "comment"]),
    ("recursive call",
     "HloModule m\nf {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=f\n}\n"
     "ENTRY main {\n  a = f32[] parameter(0)\n  ROOT c = f32[] call(a), to_apply=f\n}\n",
     ["recursive computation call", "'f' -> 'f'"]),
    ("mutually recursive calls",
     "HloModule m\ng {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=f\n}\n"
     "f {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=g\n}\n"
     "ENTRY main {\n  a = f32[] parameter(0)\n  ROOT c = f32[] call(a), to_apply=f\n}\n",
     ["recursive computation call"]),
    ("add of mismatched shapes",
     _module("  a = f32[4] parameter(0)\n  b = f32[5] parameter(1)\n  ROOT c = f32[4] add(a, b)"),
     ["add operands differ: f32[4] vs f32[5]", "line 6, column 8"]),
    ("add with a wrong result shape",
     _module("  a = f32[4] parameter(0)\n  ROOT c = f32[8] add(a, a)"),
     ["add has shape f32[8] but its operands give f32[4]"]),
    ("dot with a wrong result shape",
     _module("  a = f32[2,3] parameter(0)\n  b = f32[3,5] parameter(1)\n"
             "  ROOT d = f32[2,6] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
     ["dot has shape f32[2,6] but its operands give f32[2,5]"]),
    ("dot contracting sizes differ",
     _module("  a = f32[2,3] parameter(0)\n  b = f32[4,5] parameter(1)\n"
             "  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
     ["dot pairs lhs dimension 1 (size 3) with rhs dimension 0 (size 4)"]),
    ("dot dimension out of range",
     _module("  a = f32[2,3] parameter(0)\n  b = f32[3,5] parameter(1)\n"
             "  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}"),
     ["out of range for rank 2"]),
    ("reduce dimensions out of range",
     _module("  a = f32[4,5] parameter(0)\n  z = f32[] constant(0)\n"
             "  ROOT r = f32[4] reduce(a, z), dimensions={2}, to_apply=add_f32", ADD),
     ["reduce dimensions={2} out of range for rank 2"]),
    ("broadcast dimensions out of range",
     _module("  a = f32[4] parameter(0)\n  ROOT b = f32[4,5] broadcast(a), dimensions={3}"),
     ["broadcast dimensions={3} out of range for rank 2"]),
    ("transpose that is not a permutation",
     _module("  a = f32[4,5] parameter(0)\n  ROOT t = f32[5,4] transpose(a), dimensions={0,0}"),
     ["repeats dimension 0"]),
    ("slice out of bounds",
     _module("  a = f32[4] parameter(0)\n  ROOT s = f32[6] slice(a), slice={[0:6]}"),
     ["slice bounds [0:6:1] out of range"]),
    ("concatenate of mismatched operands",
     _module("  a = f32[4,2] parameter(0)\n  b = f32[4,3] parameter(1)\n"
             "  ROOT c = f32[8,2] concatenate(a, b), dimensions={0}"),
     ["differ outside dimension 0"]),
    ("get-tuple-element out of range",
     _module("  a = f32[4] parameter(0)\n  t = (f32[4]) tuple(a)\n"
             "  ROOT g = f32[4] get-tuple-element(t), index=1"),
     ["get-tuple-element index out of range"]),
    ("shape whose size overflows int64",
     _module("  a = f32[4611686018427387904,4] parameter(0)\n"
             "  ROOT n = f32[4611686018427387904,4] negate(a)"),
     ["shape f32[4611686018427387904,4] has more than 2^63 - 1 bytes", "line 4, column 3"]),
    ("tuple whose size overflows int64",
     _module("  t = (f32[1152921504606846976], f32[1152921504606846976]) parameter(0)\n"
             "  ROOT g = f32[1152921504606846976] get-tuple-element(t), index=0"),
     ["has more than 2^63 - 1 bytes"]),
    ("compare without a direction",
     _module("  a = f32[4] parameter(0)\n  ROOT c = pred[4] compare(a, a)"),
     ["compare needs a direction"]),
    ("constant nested deeper than its rank",
     _module("  ROOT c = f32[1] constant({ {1} })"),
     ["braces nested 2 levels deep in a constant of shape f32[1]"]),
    ("flat constant of a matrix",
     _module("  ROOT c = f32[2,2] constant({1, 2, 3, 4})"),
     ["values at nesting level 1, not 2"]),
    ("ragged constant",
     _module("  ROOT c = f32[2,2] constant({ {1, 2, 3}, {4} })"),
     ["3 entries along dimension 1 where it has 2"]),
    ("sort without a comparator",
     _module("  a = f32[4] parameter(0)\n  ROOT s = f32[4] sort(a), dimensions={0}"),
     ["sort needs a 'to_apply' computation"]),
    ("sort of operands of different sizes",
     _module("  a = f32[4] parameter(0)\n  b = s32[5] parameter(1)\n"
             "  ROOT s = (f32[4], s32[5]) sort(a, b), dimensions={0}, to_apply=less", LESS),
     ["sort operands differ: f32[4] vs s32[5]"]),
    ("reshape that changes the element count",
     _module("  a = f32[4,5] parameter(0)\n  ROOT r = f32[21] reshape(a)"),
     ["changes the element count"]),
    # Found by the mutation fuzzer (experiments/fuzzing/fuzz_mutate.py); XLA refuses each.
    ("dynamic-update-slice with a start index missing",
     _module("  a = f32[4,5] parameter(0)\n  u = f32[2,5] parameter(1)\n"
             "  i = s32[] parameter(2)\n"
             "  ROOT d = f32[4,5] dynamic-update-slice(a, u, i)"),
     ["dynamic-update-slice takes 2 start index operand(s) for f32[4,5], has 1"]),
    ("dynamic-slice with a float start index",
     _module("  a = f32[4,5] parameter(0)\n  i = s32[] parameter(1)\n"
             "  f = f32[] parameter(2)\n"
             "  ROOT d = f32[2,5] dynamic-slice(a, i, f), dynamic_slice_sizes={2,5}"),
     ["start index 'f' must be an integer scalar"]),
    ("reduce whose computation takes another type",
     _module("  a = pred[4,5] parameter(0)\n  z = pred[] constant(false)\n"
             "  ROOT r = pred[4] reduce(a, z), dimensions={1}, to_apply=add_f32", ADD),
     ["reduction computation 'add_f32' parameter 0 is f32[], but the values reduced are pred"]),
    ("reduce of bf16 by an f32 computation",
     _module("  a = bf16[4,5] parameter(0)\n  z = bf16[] constant(0)\n"
             "  ROOT r = f32[4] reduce(a, z), dimensions={1}, to_apply=add_f32", ADD),
     ["reduction computation 'add_f32' parameter 0 is f32[], but the values reduced are bf16"]),
    ("bitcast to a tuple",
     _module("  a = f32[4] parameter(0)\n  ROOT b = (f32[4]) bitcast(a)"),
     ["bitcast must have an array shape"]),
    ("bitcast without an operand",
     _module("  a = f32[4] parameter(0)\n  ROOT b = f32[4] bitcast()"),
     ["bitcast takes 1 operand(s), has 0"]),
    ("dynamic-update-slice with one operand (crashed the splitter)",
     _module("  a = f32[4,5] parameter(0)\n  ROOT d = f32[4,5] dynamic-update-slice(a)"),
     ["dynamic-update-slice takes at least", "has 1"]),
    ("reduce of pred with a float initial value",
     _module("  a = pred[4,5] parameter(0)\n  z = f32[] constant(0)\n"
             "  ROOT r = f32[4] reduce(a, z), dimensions={1}, to_apply=add_f32", ADD),
     ["reduce operand 0 is pred[4,5] but its initial value is f32[]"]),
    ("set-dimension-size of a dimension the operand lacks",
     _module("  a = f32[4,5] parameter(0)\n  n = s32[] parameter(1)\n"
             "  ROOT s = f32[4,5] set-dimension-size(a, n), dimensions={4}"),
     ["set-dimension-size dimensions={4} out of range for rank 2"]),
    ("constant whose literal is a name (an opcode swapped for constant)",
     _module("  a = f32[] parameter(0)\n  ROOT c = f32[] constant(a)"),
     ["constant literal has 'a', which is not a value"]),
    ("constant with a word among its values",
     _module("  ROOT c = f32[3] constant({1, two, 3})"),
     ["constant literal has 'two', which is not a value"]),
    ("sort comparator of another type",
     _module("  a = f32[4] parameter(0)\n  b = u8[4] parameter(1)\n"
             "  ROOT s = (f32[4], u8[4]) sort(a, b), dimensions={0}, to_apply=less", LESS),
     ["sort comparator 'less' parameter 2 is s32[], not a scalar of operand 1's type"]),
    ("scatter naming a dimension its operand lacks",
     _module("  a = f32[4,5] parameter(0)\n  i = s32[3,1] parameter(1)\n"
             "  u = f32[3,5] parameter(2)\n"
             "  ROOT s = f32[4,5] scatter(a, i, u), update_window_dims={1}, "
             "inserted_window_dims={4}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
             "to_apply=add_f32", ADD),
     ["scatter inserted_window_dims={4} out of range for rank 2"]),
    ("gather with a slice size too few",
     _module("  a = f32[4,5] parameter(0)\n  i = s32[3,1] parameter(1)\n"
             "  ROOT g = f32[3,5] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, "
             "start_index_map={0}, index_vector_dim=1, slice_sizes={1}"),
     ["gather slice_sizes={1} must give one size per operand dimension (2)"]),
    ("pred constant of -inf",
     _module("  ROOT c = pred[] constant(-inf)"),
     ["constant literal has '-inf', which is not a value of pred"]),
    ("integer constant with a fraction",
     _module("  ROOT c = s32[2] constant({1, 2.5})"),
     ["'2.5', which is not a value of s32"]),
    ("topk of another element type",
     _module("  a = f16[5,7] parameter(0)\n  ROOT t = (f32[5,2], s32[5,2]) topk(a), k=2, "
             "largest=true"),
     ["topk has shape (f32[5,2], s32[5,2]) but its operand gives (f16[5,2], s32[5,2])"]),
    ("parameter_replication entry that is neither true nor false",
     _module("  ROOT a = f32[4] parameter(0), parameter_replication={false`}"),
     ["parameter_replication entry 'false`' is neither true nor false"]),
    ("parameter_replication of the wrong length",
     _module("  ROOT a = (f32[4], f32[2]) parameter(0), parameter_replication={false}"),
     ["parameter has 2 leaf buffer(s) but parameter_replication has 1 element(s)"]),
]


@pytest.mark.parametrize("name,text,words", INVALID, ids=[case[0] for case in INVALID])
def test_invalid_module_is_refused(name, text, words):
    with pytest.raises(ValueError) as info:
        _exla.verify(text)
    message = str(info.value)
    for word in words:
        assert word in message, f"{name}: {word!r} not in {message!r}"
    # The public API verifies its input before any pass runs, and so does
    # every other reader of module text.
    with pytest.raises(ValueError, match="invalid HLO module"):
        exla.optimize_hlo(text, threshold="1KB")
    for reader in (_exla.round_trip, _exla.module_summary, _exla.tensor_sizes):
        with pytest.raises(ValueError, match="invalid HLO module"):
            reader(text)


def test_unknown_opcodes_are_carried_not_verified():
    text = _module("  a = f32[4] parameter(0)\n"
                   "  ROOT x = f32[7,7] some-future-op(a), whatever={1,2}")
    _exla.verify(text)
    out, _ = exla.optimize_hlo(text, threshold="1KB")
    assert "some-future-op(a), whatever={1,2}" in out


def test_start_indices_and_reducers_xla_accepts_verify():
    """The forms XLA takes: a start index vector, and an initial value of
    another floating precision than the values reduced (XLA's CPU compiler
    accepts this one; it refuses a computation of another type than the
    values, see INVALID)."""
    _exla.verify(_module("  a = f32[4,5] parameter(0)\n  v = s32[2] parameter(1)\n"
                         "  ROOT d = f32[2,5] dynamic-slice(a, v), dynamic_slice_sizes={2,5}"))
    _exla.verify(_module("  a = f32[4,5] parameter(0)\n  z = bf16[] constant(0)\n"
                         "  ROOT r = f32[4] reduce(a, z), dimensions={1}, to_apply=add_f32",
                         ADD))
    _exla.verify(_module("  ROOT a = (f32[4], f32[2]) parameter(0), "
                         "parameter_replication={false,true}"))


def test_constants_of_every_value_form_verify():
    """What XLA prints: signs, fractions, exponents, inf, nan (with a
    payload), booleans, an elided literal. (Index comments such as `/*i0=0*/`
    are skipped too, but their digits are still counted as elements on this
    branch: the lead's fix of cc/ir/literal_text.cc comes with main.)"""
    _exla.verify(_module("  a = f32[8] constant({-1, +2.5, 3., .5e-3, 1e+10, -inf, nan, "
                         "-nan(0x7fc00001)})\n"
                         "  b = pred[3] constant({true, false, 1})\n"
                         "  d = f32[1000] constant({...})\n"
                         "  ROOT e = f64[] constant(-1.25E-05)"))


def test_scatter_and_gather_xla_accepts_verify():
    _exla.verify(_module("  a = f32[4,5] parameter(0)\n  i = s32[3,1] parameter(1)\n"
                         "  u = f32[3,5] parameter(2)\n"
                         "  g = f32[3,5] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, "
                         "start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}\n"
                         "  ROOT s = f32[4,5] scatter(a, i, u), update_window_dims={1}, "
                         "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                         "index_vector_dim=1, to_apply=add_f32", ADD))


def test_reduce_takes_its_type_from_its_computation():
    """Seed 28 of the mutation fuzzer (mutant 1281): f32 values with a bf16
    initial value, reduced by an f32 computation, give f32, as in XLA's
    shape inference (exla took the initial value's type and refused it)."""
    _exla.verify(_module("  a = f32[4,5] parameter(0)\n  z = bf16[] constant(0)\n"
                         "  ROOT r = f32[4] reduce(a, z), dimensions={1}, to_apply=add_f32", ADD))
    _exla.verify(_module("  a = f32[5,7] parameter(0)\n"
                         "  ROOT t = (f32[5,2], s32[5,2]) topk(a), k=2, largest=true"))


def test_valid_small_modules_verify():
    _exla.verify(_module("  a = f32[4,5] parameter(0)\n  z = f32[] constant(0)\n"
                         "  r = f32[4] reduce(a, z), dimensions={1}, to_apply=add_f32\n"
                         "  b = f32[4,3] broadcast(r), dimensions={0}\n"
                         "  t = f32[3,4] transpose(b), dimensions={1,0}\n"
                         "  c = f32[4] constant({1, 2, 3, 4})\n"
                         "  e = f32[2,0] constant({ {}, {} })\n"
                         "  m = pred[2,2] constant({ {true, false}, {0, 1} })\n"
                         "  s = f32[2] slice(c), slice={[0:4:2]}\n"
                         "  ROOT d = f32[4,4] dot(b, t), lhs_contracting_dims={1}, "
                         "rhs_contracting_dims={0}", ADD))
    _exla.verify(_module("  a = f32[4] parameter(0)\n  b = s32[4] parameter(1)\n"
                         "  ROOT s = (f32[4], s32[4]) sort(a, b), dimensions={0}, to_apply=less",
                         LESS))


def test_constants_with_index_comments_verify_as_xla_reads_them():
    # XLA prints constants of rank 3 and more with an index comment per row;
    # the digits in the comments are not values.
    text = _module("  c = f32[1,1,1,1] constant({ { /*i0=0*/ { /*i1=0*/ {1} } } })\n"
                   "  d = s32[2,1,2] constant({ { /*i0=0*/ {1, 2} }, { /*i0=1*/ {3, 4} } })\n"
                   "  ROOT t = (f32[1,1,1,1], s32[2,1,2]) tuple(c, d)")
    _exla.verify(text)
    xla.verify(text)
    assert "/*i0=1*/ {3, 4}" in _exla.round_trip(text)


def test_tensorflow_tile_of_a_scalar_mask_constant_verifies():
    # TensorFlow's causal-attention gradient tiles a rank-4 mask constant.
    require("tensorflow")
    import tensorflow as tf

    @tf.function(jit_compile=True)
    def masked(x):
        mask = tf.tile(tf.constant([[[[1.0]]]]), [1, 1, 4, 4])
        return tf.reduce_sum(x * tf.linalg.band_part(mask, -1, 0))

    x = tf.ones([1, 1, 4, 4])
    text = xla.proto_to_text(masked.experimental_get_compiler_ir(x)(stage="hlo_serialized"))
    assert "/*i0=0*/" in text
    _exla.verify(text)
    out, _ = exla.optimize_hlo(text, threshold=16)
    xla.verify(out)


@pytest.mark.parametrize("name", programs.names())
def test_corpus_program_and_every_pass_output_verify(name):
    text = programs.get(name).hlo_text
    _exla.verify(text)
    for passes in [None] + [[p] for p in _exla.available_passes()]:
        for threshold in (0, 16 << 10):  # 16 KB: the splitter rewrites every corpus program
            out = core_optimize(text, passes=passes, threshold=threshold).text
            try:
                _exla.verify(out)
            except ValueError as e:
                raise AssertionError(f"{name}: output of {passes or 'the pipeline'} at threshold "
                                     f"{threshold}: {e}") from None
