#!/usr/bin/env bash
# exla's C++ core under AddressSanitizer and UndefinedBehaviorSanitizer
# (`make sanitize`): builds the C++ tests and the Python extension with
# -fsanitize=address,undefined into build/sanitize/, then runs
#   1. every C++ test binary (tests/cc/*_test.cc on the test harness), leaks
#      checked;
#   2. the Python IR tests (tests/ir: the round-trip corpus, parse errors, the
#      verifier) against the sanitized extension, with the ASan runtime
#      preloaded into Python (leak checking off: CPython and TensorFlow keep
#      memory until exit by design).
# Any sanitizer report fails the run (halt_on_error). Needs g++ with libasan
# and libubsan (Debian: g++), and the Python that has exla's dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
CXX="${CXX:-g++}"
OUT=build/sanitize
JOBS="${JOBS:-2}"
FLAGS=(-std=c++17 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -I.
       -fno-sanitize-recover=undefined -Icc)
mkdir -p "$OUT/obj" "$OUT/python"
start=$(date +%s)

# Object files, compiled in parallel and only when their source changed.
sources=$(find cc -name '*.cc' | sort)
pybind_include=$("$PYTHON" -c 'import pybind11; print(pybind11.get_include())')
python_include=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
compile() {  # source object; recompiled when it or a header it includes changed
  mkdir -p "$(dirname "$2")"
  local stale=0
  if [ ! -e "$2" ] || [ "$1" -nt "$2" ]; then
    stale=1
  elif [ -e "$2.d" ]; then
    for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$2.d"); do
      if [ "$dep" -nt "$2" ]; then stale=1; break; fi
    done
  fi
  if [ "$stale" = 1 ]; then
    "$CXX" "${FLAGS[@]}" -fPIC -isystem "$pybind_include" -isystem "$python_include" \
      -MMD -MF "$2.d" -c "$1" -o "$2"
  fi
}
export -f compile
export CXX OUT pybind_include python_include
export FLAGS_STR="${FLAGS[*]}"
support="tests/cc/test_harness.cc tests/cc/filecheck.cc tests/cc/pass_test_bench.cc"
tests=$(find tests/cc -name '*_test.cc' | sort)
printf '%s\n' $sources $support $tests |
  xargs -P "$JOBS" -I{} bash -c 'FLAGS=($FLAGS_STR); compile {} "$OUT/obj/{}.o"'
core_objects=$(printf "$OUT/obj/%s.o\n" $sources | grep -v /bindings/)
binding_objects=$(printf "$OUT/obj/%s.o\n" $sources | grep /bindings/)
support_objects=$(printf "$OUT/obj/%s.o\n" $support)

mkdir -p "$OUT/cctest"
for t in $tests; do
  "$CXX" "${FLAGS[@]}" "$OUT/obj/$t.o" $support_objects $core_objects \
    -o "$OUT/cctest/$(basename "$t" .cc)"
done
rm -rf "$OUT/python/exla"
cp -r python/exla "$OUT/python/exla"
rm -f "$OUT"/python/exla/_exla*.so
"$CXX" "${FLAGS[@]}" -shared $core_objects $binding_objects -o "$OUT/python/exla/_exla$suffix"
built=$(date +%s)
echo "sanitize: built in $((built - start)) s"

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in "$OUT"/cctest/*_test; do
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 "$t"
done
tested_cc=$(date +%s)
echo "sanitize: C++ tests passed in $((tested_cc - built)) s"

# The ASan runtime must be the first library in the process, and libstdc++
# must be loaded when it starts: ASan intercepts __cxa_throw and finds the
# real one only then (Python itself does not link libstdc++).
asan_runtime=$("$CXX" -print-file-name=libasan.so)
cxx_runtime=$("$CXX" -print-file-name=libstdc++.so)
LD_PRELOAD="$asan_runtime $cxx_runtime" \
ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:detect_odr_violation=0 \
PYTHONPATH="$PWD/$OUT/python:$PWD${PYTHONPATH:+:$PYTHONPATH}" EXLA_REQUIRE_EXTENSION=1 \
  "$PYTHON" -m pytest -q -p no:cacheprovider tests/ir "$@"
echo "sanitize: Python IR tests passed in $(( $(date +%s) - tested_cc )) s;" \
     "total $(( $(date +%s) - start )) s"
