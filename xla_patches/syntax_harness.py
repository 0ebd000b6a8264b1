#!/usr/bin/env python3
"""Prepares the translation units that check_syntax.sh compiles.

    syntax_harness.py TF_INCLUDE_DIR OUT_DIR

TF_INCLUDE_DIR is the `include` directory of the TensorFlow wheel (it ships
XLA's headers, generated ones included). The script writes under OUT_DIR:

  include/xla/xla.pb.h   the wheel's generated header with the DebugOptions
                         fields that the patch adds to xla.proto. protoc is not
                         available here, so each new field's accessors are
                         cloned from an existing field of the same kind
                         ("optional string xla_dump_to") in the same header,
                         i.e. from what this protobuf version generates.
  tu/*.cc                one file per check: every .h and .cc the patch adds
                         (from xla_patches/src), and, for every existing XLA
                         .cc file the patch changes, the lines the patch adds
                         to it compiled inside a stand-in for the function
                         they are added to (CONTEXTS below).

and prints the translation units, one per line. It exits non-zero when the
patch changes something it has no check for, or when a new DebugOptions field
would reuse a name or number the wheel's DebugOptions already has.

Standard library only.
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import patchtool  # noqa: E402

# For each existing XLA .cc file the patch changes: the headers the function
# around the added lines needs, and the opening/closing of a stand-in for that
# function, declaring what the added lines use from it. The "+#include" lines
# of the patch are added to the includes.
CONTEXTS = {
    "xla/debug_options_flags.cc": {
        "includes": [
            "<functional>",
            "<string>",
            "<vector>",
            "absl/log/log.h",
            "absl/strings/string_view.h",
            "xla/tsl/util/command_line_flags.h",
            "xla/xla.pb.h",
        ],
        # MakeDebugOptionsFlags(flag_list, debug_options)
        "open": (
            "namespace xla {\n"
            "void ExlaHarnessMakeDebugOptionsFlags(\n"
            "    std::vector<tsl::Flag>* flag_list, DebugOptions* debug_options) {\n"
        ),
        "close": "}\n}  // namespace xla\n",
    },
    "xla/service/cpu/cpu_compiler.cc": {
        "includes": [
            "xla/hlo/ir/hlo_module.h",
            "xla/hlo/pass/hlo_pass_pipeline.h",
            "xla/xla.pb.h",
        ],
        # CpuCompiler::RunHloPassesThroughLayoutAssn(module, ...)
        "open": (
            "namespace xla {\n"
            "namespace cpu {\n"
            "void ExlaHarnessRunHloPassesThroughLayoutAssn(HloModule* module) {\n"
            "  HloPassPipeline pipeline(\"HLO passes through layout assignment\");\n"
        ),
        "close": "}\n}  // namespace cpu\n}  // namespace xla\n",
    },
    "xla/service/gpu/gpu_compiler.cc": {
        "includes": [
            "xla/hlo/ir/hlo_module.h",
            "xla/hlo/pass/hlo_pass_pipeline.h",
            "xla/xla.pb.h",
        ],
        # RunOptimizationPasses(hlo_module, ...)
        "open": (
            "namespace xla {\n"
            "namespace gpu {\n"
            "void ExlaHarnessRunOptimizationPasses(HloModule* hlo_module) {\n"
            "  const DebugOptions& debug_options =\n"
            "      hlo_module->config().debug_options();\n"
            "  HloPassPipeline pipeline(\"optimization\");\n"
        ),
        "close": "}\n}  // namespace gpu\n}  // namespace xla\n",
    },
}

# Changed files that cannot be compiled here, with the reason (reported).
NOT_COMPILABLE = {
    "WORKSPACE": "Bazel workspace file; needs XLA's Bazel build",
    "xla/BUILD": "Bazel BUILD file; needs XLA's Bazel build",
    "xla/service/cpu/BUILD": "Bazel BUILD file; needs XLA's Bazel build",
    "xla/service/gpu/BUILD": "Bazel BUILD file; needs XLA's Bazel build",
    "xla/xla.proto": "needs protoc; its new fields are checked against the "
                     "wheel's DebugOptions and compiled into the stand-in "
                     "xla.pb.h instead",
}

TEMPLATE_FIELD = "xla_dump_to"  # an "optional string" field of DebugOptions


def camel(name):
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def new_debug_option_fields(sections):
    for section in sections:
        if patchtool.section_path(section) != "xla/xla.proto":
            continue
        fields = []
        for line in patchtool.added_lines(section):
            code = line.split("//")[0].strip()
            if not code:
                continue
            m = re.fullmatch(r"optional\s+string\s+(\w+)\s*=\s*(\d+)\s*;", code)
            if not m:
                raise SystemExit("syntax_harness: cannot model the xla.proto "
                                 "line %r (only 'optional string' fields are "
                                 "supported)" % code)
            fields.append((m.group(1), int(m.group(2))))
        return fields
    return []


def debug_options_class_span(header):
    m = re.search(r"\nclass \w+ DebugOptions final\b", header)
    if not m:
        raise SystemExit("syntax_harness: no class DebugOptions in xla.pb.h")
    start = m.start()
    end = header.find("\n};\n", start)
    return start, end


def stand_in_pb_h(header, fields):
    start, end = debug_options_class_span(header)
    body = header[start:end]
    existing = dict((camel(n), int(v)) for n, v in
                    re.findall(r"\bk(\w+)FieldNumber = (\d+),", body))
    numbers = set(existing.values())
    for name, number in fields:
        if camel(name) in existing:
            raise SystemExit("syntax_harness: DebugOptions already has %s" % name)
        if number in numbers:
            raise SystemExit("syntax_harness: DebugOptions already uses field "
                             "number %d (for %s)" % (number, name))

    t = TEMPLATE_FIELD
    decl_re = re.compile(
        r"  public:\n  // optional string %s = \d+;\n.*?"
        r"_internal_mutable_%s\(\);\n" % (t, t), re.S)
    decl = decl_re.search(body)
    enum_re = re.compile(r"    k%sFieldNumber = \d+,\n" % camel(t))
    enum = enum_re.search(body)
    defs_re = re.compile(r"// optional string %s = \d+;\ninline .*?\n\n(?=// )"
                         % t, re.S)
    defs = defs_re.search(header, end)
    if not (decl and enum and defs):
        raise SystemExit("syntax_harness: the wheel's xla.pb.h no longer has "
                         "the accessors of 'optional string %s' in the form "
                         "this script clones; update TEMPLATE_FIELD" % t)

    def rename(text, name, number, keep_storage):
        text = re.sub(r"(optional string )%s = \d+;" % t,
                      r"\g<1>%s = %d;" % (name, number), text)
        if keep_storage:
            # The clone shares the template field's storage: enough for a
            # syntax check, and no new members are needed.
            text = text.replace("_impl_.%s_" % t, "\0STORAGE\0")
        text = re.sub(r"\b(\w*?)%s\b" % t, lambda m: m.group(1) + name, text)
        text = text.replace("field_get:xla.DebugOptions." + t,
                            "field_get:xla.DebugOptions." + name)
        return text.replace("\0STORAGE\0", "_impl_.%s_" % t)

    new_decls = "".join(rename(decl.group(0), n, v, False) for n, v in fields)
    new_enums = "".join("    k%sFieldNumber = %d,\n" % (camel(n), v)
                        for n, v in fields)
    new_defs = "".join(rename(defs.group(0), n, v, True) for n, v in fields)

    # Insert from the back so that earlier offsets stay valid.
    out = header
    pos = defs.end()
    out = out[:pos] + new_defs + out[pos:]
    pos = start + decl.end()
    out = out[:pos] + new_decls + out[pos:]
    pos = start + enum.end()
    out = out[:pos] + new_enums + out[pos:]
    return out


def include_line(h):
    return "#include %s\n" % (h if h.startswith("<") else '"%s"' % h)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    tf_include, out_dir = argv[1], argv[2]
    sections = patchtool.load_patch()
    tu_dir = os.path.join(out_dir, "tu")
    inc_dir = os.path.join(out_dir, "include", "xla")
    os.makedirs(tu_dir, exist_ok=True)
    os.makedirs(inc_dir, exist_ok=True)

    # The stand-in xla.pb.h.
    fields = new_debug_option_fields(sections)
    with open(os.path.join(tf_include, "xla", "xla.pb.h"), encoding="utf-8") as f:
        header = f.read()
    with open(os.path.join(inc_dir, "xla.pb.h"), "w", encoding="utf-8") as f:
        f.write(stand_in_pb_h(header, fields) if fields else header)

    units = []
    for rel in patchtool.src_files():
        if rel.endswith(".cc"):
            units.append(os.path.join(patchtool.SRC, rel))
        elif rel.endswith(".h"):
            # Every header must compile on its own.
            name = rel.replace("/", "_") + "_alone.cc"
            path = os.path.join(tu_dir, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(include_line(rel))
            units.append(path)

    unchecked = []
    for section in sections:
        if patchtool.is_new_file(section):
            continue
        rel = patchtool.section_path(section)
        if rel in NOT_COMPILABLE:
            unchecked.append("%s (%s)" % (rel, NOT_COMPILABLE[rel]))
            continue
        if rel not in CONTEXTS:
            raise SystemExit("syntax_harness: the patch changes %s, which has "
                             "no entry in CONTEXTS or NOT_COMPILABLE" % rel)
        ctx = CONTEXTS[rel]
        includes, body = [], []
        for line in patchtool.added_lines(section):
            if line.startswith("#include"):
                includes.append(line)
            else:
                body.append(line)
        name = rel.replace("/", "_") + "_added_lines.cc"
        path = os.path.join(tu_dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write("// Lines the exla patch adds to %s, in a stand-in for the\n"
                    "// function they go into. Generated by syntax_harness.py.\n"
                    % rel)
            f.writelines(include_line(h) for h in ctx["includes"])
            f.writelines(includes)
            f.write(ctx["open"])
            f.writelines(body)
            f.write(ctx["close"])
        units.append(path)

    with open(os.path.join(out_dir, "unchecked.txt"), "w", encoding="utf-8") as f:
        f.writelines(u + "\n" for u in unchecked)
    for u in units:
        print(u)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
