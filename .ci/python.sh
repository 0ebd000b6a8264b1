#!/usr/bin/env bash
# Prints the path of a Python interpreter of version $1 (e.g. 3.12), or fails.
# On these machines pyenv provides it, but its `python3.12` shim only runs
# when 3.12 is a selected pyenv version, so the interpreter itself is used.
set -euo pipefail
want="$1"
works() { [[ -x "$1" ]] && [[ "$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" == "$want" ]]; }
candidate="$(command -v "python$want" 2>/dev/null || true)"
if [[ -n "$candidate" ]] && works "$candidate"; then echo "$candidate"; exit 0; fi
for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$want".*/bin/python"$want" \
                 /usr/bin/python"$want" /usr/local/bin/python"$want"; do
  if works "$candidate"; then echo "$candidate"; exit 0; fi
done
echo "no Python $want found (looked for python$want on PATH and in pyenv's versions)" >&2
exit 1
