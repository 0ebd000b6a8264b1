#include "model/buffers/output_aliasing.h"

#include <cctype>
#include <string>

#include "ir/computation.h"

namespace exla {
namespace {

// The shape of the output at the index `{i, j}` that starts at `at` (after
// its brace); `at` ends on the closing brace.
const Shape* ShapeAtIndex(const std::string& header, const Shape& result, size_t* at) {
  const Shape* shape = &result;
  size_t j = *at;
  while (j < header.size() && header[j] != '}') {
    if (std::isdigit(static_cast<unsigned char>(header[j]))) {
      const int64_t index = std::stoll(header.substr(j));
      if (shape->IsTuple() && index < static_cast<int64_t>(shape->tuple_shapes().size())) {
        shape = &shape->tuple_shape(static_cast<int>(index));
      }
      while (j < header.size() && std::isdigit(static_cast<unsigned char>(header[j]))) ++j;
    } else {
      ++j;
    }
  }
  *at = j;
  return shape;
}

}  // namespace

std::vector<const Shape*> AliasedOutputs(const HloModule& module) {
  std::vector<const Shape*> outputs;
  const std::string& header = module.header_attributes();
  const size_t at = header.find("input_output_alias={");
  if (at == std::string::npos) return outputs;
  const Shape& result = module.entry()->root()->shape();
  int depth = 0;
  for (size_t i = at + 19; i < header.size(); ++i) {
    const char c = header[i];
    if (c == '{') {
      ++depth;
      if (depth == 2) {  // an output index: `{i, j}` at the outer level
        size_t j = i + 1;
        const Shape* shape = ShapeAtIndex(header, result, &j);
        if (header.find(':', j) == j + 1) outputs.push_back(shape);
      }
    } else if (c == '}') {
      if (--depth == 0) break;
    }
  }
  return outputs;
}

int64_t AliasedOutputBytes(const HloModule& module) {
  int64_t bytes = 0;
  for (const Shape* shape : AliasedOutputs(module)) bytes += shape->ByteSize();
  return bytes;
}

}  // namespace exla
