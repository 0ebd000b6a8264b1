"""jaxlib glue (exla.bridge.xla): HLO text <-> proto, artifacts, planned memory."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

from tests._frameworks import require

from exla.bridge import xla as bridge

require("tensorflow", module_level=True)
import tensorflow as tf


@pytest.fixture(scope="module")
def tf_proto() -> bytes:
    """HloModuleProto of a small TensorFlow program with a 64-element constant."""
    table = np.arange(64, dtype=np.float32) * 0.5 + 0.25

    @tf.function(jit_compile=True)
    def f(x, y):
        # Created inside the function, the table is an HLO constant (a
        # tf.constant captured from outside would be a parameter).
        return tf.matmul(x, y), tf.argmax(x, axis=1), tf.reduce_sum(x) * tf.constant(table)

    args = (tf.ones((3, 4)), tf.ones((4, 2)))
    return f.experimental_get_compiler_ir(*args)(stage="hlo_serialized")


def test_proto_text_round_trip(tf_proto):
    text = bridge.proto_to_text(tf_proto)
    assert text.startswith("HloModule ")
    assert "entry_computation_layout={(f32[3,4]{1,0}, f32[4,2]{1,0})->(f32[3,2]{1,0}, s64[3]{0}, f32[64]{0})}" in text
    proto = bridge.text_to_proto(text)
    assert isinstance(proto, bytes)
    assert bridge.proto_to_text(proto) == text


def test_large_constants_are_printed_in_full(tf_proto):
    text = bridge.proto_to_text(tf_proto)
    assert "{...}" not in text
    assert "31.75" in text  # the last element of the 64-element table
    long_text = bridge.proto_to_text(tf_proto, short=False)
    assert "{...}" not in long_text and "31.75" in long_text
    assert "%" in long_text and "metadata=" in long_text  # XLA's long form
    assert bridge.proto_to_text(bridge.text_to_proto(long_text)) == text


def test_text_to_proto_rejects_garbage_with_a_precise_message():
    # Syntax is XLA's parser's to judge; exla's verifier speaks first only on
    # modules it can read (below), and XLA still rejects an unknown opcode.
    with pytest.raises(ValueError, match="parse"):
        bridge.text_to_proto("this is not HLO")
    with pytest.raises(ValueError, match="bogus"):
        bridge.text_to_proto("HloModule m\nENTRY e {\n  ROOT p = f32[] bogus()\n}\n")


def test_text_to_proto_refuses_what_would_abort_xla(subprocess_env):
    # XLA's text parser CHECK-fails (the process dies) on a parameter number
    # out of range; the bridge must raise instead. In a child, so that a
    # regression kills the child, not the test run.
    code = ("from exla.bridge import xla as b\n"
            "try:\n"
            "    b.text_to_proto('HloModule m\\nENTRY e {\\n  p = f32[4] parameter(7)\\n'\n"
            "                    '  ROOT r = f32[4] negate(p)\\n}\\n')\n"
            "except ValueError as e:\n"
            "    print('ValueError:', e)\n")
    done = subprocess.run([sys.executable, "-c", code], env=subprocess_env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ValueError: invalid HLO module: line 3, column 3" in done.stdout
    assert "7 is used but 0 is missing" in done.stdout


def test_text_to_proto_reads_what_only_xla_can_parse():
    # One line, no newlines between instructions: XLA's syntax allows it.
    text = ("HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}\n"
            "ENTRY e { p = f32[3] parameter(0) ROOT n = f32[3] negate(p) }")
    assert len(bridge.text_to_proto(text)) > 0


ILL_TYPED = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[3] add(p, p)\n}\n"


def test_ill_typed_module_is_refused_before_xla_sees_it(kmv_hlo):
    # XLA's text parser would accept an ill-typed module (it does not infer
    # shapes); exla's verifier, which the bridge runs first, does not.
    for entry_point in (bridge.text_to_proto, bridge.verify, bridge.planned_memory):
        with pytest.raises(ValueError, match="invalid HLO module: line 4.*'a'"):
            entry_point(ILL_TYPED)
    bridge.verify(kmv_hlo(16))


def test_proto_to_text_rejects_garbage():
    with pytest.raises(ValueError, match="HloModuleProto"):
        bridge.proto_to_text(b"\x01\x02 definitely not a proto")
    with pytest.raises(TypeError):
        bridge.proto_to_text("HloModule m")  # type: ignore[arg-type]


def test_portable_artifact(tf_proto):
    text = bridge.proto_to_text(tf_proto)
    artifact = bridge.text_to_portable_artifact(text)
    assert artifact[:4] == b"ML\xefR"  # MLIR bytecode
    from tensorflow.compiler.mlir.stablehlo import stablehlo

    assert bridge.text_to_portable_artifact(text, stablehlo.get_current_version()) == artifact
    with pytest.raises(ValueError, match="'not-a-version'"):
        bridge.text_to_portable_artifact(text, "not-a-version")


def test_planned_memory_grows_with_problem_size(kmv_hlo):
    stats = {n: bridge.planned_memory(kmv_hlo(n)) for n in (256, 512)}
    for n, s in stats.items():
        # The n x n kernel matrix feeds a dot, so XLA must materialise it.
        assert s.temp_bytes >= n * n * 4
        assert s.argument_bytes == n * 8 * 4 + n * 4
        assert s.output_bytes == n * 4
        assert s.alias_bytes == 0
    assert stats[512].temp_bytes >= 3 * stats[256].temp_bytes
    assert stats[512].total_bytes > stats[512].temp_bytes


def test_exla_flags_in_xla_flags_do_not_abort_jaxlib(subprocess_env, kmv_hlo, tmp_path):
    # jaxlib, like TensorFlow, aborts the process on an unknown XLA flag; the
    # bridge removes exla's flags first.
    path = tmp_path / "kmv.hlo"
    path.write_text(kmv_hlo(64))
    code = ("import os, sys; from exla.bridge import xla as b; "
            "s = b.planned_memory(open(sys.argv[1]).read()); "
            "print(s.temp_bytes, os.environ.get('XLA_FLAGS'))")
    env = dict(subprocess_env,
               XLA_FLAGS="--xla_tensor_size_threshold=1GB --xla_cpu_enable_fast_math=false")
    done = subprocess.run([sys.executable, "-c", code, str(path)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    temp, flags = done.stdout.split()
    assert int(temp) >= 64 * 64 * 4
    assert flags == "--xla_cpu_enable_fast_math=false"


# The kernel matvec exp(X Xᵀ) v with X cut by rows over 8 devices, as JAX
# hands a sharded jax.jit to XLA in GSPMD's form.
SHARDED_KMV = """HloModule kmv_sharded, entry_computation_layout={(f32[512,8]{1,0}, f32[512,1]{1,0})->f32[512,1]{1,0}}

