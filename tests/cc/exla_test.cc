// C++ tests of exla's public API (cc/api/exla.h): parsing and printing,
// pass selection, errors. Built as build/cctest/exla_test (make cctest) and
// by Bazel as //:exla_test.

#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/exla.h"
#include "tests/cc/test_harness.h"

namespace {

using exla_test::AssertionResult;

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

// Success iff `fn` throws std::invalid_argument whose message contains
// `fragment`.
AssertionResult ThrowsInvalidArgument(const std::function<void()>& fn,
                                      const std::string& fragment) {
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    if (Contains(e.what(), fragment)) return AssertionResult::Success();
    return AssertionResult::Failure("message without '" + fragment + "': " + e.what());
  } catch (const std::exception& e) {
    return AssertionResult::Failure(std::string("unexpected exception: ") + e.what());
  }
  return AssertionResult::Failure("nothing was thrown");
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

}  // namespace

TEST(Api, RoundTripReduce) {
  const std::string printed = exla::RoundTripHloText(kReduceModule);
  EXPECT_EQ(Normalize(printed), Normalize(kReduceModule));
  // And printing is stable.
  EXPECT_EQ(exla::RoundTripHloText(printed), printed);
  EXPECT_TRUE(Contains(printed, "to_apply=region_0.8"));
}

TEST(Api, RoundTripKeepsMetadata) {
  const std::string printed = exla::RoundTripHloText(kReduceModuleWithMetadata);
  EXPECT_EQ(Normalize(printed), Normalize(kReduceModuleWithMetadata));
}

// XLA's stack-frame index, as jaxlib >= 0.11 prints a module in its long
// form: between the header and the first computation.
const char kStackFramesBefore[] = R"(HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

FileNames
1 "<string>"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=5 end_line=5 column=11 end_column=70}

StackFrames
1 {file_location_id=1 parent_frame_id=1}


ENTRY %main.3 (x.1: f32[4]) -> f32[4] {
  ROOT %x.1 = f32[4]{0} parameter(0), metadata={op_name="x" stack_frame_id=1}
}

)";

TEST(Api, RoundTripKeepsStackFramesBeforeTheComputations) {
  const std::string printed = exla::RoundTripHloText(kStackFramesBefore);
  EXPECT_EQ(Normalize(printed), Normalize(kStackFramesBefore));
  EXPECT_EQ(exla::RoundTripHloText(printed), printed);
}

// jaxlib <= 0.10 prints the same index after the last computation.
TEST(Api, RoundTripKeepsStackFramesAfterTheComputations) {
  const std::string text = R"(HloModule m

ENTRY %main.3 (x.1: f32[4]) -> f32[4] {
  ROOT %x.1 = f32[4]{0} parameter(0), metadata={op_name="x" stack_frame_id=1}
}

FileNames
1 "<string>"

StackFrames
1 {file_location_id=1 parent_frame_id=1}
)";
  const std::string printed = exla::RoundTripHloText(text);
  EXPECT_EQ(Normalize(printed), Normalize(text));
  EXPECT_EQ(exla::RoundTripHloText(printed), printed);
}

TEST(Api, DceRemovesDeadCode) {
  exla::Options options;
  options.passes = {"dce"};
  std::vector<exla::PassRecord> records;
  const std::string out =
      exla::OptimizeHloText(kDeadCodeModule, options, &records);
  EXPECT_FALSE(Contains(out, "dead.5"));
  EXPECT_FALSE(Contains(out, "unused.3"));
  EXPECT_TRUE(Contains(out, "ROOT sum.6"));
  EXPECT_TRUE(Contains(out, "p1.2"));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].name, "dce");
  EXPECT_TRUE(records[0].changed);
  // What dce leaves is a fixed point of dce.
  std::vector<exla::PassRecord> again;
  EXPECT_EQ(exla::OptimizeHloText(out, options, &again), out);
  EXPECT_TRUE(again.size() == 1 && !again[0].changed);
}

TEST(Api, DceKeepsLiveCode) {
  exla::Options options;
  options.passes = {"dce"};
  std::vector<exla::PassRecord> records;
  const std::string out = exla::OptimizeHloText(kReduceModule, options, &records);
  EXPECT_EQ(Normalize(out), Normalize(kReduceModule));
  EXPECT_TRUE(records.size() == 1 && !records[0].changed);
}

TEST(Api, DefaultPipelineWithoutLimitKeepsSmallModule) {
  // No threshold: nothing is too large, so the numbers cannot change; the
  // module must still parse and print.
  exla::Options options;
  std::vector<exla::PassRecord> records;
  const std::string out = exla::OptimizeHloText(kReduceModule, options, &records);
  EXPECT_TRUE(Contains(out, "ENTRY main.10"));
  EXPECT_LE(records.size(), exla::DefaultPipeline().size());
}

