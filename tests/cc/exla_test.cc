// C++ tests of exla's public API (cc/api/exla.h), built by Bazel as
// //:exla_test. No test framework: CHECK records a failure and the test goes
// on; main() returns non-zero if anything failed.

#include <cstdio>
#include <exception>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "api/exla.h"

namespace {

int g_failures = 0;

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      ++g_failures;                                                     \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,       \
                   __LINE__, #cond);                                    \
    }                                                                   \
  } while (0)

// Text with every run of whitespace turned into one space, trimmed: the
// printer is the identity on XLA's text up to whitespace.
std::string Normalize(const std::string& text) {
  std::istringstream in(text);
  std::string word, out;
  while (in >> word) {
    if (!out.empty()) out += ' ';
    out += word;
  }
  return out;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Runs `fn`; true if it throws std::invalid_argument whose message contains
// `fragment`.
bool ThrowsInvalidArgument(const std::function<void()>& fn,
                           const std::string& fragment) {
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    if (Contains(e.what(), fragment)) return true;
    std::fprintf(stderr, "  message without '%s': %s\n", fragment.c_str(),
                 e.what());
    return false;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "  unexpected exception: %s\n", e.what());
    return false;
  }
  std::fprintf(stderr, "  nothing was thrown\n");
  return false;
}

// As XLA prints it (HloPrintOptions::ShortParsable): a row sum of x*y, the
// reduce calling a separate computation through to_apply.
const char kReduceModule[] = R"(HloModule jit_f, entry_computation_layout={(f32[4,3]{1,0}, f32[4,3]{1,0})->f32[4]{0}}

region_0.8 {
  reduce_sum.5 = f32[] parameter(0)
  reduce_sum.6 = f32[] parameter(1)
  ROOT reduce_sum.7 = f32[] add(reduce_sum.5, reduce_sum.6)
}

ENTRY main.10 {
  x.1 = f32[4,3]{1,0} parameter(0)
  y.2 = f32[4,3]{1,0} parameter(1)
  mul.4 = f32[4,3]{1,0} multiply(x.1, y.2)
  constant.3 = f32[] constant(0)
  ROOT reduce_sum.9 = f32[4]{0} reduce(mul.4, constant.3), dimensions={1}, to_apply=region_0.8
}
)";

// The same with metadata, as the XLA adapter in xla_patches/ prints modules.
const char kReduceModuleWithMetadata[] = R"(HloModule jit_f, entry_computation_layout={(f32[4,3]{1,0}, f32[4,3]{1,0})->f32[4]{0}}

region_0.8 {
  reduce_sum.5 = f32[] parameter(0), metadata={op_name="reduce_sum"}
  reduce_sum.6 = f32[] parameter(1), metadata={op_name="reduce_sum"}
  ROOT reduce_sum.7 = f32[] add(reduce_sum.5, reduce_sum.6), metadata={op_name="jit(f)/reduce_sum" source_file="f.py" source_line=4}
}

ENTRY main.10 {
  x.1 = f32[4,3]{1,0} parameter(0), metadata={op_name="x"}
  y.2 = f32[4,3]{1,0} parameter(1), metadata={op_name="y"}
  mul.4 = f32[4,3]{1,0} multiply(x.1, y.2), metadata={op_name="jit(f)/mul" source_file="f.py" source_line=4}
  constant.3 = f32[] constant(0)
  ROOT reduce_sum.9 = f32[4]{0} reduce(mul.4, constant.3), dimensions={1}, to_apply=region_0.8, metadata={op_name="jit(f)/reduce_sum" source_file="f.py" source_line=4}
}
)";

// A dead instruction (dead.5) and a computation nothing calls (unused.3).
const char kDeadCodeModule[] = R"(HloModule dead, entry_computation_layout={(f32[8]{0}, f32[8]{0})->f32[8]{0}}

unused.3 {
  a.1 = f32[] parameter(0)
  b.2 = f32[] parameter(1)
  ROOT max.3 = f32[] maximum(a.1, b.2)
}

ENTRY main.7 {
  p0.1 = f32[8]{0} parameter(0)
  p1.2 = f32[8]{0} parameter(1)
  dead.5 = f32[8]{0} multiply(p0.1, p1.2)
  ROOT sum.6 = f32[8]{0} add(p0.1, p1.2)
}
)";