ENTRY kmv {
  x = f32[512,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  v = f32[512,1]{1,0} parameter(1), sharding={replicated}
  k = f32[512,512]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  e = f32[512,512]{1,0} exponential(k)
  ROOT kv = f32[512,1]{1,0} dot(e, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def test_planned_memory_of_a_sharded_module_is_one_devices():
    per_device = bridge.planned_memory(SHARDED_KMV)
    whole = bridge.planned_memory(SHARDED_KMV, devices=1)  # shardings ignored on one device
    # One device holds an eighth of x and all of v.
    assert per_device.argument_bytes == 512 * 8 * 4 // 8 + 512 * 4
    assert whole.argument_bytes == 512 * 8 * 4 + 512 * 4
    # Its rows of the kernel: at most a quarter of the whole 1 MB kernel.
    assert whole.temp_bytes >= 512 * 512 * 4
    assert per_device.temp_bytes <= whole.temp_bytes // 4


# A module as JAX lowers a sharded jax.jit for Shardy (jax 0.7.1's default):
# the mesh in the header, the result shardings in Shardy's custom calls, and
# XLA's converter's GSPMD copy of them on the root.
SHARDY_RESULTS = r"""HloModule m, entry_computation_layout={(f32[64,4]{1,0})->(f32[64,4]{1,0}, f32[])}, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=8]>}}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[64,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"x\"}, {}]>"}
  e = f32[64,4]{1,0} exponential(x)
  r = f32[64,4]{1,0} custom-call(e), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>"}
  zero = f32[] constant(0)
  s = f32[] reduce(e, zero), dimensions={0,1}, to_apply=add
  ROOT t = (f32[64,4]{1,0}, f32[]) tuple(r, s), sharding={{devices=[8,1]<=[8]}, {replicated}}
}
"""


def test_shardy_module_with_result_shardings_compiles_with_shardy():
    # Converted back with the root's GSPMD copy, the results would carry
    # GSPMD shardings, jaxlib would turn Shardy off and XLA's GSPMD
    # partitioner would fail on the Shardy custom calls.
    stats = bridge.planned_memory(SHARDY_RESULTS)
    assert stats.argument_bytes == 64 * 4 * 4 // 8


def test_planned_memory_counts_constant_allocations():
    # A 4 KB literal read by a loop: one constant allocation, in none of the
    # temp/argument/output figures, counted in total_bytes.
    values = ", ".join(str(i / 4) for i in range(1000))
    text = ("HloModule c\n\nENTRY c {\n  x = f32[1000] parameter(0)\n"
            f"  c = f32[1000] constant({{{values}}})\n  ROOT y = f32[1000] add(x, c)\n}}\n")
    stats = bridge.planned_memory(text)
    assert stats.constant_bytes == 4000
    assert stats.total_bytes == stats.argument_bytes + stats.output_bytes + stats.temp_bytes + 4000


def test_planned_memory_is_the_buffer_assignment_of_a_full_compile(kmv_hlo):
    # planned_memory skips LLVM's optimisations; XLA assigns buffers before
    # them, so every figure but the code size is a full compile's. A loop, a
    # fusion and a literal, as the plans exla confirms have.
    values = ", ".join(str(i / 4) for i in range(512))
    loop = f"""HloModule l

cond {{
  s = (s32[], f32[512,512]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(8)
  ROOT c = pred[] compare(i, n), direction=LT
}}

body {{
  s = (s32[], f32[512,512]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[512,512] get-tuple-element(s), index=1
  c = f32[512] constant({{{values}}})
  b = f32[512,512] broadcast(c), dimensions={{1}}
  e = f32[512,512] exponential(x)
  y = f32[512,512] dot(e, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  ROOT t = (s32[], f32[512,512]) tuple(j, y)
}}

ENTRY l {{
  x = f32[512,512] parameter(0)
  zero = s32[] constant(0)
  s = (s32[], f32[512,512]) tuple(zero, x)
  w = (s32[], f32[512,512]) while(s), condition=cond, body=body
  ROOT r = f32[512,512] get-tuple-element(w), index=1
}}
"""
    for text in (kmv_hlo(512), loop):
        full = bridge.compile_cpu(text).memory_stats()
        planned = bridge.planned_memory(text)
        assert dataclasses.replace(planned, generated_code_bytes=0) == \
            dataclasses.replace(full, generated_code_bytes=0)
    assert planned.constant_bytes >= 512 * 4


def test_constant_bytes_reads_the_wire_format():
    # The hand-written reader against protobuf's own parser (TensorFlow's classes).
    from tensorflow.compiler.xla.service import hlo_pb2

    proto = hlo_pb2.BufferAssignmentProto()
    for index, (size, constant) in enumerate([(300, True), (70000, False), (5, True)]):
        allocation = proto.buffer_allocations.add(index=index, size=size, is_constant=constant)
        allocation.assigned.add(logical_buffer_id=index, offset=0, size=size)
    proto.logical_buffers.add(id=0, size=300)
    assert bridge.constant_bytes(proto.SerializeToString()) == 305
    assert bridge.constant_bytes(b"") == 0