TEST(Api, PassNames) {
  const std::vector<std::string> available = exla::AvailablePasses();
  const std::vector<std::string> pipeline = exla::DefaultPipeline();
  EXPECT_FALSE(pipeline.empty());
  for (const std::string& name : pipeline) {
    bool known = false;
    for (const std::string& a : available) known = known || a == name;
    EXPECT_TRUE(known) << name << " is not in AvailablePasses()";
  }
  bool has_dce = false;
  for (const std::string& a : available) has_dce = has_dce || a == "dce";
  EXPECT_TRUE(has_dce);
}

TEST(Api, MalformedTextThrows) {
  // Unclosed dimension list on line 4.
  const std::string bad =
      "HloModule m\n\nENTRY main {\n  x = f32[2 parameter(0)\n}\n";
  EXPECT_TRUE(ThrowsInvalidArgument([&] { exla::RoundTripHloText(bad); }, "line 4"));
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] {
        std::vector<exla::PassRecord> records;
        exla::OptimizeHloText(bad, exla::Options(), &records);
      },
      "line 4"));
  // Not HLO at all.
  EXPECT_TRUE(ThrowsInvalidArgument([] { exla::RoundTripHloText("hello"); }, ""));
  // An operand that is never defined.
  const std::string undefined =
      "HloModule m\n\nENTRY main {\n  ROOT y = f32[] negate(nowhere)\n}\n";
  EXPECT_TRUE(ThrowsInvalidArgument([&] { exla::RoundTripHloText(undefined); }, ""));
}

TEST(Api, UnknownPassThrows) {
  exla::Options options;
  options.passes = {"no-such-pass"};
  EXPECT_TRUE(ThrowsInvalidArgument(
      [&] {
        std::vector<exla::PassRecord> records;
        exla::OptimizeHloText(kReduceModule, options, &records);
      },
      "no-such-pass"));
}


TEST(Api, CleanupPasses) {
  const std::vector<std::string> cleanups = exla::CleanupPasses();
  const std::vector<std::string> available = exla::AvailablePasses();
  bool has_dce = false, has_splitter = false;
  for (const std::string& name : cleanups) {
    has_dce = has_dce || name == "dce";
    has_splitter = has_splitter || name == "tensor-splitter";
    bool known = false;
    for (const std::string& a : available) known = known || a == name;
    EXPECT_TRUE(known);
  }
  EXPECT_TRUE(has_dce);
  EXPECT_FALSE(has_splitter);
}

TEST(Api, ReadHloSignature) {
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
  EXPECT_TRUE(signature.parameters.size() == 3);
  EXPECT_EQ(signature.parameters[0].element_type, "f32");
  EXPECT_TRUE((signature.parameters[0].dims == std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(signature.parameters[0].is_array && !signature.parameters[0].is_dynamic);
  EXPECT_TRUE(!signature.parameters[1].is_array);
  EXPECT_EQ(signature.parameters[1].element_type, "tuple");
  EXPECT_TRUE(signature.parameters[2].is_dynamic);
  EXPECT_TRUE(signature.output_is_tuple);
  EXPECT_TRUE(signature.outputs.size() == 4);  // the nested tuple is flattened
  EXPECT_TRUE(signature.outputs[2].element_type == "pred" && signature.outputs[2].dims.empty());
  EXPECT_TRUE(signature.aliases.size() == 2);
  EXPECT_TRUE((signature.aliases[0].output_index == std::vector<int64_t>{1}));
  EXPECT_TRUE(signature.aliases[0].parameter == 0 && signature.aliases[0].parameter_index.empty());
  EXPECT_TRUE((signature.aliases[1].output_index == std::vector<int64_t>{2, 0}));
  EXPECT_TRUE((signature.aliases[1].parameter_index == std::vector<int64_t>{1}));

  const exla::HloSignature plain =
      exla::ReadHloSignature("HloModule m\n\nENTRY e {\n  ROOT c = s32[] constant(1)\n}\n");
  EXPECT_TRUE(plain.parameters.empty() && !plain.output_is_tuple && plain.aliases.empty());
  EXPECT_TRUE(plain.outputs.size() == 1 && plain.outputs[0].element_type == "s32");

  EXPECT_TRUE(ThrowsInvalidArgument(
      [] {
        exla::ReadHloSignature(
            "HloModule m, input_output_alias={ {0}: (x, {}) }\n\n"
            "ENTRY e {\n  ROOT c = s32[] constant(1)\n}\n");
      },
      "input_output_alias"));
  EXPECT_TRUE(ThrowsInvalidArgument([] { exla::ReadHloSignature("HloModule m\n\nENTRY e {\n"); }, ""));
}
