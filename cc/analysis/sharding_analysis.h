// What one device holds of every value of a sharded program: the tensor
// splitter's view of XLA's SPMD partitioning.
//
// A program sharded with JAX reaches exla before XLA's partitioner has run:
// the parameters, the results and a few constraints carry `sharding=`
// attributes (ir/sharding.h); the partitioner derives the rest. The splitter
// must decide with what one device will hold (a kernel matrix of 51 GB over
// 8 devices is 6.4 GB per device), and must never loop over a dimension that
// is cut between devices: a loop that slices such a dimension makes the
// partitioner gather the whole tensor onto every device.
//
// So this analysis follows the annotations through the program along the
// splitter's own dimension map (dimension_map.h) and through tuples,
// loops, calls and dynamic slices (a sharding constraint reshards: it starts
// a class of its own). Two dimensions that the map connects (an operand's
// and the result's dimension it becomes) are cut into the same pieces, so
// the dimensions of a module fall into classes, and each class takes what
// its annotations say: a number of pieces, or a disagreement (two
// annotations that cut it differently, or one exla cannot read), or nothing
// at all. Where the program's results ask for another sharding than its
// inputs and constraints give a class, the inputs win: the partitioner
// computes as the inputs are cut and reshards the results. A loop may run
// over a dimension only when it is known to be whole on every device; a
// dimension nothing is known about is refused too, since the partitioner may
// cut it.
//
// The bodies of shard_map (manual computations) are per-device programs:
// their values are what one device holds and every dimension may be split
// (their collectives never enter a loop: the splitter does not handle them).
// A shard_map that is manual over only some mesh axes leaves the others to
// the partitioner, so nothing in its body may be split.
//
// A module without any sharding annotation is not partitioned: the analysis
// is inactive and answers as if every device held whole values, so the
// splitter behaves exactly as it does for one device.
#ifndef EXLA_ANALYSIS_SHARDING_ANALYSIS_H_
#define EXLA_ANALYSIS_SHARDING_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/module.h"
#include "pass/why_not.h"

namespace exla {

class ShardingAnalysis {
 public:
  // An analysis of a module without sharding: whole values on every device.
  ShardingAnalysis() = default;
  explicit ShardingAnalysis(const HloModule& module);

  // Whether the module is partitioned at all (it has sharding annotations).
  bool active() const { return active_; }
  // The most devices an annotation or a mesh of the module names (1 when it
  // has none).
  int64_t devices() const { return devices_; }

  // Pieces that dimension `dim` of `instruction`'s value (of its first
  // array, for a tuple) is cut into: 1 when it is whole on every device, 0
  // when unknown. Always 1 for an inactive analysis.
  int64_t Pieces(const HloInstruction& instruction, int64_t dim) const;
  // Bytes of the largest array of the value that one device holds.
  int64_t LargestDeviceBytes(const HloInstruction& instruction) const;
  // Bytes of all arrays of the value that one device holds; with dimension
  // `whole_dim` whole on every device, if given (what a loop over it keeps).
  //
  // The partitioner cuts a value at most once along the same cut: where two
  // dimensions of one array are the same dimension of a source (the n x n
  // kernel of points cut by rows reaches both of its dimensions from the
  // points), it cuts one of them and gathers the other. So a class cuts one
  // dimension of an array, the cuts of an array never multiply to more than
  // the devices, and a cut that cannot be placed counts as whole: the size
  // a split must assume.
  int64_t DeviceByteSize(const HloInstruction& instruction, int64_t whole_dim = -1) const;
  // The pieces the partitioner is taken to cut each dimension of array
  // `array` of the value into (1: whole), by the rule above.
  std::vector<int64_t> Cuts(const HloInstruction& instruction, size_t array = 0,
                            int64_t whole_dim = -1) const;

  // Whether a loop may run over dimension `dim` of a value it computes:
  // where the dimension is whole on every device, or where the partitioner
  // can cut another dimension of the value instead (keeping `dim` whole
  // then costs no device any memory; the loop's inputs along `dim` are
  // gathered, see MaySlice).
  WhyNot MayLoopOver(const HloInstruction& instruction, int64_t dim) const;
  // Whether a loop may slice its input `instruction` along `dim`. Sets
  // `*gather` when the input is cut along `dim` (or may be) but small: the
  // loop then slices a copy that is whole on every device
  // (WholeOnEveryDevice), gathered once before the loop. An input larger
  // than `limit` is not gathered.
  WhyNot MaySlice(const HloInstruction& instruction, int64_t dim, int64_t limit,
                  bool* gather) const;
  // A sharding constraint after `value` (in its computation) that makes it
  // whole on every device, in the module's form of constraints (Shardy's
  // or GSPMD's).
  HloInstruction* WholeOnEveryDevice(HloInstruction* value) const;

  // Values a plan keeps whole (Options::split_dimensions' kKeepWhole), by
  // "computation/instruction". The splitter neither splits nor recomputes
  // them: its loops read their slices, and a loop that computes one writes
  // it whole. The plan search's memory model judges whether that fits.
  void KeepWhole(std::unordered_set<std::string> tensors) { kept_ = std::move(tensors); }
  bool KeptWhole(const HloInstruction& instruction) const;
  // What a split of `instruction` could save one device, to compare with
  // the splitter's limits: LargestDeviceBytes, or 0 for a value kept whole.
  int64_t BytesToSplit(const HloInstruction& instruction) const;

  // "" or " per device": how sizes read in the splitter's notes.
  std::string PerDevice() const { return active_ ? " per device" : ""; }

  // What is known of one class of dimensions.
  struct Fact {
    int64_t pieces = 0;     // 0: nothing known
    bool conflict = false;  // annotations disagree, or one cannot be read
    bool refused = false;   // nothing may be split (a partially manual body)
    int reason = -1;        // index into reasons_: why, for a conflict
    bool result = false;    // only the program's results ask for it
  };

 private:
  // Builds the analysis in named steps (sharding_analysis.cc).
  class Builder;

  // The node of dimension `dim` of array `array` of `instruction`, or -1.
  int64_t Node(const HloInstruction& instruction, size_t array, int64_t dim) const;
  int64_t DeviceBytes(const HloInstruction& instruction, int64_t whole_dim, bool largest) const;
  WhyNot Unsure(const HloInstruction& instruction, int64_t dim) const;

  bool active_ = false;
  int64_t devices_ = 1;
  std::string mesh_;  // the first of Shardy's meshes, "" for a GSPMD module
  // First node and rank of every array of every instruction (-1: not an
  // array).
  std::unordered_map<const HloInstruction*, std::vector<std::pair<int64_t, int64_t>>> first_node_;
  std::vector<Fact> facts_;       // per node, resolved over its class
  std::vector<int64_t> classes_;  // per node: its class
  std::vector<std::string> reasons_;
  std::unordered_set<std::string> kept_;  // KeepWhole
};

}  // namespace exla

#endif  // EXLA_ANALYSIS_SHARDING_ANALYSIS_H_
