#!/usr/bin/env bash
# Checks xla_patches/ without an XLA checkout (CI cannot download XLA):
#   1. exla_xla.patch adds exactly the files in xla_patches/src/ (patchtool.py);
#   2. every C++ file the patch adds, and the lines it adds to existing XLA
#      C++ files, compile with `g++ -std=c++17 -fsyntax-only` against the XLA
#      headers shipped in the TensorFlow wheel plus exla's cc/ headers
#      (syntax_harness.py prepares them);
#   3. the size parser the patch adds behaves as exla's size syntax says
#      (compiled and run: it depends on the standard library only).
# It fails when the adapter no longer matches XLA's API as shipped in the
# installed TensorFlow. It does not build XLA and does not apply the patch:
# README.md says how to do that and what was verified where.
#
# Environment: PYTHON (default: python, else python3) is the interpreter
# whose tensorflow is used; CXX (default g++).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
PYTHON="${PYTHON:-$(command -v python || command -v python3)}"
CXX="${CXX:-g++}"

"$PYTHON" "$here/patchtool.py" check

tf_dir="$("$PYTHON" -c '
import importlib.util, os, sys
spec = importlib.util.find_spec("tensorflow")
if spec is None or not spec.submodule_search_locations:
    sys.exit("tensorflow is not installed for " + sys.executable)
print(list(spec.submodule_search_locations)[0])
')"
tf_inc="$tf_dir/include"
if [[ ! -f "$tf_inc/xla/hlo/ir/hlo_module.h" ]]; then
  echo "check_syntax: $tf_inc has no XLA headers" >&2
  exit 1
fi
tf_version="$("$PYTHON" -c '
import importlib.metadata as m
print(m.version("tensorflow"))' 2>/dev/null || echo unknown)"
case "$tf_version" in
  2.21.*) ;;
  *) echo "check_syntax: warning: the patch is pinned to TensorFlow 2.21's XLA;" \
          "checking against tensorflow $tf_version" >&2 ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$PYTHON" "$here/syntax_harness.py" "$tf_inc" "$work" > "$work/units.txt"

# Order matters: the stand-in xla.pb.h and the patch's own files come before
# the wheel's headers.
flags=(
  -std=c++17 -fsyntax-only -fexceptions -w
  -I"$work/include"
  -I"$here/src"
  -I"$repo/cc"
  -I"$tf_inc"
  -I"$tf_inc/external/highwayhash"
  -I"$tf_inc/external/farmhash_archive/src"
)

echo "check_syntax: $CXX ${flags[*]} <unit>  (tensorflow $tf_version, $tf_inc)"
status=0
# Compile two units at a time (each takes about 10 s).
jobs_max="$(nproc 2>/dev/null || echo 2)"
pids=()
units=()
done_count=0
report() {  # report INDEX: wait for unit INDEX and print its result
  local unit="${units[$1]}"
  if wait "${pids[$1]}"; then
    echo "ok   ${unit#"$work/"}"
  else
    status=1
    echo "FAIL ${unit#"$work/"}"
    cat "$work/$(basename "$unit").log"
  fi
}
while IFS= read -r unit; do
  "$CXX" "${flags[@]}" "$unit" > "$work/$(basename "$unit").log" 2>&1 &
  pids+=("$!")
  units+=("$unit")
  if (( ${#pids[@]} - done_count >= jobs_max )); then
    report "$done_count"
    done_count=$((done_count + 1))
  fi
done < "$work/units.txt"
while (( done_count < ${#pids[@]} )); do
  report "$done_count"
  done_count=$((done_count + 1))
done

# The size parser: compile and run its self-check.
"$CXX" -std=c++17 -O0 -Wall -Wextra -Werror -I"$here/src" \
  "$here/selfcheck/exla_size_selfcheck.cc" "$here/src/xla/service/exla/exla_size.cc" \
  -o "$work/exla_size_selfcheck"
if "$work/exla_size_selfcheck"; then
  echo "ok   exla_size self-check"
else
  status=1
fi

echo "check_syntax: not compiled here (changed XLA files that are not C++):"
sed 's/^/  /' "$work/unchecked.txt"
if (( status != 0 )); then
  echo "check_syntax: FAILED" >&2
  exit 1
fi
echo "check_syntax: OK"
