#!/bin/sh
# Bazel test //:python_module_test: the _exla.so that Bazel built loads into
# the local Python (@local_python) and works.
#   $1  path of _exla.so     $2  script that runs that Python
set -eu
so="$1"
python="$2"
dir="$(cd "$(dirname "$so")" && pwd)"
"$python" - "$dir" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import _exla

text = """HloModule m, entry_computation_layout={(f32[8]{0}, f32[8]{0})->f32[8]{0}}

ENTRY main.4 {
  p0.1 = f32[8]{0} parameter(0)
  p1.2 = f32[8]{0} parameter(1)
  dead.3 = f32[8]{0} multiply(p0.1, p1.2)
  ROOT sum.4 = f32[8]{0} add(p0.1, p1.2)
}
"""
assert " ".join(_exla.round_trip(text).split()) == " ".join(text.split())
options = _exla.Options()
options.passes = ["dce"]
optimized = _exla.optimize(text, options)
out, records = optimized.text, optimized.passes
assert "dead.3" not in out and "ROOT sum.4" in out, out
assert records[0].name == "dce" and records[0].changed, records
try:
    _exla.round_trip("HloModule m\n\nENTRY main {\n  x = f32[2 parameter(0)\n}\n")
except ValueError as e:
    assert "line 4" in str(e), e
else:
    raise AssertionError("malformed text was accepted")
signature = _exla.read_signature(text)
assert [p.dims for p in signature.parameters] == [(8,), (8,)], signature
assert signature.outputs[0].element_type == "f32" and not signature.output_is_tuple
assert "dce" in _exla.cleanup_passes()
print("python_module_test: _exla.so from Bazel works with", sys.executable)
PY