void TestRoundTripReduce() {
  const std::string printed = exla::RoundTripHloText(kReduceModule);
  CHECK(Normalize(printed) == Normalize(kReduceModule));
  // And printing is stable.
  CHECK(exla::RoundTripHloText(printed) == printed);
  CHECK(Contains(printed, "to_apply=region_0.8"));
}

void TestRoundTripKeepsMetadata() {
  const std::string printed = exla::RoundTripHloText(kReduceModuleWithMetadata);
  CHECK(Normalize(printed) == Normalize(kReduceModuleWithMetadata));
}

void TestDceRemovesDeadCode() {
  exla::Options options;
  options.passes = {"dce"};
  std::vector<exla::PassRecord> records;
  const std::string out =
      exla::OptimizeHloText(kDeadCodeModule, options, &records);
  CHECK(!Contains(out, "dead.5"));
  CHECK(!Contains(out, "unused.3"));
  CHECK(Contains(out, "ROOT sum.6"));
  CHECK(Contains(out, "p1.2"));
  CHECK(records.size() == 1);
  if (!records.empty()) {
    CHECK(records[0].name == "dce");
    CHECK(records[0].changed);
  }
  // What dce leaves is a fixed point of dce.
  std::vector<exla::PassRecord> again;
  CHECK(exla::OptimizeHloText(out, options, &again) == out);
  CHECK(again.size() == 1 && !again[0].changed);
}

void TestDceKeepsLiveCode() {
  exla::Options options;
  options.passes = {"dce"};
  std::vector<exla::PassRecord> records;
  const std::string out = exla::OptimizeHloText(kReduceModule, options, &records);
  CHECK(Normalize(out) == Normalize(kReduceModule));
  CHECK(records.size() == 1 && !records[0].changed);
}

void TestDefaultPipelineWithoutLimitKeepsSmallModule() {
  // No threshold: nothing is too large, so the numbers cannot change; the
  // module must still parse and print.
  exla::Options options;
  std::vector<exla::PassRecord> records;
  const std::string out = exla::OptimizeHloText(kReduceModule, options, &records);
  CHECK(Contains(out, "ENTRY main.10"));
  CHECK(records.size() <= exla::DefaultPipeline().size());
}

void TestPassNames() {
  const std::vector<std::string> available = exla::AvailablePasses();
  const std::vector<std::string> pipeline = exla::DefaultPipeline();
  CHECK(!pipeline.empty());
  for (const std::string& name : pipeline) {
    bool known = false;
    for (const std::string& a : available) known = known || a == name;
    CHECK(known);
  }
  bool has_dce = false;
  for (const std::string& a : available) has_dce = has_dce || a == "dce";
  CHECK(has_dce);
}

void TestMalformedTextThrows() {
  // Unclosed dimension list on line 4.
  const std::string bad =
      "HloModule m\n\nENTRY main {\n  x = f32[2 parameter(0)\n}\n";
  CHECK(ThrowsInvalidArgument([&] { exla::RoundTripHloText(bad); }, "line 4"));
  CHECK(ThrowsInvalidArgument(
      [&] {
        std::vector<exla::PassRecord> records;
        exla::OptimizeHloText(bad, exla::Options(), &records);
      },
      "line 4"));
  // Not HLO at all.
  CHECK(ThrowsInvalidArgument([] { exla::RoundTripHloText("hello"); }, ""));
  // An operand that is never defined.
  const std::string undefined =
      "HloModule m\n\nENTRY main {\n  ROOT y = f32[] negate(nowhere)\n}\n";
  CHECK(ThrowsInvalidArgument([&] { exla::RoundTripHloText(undefined); }, ""));
}

void TestUnknownPassThrows() {
  exla::Options options;
  options.passes = {"no-such-pass"};
  CHECK(ThrowsInvalidArgument(
      [&] {
        std::vector<exla::PassRecord> records;
        exla::OptimizeHloText(kReduceModule, options, &records);
      },
      "no-such-pass"));
}

void TestCleanupPasses() {
  const std::vector<std::string> cleanups = exla::CleanupPasses();
  const std::vector<std::string> available = exla::AvailablePasses();
  bool has_dce = false, has_splitter = false;
  for (const std::string& name : cleanups) {
    has_dce = has_dce || name == "dce";
    has_splitter = has_splitter || name == "tensor-splitter";
    bool known = false;
    for (const std::string& a : available) known = known || a == name;
    CHECK(known);
  }
  CHECK(has_dce);
  CHECK(!has_splitter);
}

