// tensor-splitter: no tensor above --xla_tensor_size_threshold outside a loop.
//
// For an oversized instruction the pass looks for a dimension it can follow
// down to a consumer that makes the data small again (a reduce or dot that
// contracts it, or any instruction whose result is small while the dimension
// survives) and up to producers that can be sliced cheaply. It then replaces
// that region of the program with a `while` loop over slices of the
// dimension: inputs are dynamic-sliced inside the body, reduced results are
// accumulated, surviving ones are written with dynamic-update-slice. A
// dimension that does not divide by the chunk size gets a one-trip loop for
// the remainder, run first. Loop bodies are split again, against
// --xla_tensor_split_size (or the smaller Options::tensor_tile_size), when
// one dimension is not enough. The split size is held to the threshold,
// except with a tile size: the bodies' tiles are then below it.
#ifndef EXLA_PASSES_TENSOR_SPLITTER_TENSOR_SPLITTER_H_
#define EXLA_PASSES_TENSOR_SPLITTER_TENSOR_SPLITTER_H_

#include <cstdint>
#include <string>
#include <utility>

#include "pass/pass.h"
#include "passes/tensor_splitter/split_choices.h"

namespace exla {

class TensorSplitter : public HloPass {
 public:
  // `threshold`: the largest tensor (bytes) allowed outside a loop; 0 turns
  // the pass off. `split_size`: the limit for tensors inside the loop bodies
  // it creates; 0 means a quarter of the threshold. `large_sums`: see
  // Options::large_sums. `dimensions`: see DimensionChoices.
  // `in_place_state`: see Options::in_place_loop_state; `tile_size`:
  // Options::tensor_tile_size.
  TensorSplitter(int64_t threshold, int64_t split_size, bool large_sums = false,
                 DimensionChoices dimensions = {}, bool in_place_state = false,
                 int64_t tile_size = 0)
      : threshold_(threshold),
        split_size_(split_size),
        large_sums_(large_sums),
        in_place_state_(in_place_state),
        tile_size_(tile_size),
        dimensions_(std::move(dimensions)) {}
  std::string_view name() const override { return "tensor-splitter"; }
  bool Run(HloModule* module) override;

 private:
  int64_t threshold_;
  int64_t split_size_;
  bool large_sums_;
  bool in_place_state_;
  int64_t tile_size_;
  DimensionChoices dimensions_;
};

}  // namespace exla

#endif  // EXLA_PASSES_TENSOR_SPLITTER_TENSOR_SPLITTER_H_
