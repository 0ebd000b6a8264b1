#!/usr/bin/env python3
"""Keeps exla_xla.patch consistent with the sources in xla_patches/src/.

The patch adds new files to XLA (everything under src/, at the same relative
path) and changes a few existing XLA files. The new files' text lives in src/
so that the syntax check compiles exactly what the patch adds; this tool
rebuilds the new-file sections of the patch from src/ and checks that they
agree.

  patchtool.py check   exit 1 unless every new file in the patch equals its
                       src/ copy and every src/ file is in the patch
  patchtool.py regen   rewrite the new-file sections from src/, keeping the
                       sections that change existing XLA files as they are
  patchtool.py list    print the paths the patch adds and the paths it changes

Standard library only.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PATCH = os.path.join(HERE, "exla_xla.patch")
SRC = os.path.join(HERE, "src")


def src_files():
    """Relative paths (posix) of every file under src/, sorted."""
    found = []
    for root, dirs, files in os.walk(SRC):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            found.append(os.path.relpath(full, SRC).replace(os.sep, "/"))
    return sorted(found)


def read_text(path):
    with open(path, "r", encoding="utf-8", newline="") as f:
        return f.read()


def split_sections(patch_text):
    """Splits a git-style patch into per-file sections (lists of lines)."""
    sections = []
    current = None
    for line in patch_text.splitlines(keepends=True):
        if line.startswith("diff --git "):
            current = [line]
            sections.append(current)
        elif current is not None:
            current.append(line)
        elif line.strip():
            raise ValueError("text before the first 'diff --git' line: %r" % line)
    return sections


def section_path(section):
    # "diff --git a/PATH b/PATH"
    header = section[0].rstrip("\n")
    parts = header.split(" ")
    if len(parts) != 4 or not parts[3].startswith("b/"):
        raise ValueError("unexpected header: %r" % header)
    return parts[3][2:]


def is_new_file(section):
    return any(line.startswith("new file mode") for line in section[1:4])


def added_lines(section):
    """The '+' lines of a section's hunks, without the leading '+'."""
    out = []
    in_hunk = False
    for line in section:
        if line.startswith("@@ "):
            in_hunk = True
        elif in_hunk and line.startswith("+"):
            out.append(line[1:])
    return out


def new_file_content(section):
    """The text a new-file section creates."""
    text = "".join(added_lines(section))
    if any(line.startswith("\\ No newline at end of file") for line in section):
        text = text[:-1] if text.endswith("\n") else text
    return text


def new_file_section(rel_path, text):
    if not text:
        raise ValueError("%s is empty; a patch cannot add an empty file "
                         "portably" % rel_path)
    if not text.endswith("\n"):
        raise ValueError("%s must end with a newline" % rel_path)
    body = text.splitlines(keepends=True)
    out = [
        "diff --git a/%s b/%s\n" % (rel_path, rel_path),
        "new file mode 100644\n",
        "--- /dev/null\n",
        "+++ b/%s\n" % rel_path,
        "@@ -0,0 +1,%d @@\n" % len(body),
    ]
    out.extend("+" + line for line in body)
    return out


def load_patch():
    return split_sections(read_text(PATCH))


def check():
    problems = []
    sections = load_patch()
    added = {}
    changed = []
    for section in sections:
        path = section_path(section)
        if is_new_file(section):
            if path in added:
                problems.append("%s is added twice" % path)
            added[path] = new_file_content(section)
        else:
            changed.append(path)
    expected = src_files()
    for rel in expected:
        if rel not in added:
            problems.append("src/%s is not in the patch (run: patchtool.py regen)"
                            % rel)
        elif added[rel] != read_text(os.path.join(SRC, rel)):
            problems.append("the patch's %s differs from src/%s (run: "
                            "patchtool.py regen)" % (rel, rel))
    for rel in sorted(added):
        if rel not in expected:
            problems.append("the patch adds %s, which has no copy in src/" % rel)
    for rel in changed:
        if rel in expected:
            problems.append("the patch changes %s, which src/ says is new" % rel)
    if problems:
        for p in problems:
            print("patchtool: " + p, file=sys.stderr)
        return 1
    print("patchtool: %s adds %d files equal to src/ and changes %d existing "
          "files" % (os.path.basename(PATCH), len(added), len(changed)))
    return 0


def regen():
    kept = [s for s in load_patch() if not is_new_file(s)]
    out = []
    for section in kept:
        out.extend(section)
    for rel in src_files():
        out.extend(new_file_section(rel, read_text(os.path.join(SRC, rel))))
    with open(PATCH, "w", encoding="utf-8", newline="") as f:
        f.write("".join(out))
    return check()


def list_paths():
    for section in load_patch():
        kind = "add" if is_new_file(section) else "change"
        print("%-6s %s" % (kind, section_path(section)))
    return 0


def main(argv):
    commands = {"check": check, "regen": regen, "list": list_paths}
    if len(argv) != 2 or argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    return commands[argv[1]]()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