void TestReadHloSignature() {
  const std::string text =
      "HloModule m, input_output_alias={ {1}: (0, {}, may-alias), {2, 0}: (1, {1}) }\n\n"
      "ENTRY e {\n"
      "  a = f32[2,3]{1,0} parameter(0)\n"
      "  b = (s32[], f32[4]) parameter(1)\n"
      "  c = pred[] constant(true)\n"
      "  d = f32[<=5] parameter(2)\n"
      "  inner = (pred[], f32[2,3]{1,0}) tuple(c, a)\n"
      "  ROOT t = (f32[2,3]{1,0}, f32[2,3]{1,0}, (pred[], f32[2,3]{1,0})) tuple(a, a, inner)\n"
      "}\n";
  const exla::HloSignature signature = exla::ReadHloSignature(text);
  CHECK(signature.parameters.size() == 3);
  CHECK(signature.parameters[0].element_type == "f32");
  CHECK((signature.parameters[0].dims == std::vector<int64_t>{2, 3}));
  CHECK(signature.parameters[0].is_array && !signature.parameters[0].is_dynamic);
  CHECK(!signature.parameters[1].is_array && signature.parameters[1].element_type == "tuple");
  CHECK(signature.parameters[2].is_dynamic);
  CHECK(signature.output_is_tuple);
  CHECK(signature.outputs.size() == 4);  // the nested tuple is flattened
  CHECK(signature.outputs[2].element_type == "pred" && signature.outputs[2].dims.empty());
  CHECK(signature.aliases.size() == 2);
  CHECK((signature.aliases[0].output_index == std::vector<int64_t>{1}));
  CHECK(signature.aliases[0].parameter == 0 && signature.aliases[0].parameter_index.empty());
  CHECK((signature.aliases[1].output_index == std::vector<int64_t>{2, 0}));
  CHECK((signature.aliases[1].parameter_index == std::vector<int64_t>{1}));

  const exla::HloSignature plain =
      exla::ReadHloSignature("HloModule m\n\nENTRY e {\n  ROOT c = s32[] constant(1)\n}\n");
  CHECK(plain.parameters.empty() && !plain.output_is_tuple && plain.aliases.empty());
  CHECK(plain.outputs.size() == 1 && plain.outputs[0].element_type == "s32");

  CHECK(ThrowsInvalidArgument(
      [] {
        exla::ReadHloSignature(
            "HloModule m, input_output_alias={ {0}: (x, {}) }\n\n"
            "ENTRY e {\n  ROOT c = s32[] constant(1)\n}\n");
      },
      "input_output_alias"));
  CHECK(ThrowsInvalidArgument([] { exla::ReadHloSignature("HloModule m\n\nENTRY e {\n"); }, ""));
}

}  // namespace

int main() {
  const std::vector<std::pair<const char*, void (*)()>> tests = {
      {"RoundTripReduce", TestRoundTripReduce},
      {"RoundTripKeepsMetadata", TestRoundTripKeepsMetadata},
      {"DceRemovesDeadCode", TestDceRemovesDeadCode},
      {"DceKeepsLiveCode", TestDceKeepsLiveCode},
      {"DefaultPipelineWithoutLimitKeepsSmallModule",
       TestDefaultPipelineWithoutLimitKeepsSmallModule},
      {"PassNames", TestPassNames},
      {"MalformedTextThrows", TestMalformedTextThrows},
      {"UnknownPassThrows", TestUnknownPassThrows},
      {"CleanupPasses", TestCleanupPasses},
      {"ReadHloSignature", TestReadHloSignature},
  };
  for (const auto& [name, fn] : tests) {
    const int before = g_failures;
    try {
      fn();
    } catch (const std::exception& e) {
      ++g_failures;
      std::fprintf(stderr, "%s: unexpected exception: %s\n", name, e.what());
    }
    std::printf("%s %s\n", g_failures == before ? "ok  " : "FAIL", name);
  }
  if (g_failures != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("all %zu tests passed\n", tests.size());
  return 0;
}
