"""xla_patches/: the XLA patch adds exactly the files kept in xla_patches/src/.

The C++ syntax check against TensorFlow's XLA headers is
xla_patches/check_syntax.sh (run by .ci/bazel_check.sh); this test only keeps
the patch and its source copies in step, which needs nothing but Python.
"""

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
PATCH_DIR = os.path.join(os.path.dirname(HERE), "xla_patches")

def _patchtool():
    spec = importlib.util.spec_from_file_location(
        "exla_patchtool", os.path.join(PATCH_DIR, "patchtool.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

def test_patch_adds_exactly_the_src_files():
    tool = _patchtool()
    assert tool.check() == 0

def test_patch_changes_the_expected_xla_files():
    tool = _patchtool()
    sections = tool.load_patch()
    changed = sorted(tool.section_path(s) for s in sections if not tool.is_new_file(s))
    assert changed == [
        "WORKSPACE",
        "xla/BUILD",
        "xla/debug_options_flags.cc",
        "xla/service/cpu/BUILD",
        "xla/service/cpu/cpu_compiler.cc",
        "xla/service/gpu/BUILD",
        "xla/service/gpu/gpu_compiler.cc",
        "xla/xla.proto",
    ]

def test_patch_adds_both_flags():
    with open(os.path.join(PATCH_DIR, "exla_xla.patch"), encoding="utf-8") as f:
        text = f.read()
    for flag in ("xla_tensor_size_threshold", "xla_tensor_split_size"):
        assert "+  optional string %s = " % flag in text
        assert '+      "%s",' % flag in text

def test_check_detects_a_stale_copy(tmp_path, monkeypatch):
    tool = _patchtool()
    src = tmp_path / "src"
    for rel in tool.src_files():
        dest = src / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        with open(os.path.join(tool.SRC, rel), encoding="utf-8") as f:
            dest.write_text(f.read(), encoding="utf-8")
    monkeypatch.setattr(tool, "SRC", str(src))
    assert tool.check() == 0
    first = src / tool.src_files()[0]
    first.write_text(first.read_text(encoding="utf-8") + "// edited\n", encoding="utf-8")
    assert tool.check() == 1
