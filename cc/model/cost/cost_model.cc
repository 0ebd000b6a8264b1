// A cost model: the time XLA's CPU backend takes to run a module, predicted
// from the arithmetic it does and the bytes it moves, so that the memory-limit
// search can rank plans that all fit by how fast they run.
//
// The unit of work is what XLA CPU runs as one kernel: an instruction that
// gets a buffer of its own (fusion/instruction_fusion.h) together with the producers
// fusion folds into it. A kernel takes the longer of its arithmetic (dots at
// GEMM speed, transcendental functions at their own rate, other elementwise
// work at another) and its memory traffic (the buffers it reads, in full or
// the slice it takes, plus what it writes), a roofline, plus a fixed launch
// overhead. A thin matrix product (few rows, columns or a shallow
// contraction) runs below the GEMM's full rate, by a power of each thin
// side calibrated on this machine. Sorts and top-k selections are costed by the comparisons they
// make and the elements they read, at rates of their own (flops.h): XLA CPU
// calls a comparator per comparison, so a sort is slow beside arithmetic.
// An update in place (dynamic-update-slice) also pays for the elements of
// the rows it crosses outside its block, at a rate of its own: XLA CPU
// tests each of them, so a loop writing column blocks is much slower than
// one writing row blocks. A while loop costs its body and condition once per
// trip plus a trip overhead; a plan that re-reads a whole weight on every
// trip therefore pays for every re-read, and one that recomputes a producer
// pays for it on every trip.
//
// The last-level cache is modelled by reuse distance: a buffer read or
// written in full is still cached while fewer bytes than the cache holds
// have been moved since, and is then read (or rewritten) at the cache's
// bandwidth. A loop is costed as its first trip plus the others like its
// second, so a weight smaller than the cache re-read every trip costs
// memory bandwidth once, and a trip whose working set fits in the cache
// streams its temporaries at cache speed. Slices never count as touching a
// buffer in full, so a loop slicing a large operand reads it from memory.
//
// A dot whose operand is not in the order XLA CPU's GEMM takes reads a
// transposed copy of it (fusion/dot_operand_copies.h), one kernel that reads
// and writes the operand's bytes at a transpose's rate: a strided walk that
// is fast while the lines it reads stay cached until it reads them again
// and far slower where every element misses (transpose_walk.h: whether they
// stay depends on the rows one pass reads and the bytes it spans, not on
// the array's size).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "analysis/flops.h"
#include "analysis/loop_trips.h"
#include "ir/computation.h"
#include "model/expand/leaf_bytes.h"
#include "model/cost/transpose_walk.h"
#include "model/fusion/dot_operand_copies.h"
#include "model/fusion/instruction_fusion.h"
#include "model/simplify/xla_topk.h"
#include "model/xla_cpu_model.h"

namespace exla {
namespace {

int64_t ArrayBytes(const Shape& shape) {
  if (!shape.IsTuple()) return shape.IsArray() ? shape.ByteSize() : 0;
  int64_t total = 0;
  for (const Shape& element : shape.tuple_shapes()) total += ArrayBytes(element);
  return total;
}

// Work that runs at GEMM speed: XLA CPU calls Eigen (or a blocked loop of
// its own) for these, far faster per flop than a loop over elements.
bool IsMatrixWork(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
    case HloOpcode::kCholesky:
    case HloOpcode::kTriangularSolve:
      return true;
    default:
      return false;
  }
}

// Whether `instruction` is computed inside the kernel of a consumer: a fused
// producer, or a view (reshape, bitcast) of one, which has no buffer either.
bool InsideConsumer(const HloInstruction& instruction) {
  const Holding holding = HoldingOf(instruction);
  if (holding == Holding::kFused) return true;
  return holding == Holding::kOperand && instruction.operand_count() == 1 &&
         !instruction.Is(HloOpcode::kGetTupleElement) && instruction.shape().IsArray() &&
         InsideConsumer(*instruction.operand(0));
}

// Bytes `reader` takes from the buffer of its operand `index`: a slice reads
// only what it keeps (so a loop that slices a weight reads each row once
// over all its trips), an update in place does not read the buffer it
// writes into; every other reader streams the whole operand.
int64_t ReadBytes(const HloInstruction& reader, int index) {
  if (index == 0) {
    switch (reader.opcode()) {
      case HloOpcode::kSlice:
      case HloOpcode::kDynamicSlice:
      case HloOpcode::kGather:
        return ArrayBytes(reader.shape());
      case HloOpcode::kDynamicUpdateSlice:
      case HloOpcode::kScatter:
        return 0;
      default:
        break;
    }
  }
  return ArrayBytes(reader.operand(index)->shape());
}

// Bytes a kernel writes: an update in place writes the update only.
int64_t WrittenBytes(const HloInstruction& instruction) {
  if (instruction.Is(HloOpcode::kDynamicUpdateSlice) && instruction.operand_count() > 1) {
    return ArrayBytes(instruction.operand(1)->shape());
  }
  if (instruction.Is(HloOpcode::kScatter)) return ArrayBytes(instruction.operand(instruction.operand_count() - 1)->shape());
  if (XlaRunsAsTopK(instruction)) {
    int64_t bytes = 0;
    const Shape& shape = instruction.shape();
    const int64_t leaves = shape.IsTuple() ? static_cast<int64_t>(shape.tuple_shapes().size()) : 1;
    for (int64_t leaf = 0; leaf < leaves; ++leaf) {
      const Shape& array = shape.IsTuple() ? shape.tuple_shapes()[leaf] : shape;
      bytes += LeafBytes(instruction, leaf, ArrayBytes(array));
    }
    return bytes;
  }
  return ArrayBytes(instruction.shape());
}

// The sides of a matrix product, per batch element: the rows of its left
// operand, the contracted depth, the columns of its right operand.
struct DotSides {
  int64_t rows = 0, depth = 0, columns = 0;
};

// `dot`'s sides; nullopt for anything but a dot.
std::optional<DotSides> SidesOf(const HloInstruction& dot) {
  if (!dot.Is(HloOpcode::kDot) || dot.operand_count() != 2) return std::nullopt;
  const DotDimensions dimensions = dot.dot_dimensions();
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  if (!lhs.IsArray() || !rhs.IsArray()) return std::nullopt;
  DotSides sides;
  const int64_t batch = lhs.ExtentAlong(dimensions.lhs_batch);
  sides.depth = lhs.ExtentAlong(dimensions.lhs_contracting);
  if (batch * sides.depth == 0) return std::nullopt;
  sides.rows = lhs.ElementCount() / (batch * sides.depth);
  sides.columns = rhs.ElementCount() / (batch * sides.depth);
  return sides;
}

// The fraction of its full rate XLA CPU's GEMM reaches on `dot`. A thin
// product (few rows, columns or a shallow contraction) spends its time
// packing panels and loading and storing the result's tiles rather than
// multiplying: measured (jaxlib 0.7.1, two cores), 8 rows by 1024 x 1024
// ran at 35 GFLOP/s against 111 for 1024 x 1024 x 1024. The full rate is
// the cube's, so `dot_thin_width` is its side; below it the rate falls as
// a power of the narrowest side, fitted by calibrate_cost to thin products
// of every orientation (0.19: a side of 8 runs at 40%). The orientations
// scatter about the fit (measured at a side of 8: 31% as rows, 22% as
// depth, 53% as columns; at 64: 45%, 64%, 100%), but neither a power per
// side for the narrowest one nor the product of all sides' powers ranked
// cost_rank's plans better than one power for all. A matrix-vector product
// (one row or one column) is exempt: XLA CPU does not call its GEMM for
// those but emits a vectorised loop that streams the matrix at memory speed.
double DotEfficiency(const HloInstruction& dot, const CostConstants& c) {
  const std::optional<DotSides> sides = SidesOf(dot);
  if (!sides || sides->rows == 1 || sides->columns == 1) return 1.0;
  const int64_t side = std::min({sides->rows, sides->depth, sides->columns});
  if (side <= 0) return 1.0;  // an empty product: no flops to scale
  const double fraction = static_cast<double>(side) / c.dot_thin_width;
  return fraction >= 1.0 ? 1.0 : std::pow(fraction, c.dot_thin_exponent);
}

// Elements XLA CPU visits, beyond the block itself, to write a
// dynamic-update-slice in place. Its emitter loops over the operand's index
// space minor dimension innermost and tests every element for lying inside
// the block; the test of the outer dimensions skips whole rows, the minor
// dimension's does not. A block as wide as the rows (a loop over leading
// rows) therefore costs its own elements, and a block of columns costs every
// row it crosses in full: measured (jaxlib 0.7.1), 16 column blocks of
// 512 x 1,000 f32 written into a 512 x 16,000 array took 116 ms, 16 row
// blocks of 32 x 16,000 4.2 ms. The rate is calibrate_cost's `update_scan`.
// TensorFlow 2.21's XLA still loops over the block alone (the same two loops:
// 17.3 ms and 14.7 ms), so for its programs this charge only steers plans
// toward row blocks, which are no slower there.
int64_t UpdateScanElements(const HloInstruction& update) {
  if (!update.Is(HloOpcode::kDynamicUpdateSlice) || update.operand_count() < 2) return 0;
  const Shape& into = update.operand(0)->shape();
  const Shape& block = update.operand(1)->shape();
  if (!into.IsArray() || !block.IsArray() || into.rank() == 0 || block.rank() != into.rank()) {
    return 0;
  }
  const int minor = static_cast<int>(into.MinorToMajor().front());
  const int64_t width = block.dim(minor);
  if (width <= 0 || width >= into.dim(minor)) return 0;
  return block.ElementCount() / width * (into.dim(minor) - width);
}

// The transposed copies XLA CPU makes of `dot`'s operands before it runs
// (DotTransposesOperand), one walk (transpose_walk.h) per copy. Copies of
// one buffer in one order are one (XLA's CSE merges them): the copy is
// counted at the first of its reads (TransposedDotReads' order). A producer
// that fusion writes straight in the transposed order (WrittenTransposed) is
// counted as a copy too, beside its own kernel: the transposed write is
// what costs, and its plain write is small beside it.
std::vector<TransposeWalk> TransposedOperandCopies(const HloInstruction& dot) {
  std::vector<TransposeWalk> copies;
  if (!dot.Is(HloOpcode::kDot)) return copies;
  for (int i = 0; i < 2 && i < dot.operand_count(); ++i) {
    if (!DotTransposesOperand(dot, i)) continue;
    const HloInstruction& buffer = *DotOperandBuffer(dot, i);
    const std::vector<int64_t> order = DotOperandOrder(dot, i);
    bool first = true;
    for (const auto& [reader, operand] : TransposedDotReads(buffer)) {
      if (reader == &dot && operand == i) break;
      if (DotOperandOrder(*reader, operand) == order) first = false;
    }
    if (first && buffer.shape().IsArray()) copies.push_back(WalkOfCopy(buffer.shape(), order));
  }
  return copies;
}

// The figures a walk adds up: totals over a computation, a loop or a kernel.
struct Tally {
  int64_t flops = 0, dot_flops = 0, transcendentals = 0, bytes = 0, kernels = 0, trips = 0;
  double seconds = 0.0;

  void Add(const Tally& other, int64_t times) {
    flops += other.flops * times;
    dot_flops += other.dot_flops * times;
    transcendentals += other.transcendentals * times;
    bytes += other.bytes * times;
    kernels += other.kernels * times;
    trips += other.trips * times;
    seconds += other.seconds * static_cast<double>(times);
  }
};

// Which buffers are still in the last-level cache, by reuse distance: a clock
// counts the bytes the kernels have moved so far, and a buffer touched in full
// at clock t is still cached at clock now while (now - t) + its size fits in
// the cache (what an LRU cache keeps). A loop that re-reads a buffer smaller
// than the cache every trip thus pays memory bandwidth on the first trip
// only, and a trip whose whole working set fits finds its temporaries, which
// XLA places at the same addresses every trip, still cached.
class CacheState {
 public:
  explicit CacheState(double capacity) : capacity_(capacity) {}

  bool Holds(const HloInstruction* buffer, int64_t size) const {
    const auto at = last_.find(buffer);
    if (at == last_.end()) return false;
    return static_cast<double>(clock_ - at->second + size) <= capacity_;
  }
  // Marks `buffer` as touched in full now (call after Advance).
  void Touch(const HloInstruction* buffer) { last_[buffer] = clock_; }
  void Advance(int64_t bytes) { clock_ += bytes; }

 private:
  double capacity_;
  int64_t clock_ = 0;
  std::unordered_map<const HloInstruction*, int64_t> last_;
};

// The buffer a value lives in: resolved through tuples, views and loop state
// by the walker, so that a loop's body and its caller name a buffer alike.
using Resolver = std::function<const HloInstruction*(const HloInstruction&)>;

// One kernel: the materialised `root` with the producers fused into it.
class Kernel {
 public:
  Kernel(const HloInstruction& root, const CostConstants& constants, const Resolver& resolve,
         CacheState* cache)
      : constants_(constants), resolve_(resolve), cache_(cache) {
    Visit(root);
    Write(root);
    scanned_ = UpdateScanElements(root);
    // Touched after the kernel: its own reads do not hit what it writes.
    cache_->Advance(bytes_ + cached_bytes_);
    for (const HloInstruction* buffer : touched_) cache_->Touch(buffer);
  }

  Tally Cost() const {
    Tally tally;
    tally.flops = dot_f32_ + dot_f64_ + elementwise_ + transcendental_;
    tally.dot_flops = dot_f32_ + dot_f64_;
    tally.transcendentals = transcendental_;
    tally.bytes = bytes_ + cached_bytes_;
    tally.kernels = 1;
    const CostConstants& c = constants_;
    // A roofline: arithmetic and memory traffic overlap, the slower decides.
    const double compute = dot_f32_full_rate_ / c.dot_f32_flops_per_second +
                           dot_f64_full_rate_ / c.dot_f64_flops_per_second +
                           elementwise_ / c.elementwise_per_second +
                           transcendental_ / c.transcendental_per_second +
                           comparisons_ / c.sort_comparisons_per_second +
                           selected_ / c.topk_elements_per_second +
                           scanned_ / c.update_scan_elements_per_second;
    const double memory = bytes_ / c.bytes_per_second + cached_bytes_ / c.cache_bytes_per_second;
    tally.seconds = std::max(compute, memory) + c.op_seconds;
    return tally;
  }

 private:
  // Counts `member`'s arithmetic and what it reads from buffers; producers
  // fused into it are visited in turn (once per consumer: XLA duplicates a
  // cheap producer into each consumer's loop, so its work is repeated).
  void Visit(const HloInstruction& member) {
    const int64_t flops = InstructionFlops(member);
    if (XlaRunsAsTopK(member)) {
      // One pass over the keys, not a sort's comparisons (xla_topk.h).
      selected_ += member.operand(0)->shape().ElementCount();
    } else {
      comparisons_ += SortComparisons(member);
      selected_ += TopKElements(member);
    }
    if (IsMatrixWork(member)) {
      const bool f64 = member.shape().element_type() == PrimitiveType::kF64;
      (f64 ? dot_f64_ : dot_f32_) += flops;
      (f64 ? dot_f64_full_rate_ : dot_f32_full_rate_) +=
          static_cast<double>(flops) / DotEfficiency(member, constants_);
    } else if (IsTranscendental(member)) {
      transcendental_ += flops;
    } else {
      elementwise_ += flops;
    }
    for (int i = 0; i < member.operand_count(); ++i) {
      const HloInstruction& operand = *member.operand(i);
      if (InsideConsumer(operand)) {
        Visit(operand);
      } else {
        Read(operand, ReadBytes(member, i));
      }
    }
  }

  // A read of `bytes` of `operand`'s buffer: from cache when the whole buffer
  // was touched recently. A partial read (a slice) does not make the rest of
  // the buffer cached, so only a whole read marks it touched.
  void Read(const HloInstruction& operand, int64_t bytes) {
    const int64_t size = ArrayBytes(operand.shape());
    const HloInstruction* buffer = resolve_(operand);
    if (bytes == size) {
      // A whole buffer read twice in one kernel comes from cache the second time.
      if (!read_whole_.insert(buffer).second) return;
      touched_.push_back(buffer);
    }
    (cache_->Holds(buffer, size) ? cached_bytes_ : bytes_) += bytes;
  }

  // The kernel's output: written at cache speed when its buffer was touched
  // recently (a loop's temporary, written at the same address last trip). An
  // update in place writes a part of its operand's buffer.
  void Write(const HloInstruction& root) {
    const bool in_place = root.Is(HloOpcode::kDynamicUpdateSlice) || root.Is(HloOpcode::kScatter);
    const HloInstruction* buffer = in_place ? resolve_(*root.operand(0)) : &root;
    const int64_t written = WrittenBytes(root);
    (cache_->Holds(buffer, ArrayBytes(root.shape())) ? cached_bytes_ : bytes_) += written;
    if (!in_place) touched_.push_back(buffer);
  }

  const CostConstants& constants_;
  const Resolver& resolve_;
  CacheState* cache_;
  std::unordered_set<const HloInstruction*> read_whole_;
  std::vector<const HloInstruction*> touched_;
  int64_t dot_f32_ = 0, dot_f64_ = 0, elementwise_ = 0, transcendental_ = 0;
  // Dot flops over DotEfficiency: the flops at the full rate that take as
  // long as the products do.
  double dot_f32_full_rate_ = 0.0, dot_f64_full_rate_ = 0.0;
  int64_t comparisons_ = 0;  // a sort's (SortComparisons)
  int64_t selected_ = 0;     // elements a top-k selects from
  int64_t scanned_ = 0;      // elements an update in place visits outside its block
  int64_t bytes_ = 0;         // moved through memory
  int64_t cached_bytes_ = 0;  // moved through the cache
};

class CostWalker {
 public:
  CostWalker(const CostConstants& constants, TimePrediction* out)
      : constants_(constants), out_(out), cache_(constants.cache_bytes),
        resolve_([this](const HloInstruction& value) { return Resolve(value); }) {}

  Tally Computation(const HloComputation& computation) {
    Tally tally;
    for (const auto& instruction : computation.instructions()) {
      tally.Add(Instruction(*instruction), 1);
    }
    return tally;
  }

 private:
  Tally Instruction(const HloInstruction& instruction) {
    switch (instruction.opcode()) {
      case HloOpcode::kWhile:
        return Loop(instruction);
      case HloOpcode::kCall:
        return Computation(*instruction.called_computations().front());
      case HloOpcode::kConditional: {
        // One branch runs; which is not known: the dearest (errs high).
        Tally dearest;
        for (const HloComputation* branch : instruction.called_computations()) {
          const Tally tally = Computation(*branch);
          if (tally.seconds >= dearest.seconds) dearest = tally;
        }
        return dearest;
      }
      default:
        break;
    }
    if (HoldingOf(instruction) != Holding::kOwn) return {};  // no kernel of its own
    Tally tally = Kernel(instruction, constants_, resolve_, &cache_).Cost();
    for (const TransposeWalk& walk : TransposedOperandCopies(instruction)) {
      Tally copy;
      copy.bytes = 2 * walk.bytes;
      copy.kernels = 1;
      copy.seconds = TransposeSeconds(walk, constants_);
      tally.Add(copy, 1);
    }
    return tally;
  }

  // The buffer `value` lives in: a tuple's element, a view's operand, a loop
  // state's element as the trip walked now received it, a loop's result as
  // its last trip left it.
  const HloInstruction* Resolve(const HloInstruction& value) {
    if (value.Is(HloOpcode::kGetTupleElement)) {
      const HloInstruction& tuple = *value.operand(0);
      const int64_t index = value.IntAttribute("index").value_or(-1);
      if (index < 0) return &value;
      if (tuple.Is(HloOpcode::kTuple) && index < tuple.operand_count()) {
        return Resolve(*tuple.operand(static_cast<int>(index)));
      }
      const auto bound = state_.find(&tuple);
      if (bound != state_.end() && index < static_cast<int64_t>(bound->second.size())) {
        return bound->second[index];
      }
      return &value;
    }
    if (HoldingOf(value) == Holding::kOperand && value.operand_count() == 1 &&
        value.shape().IsArray()) {
      return Resolve(*value.operand(0));  // a view: bitcast, reshape
    }
    return &value;
  }

  // The buffers of a loop state's elements: those of `tuple`'s operands.
  std::vector<const HloInstruction*> Elements(const HloInstruction& tuple) {
    std::vector<const HloInstruction*> buffers;
    if (!tuple.Is(HloOpcode::kTuple)) return buffers;
    for (int i = 0; i < tuple.operand_count(); ++i) buffers.push_back(Resolve(*tuple.operand(i)));
    return buffers;
  }

  // One trip of `loop` on a state whose elements live in `state`; returns
  // the buffers of the state it passes on.
  Tally Trip(const HloInstruction& loop, const std::vector<const HloInstruction*>& state,
             std::vector<const HloInstruction*>* next) {
    const HloComputation& body = *loop.CalledComputation("body");
    const HloComputation& condition = *loop.CalledComputation("condition");
    state_[condition.parameter(0)] = state;
    Tally once = Computation(condition);
    state_[body.parameter(0)] = state;
    once.Add(Computation(body), 1);
    once.trips += 1;
    once.seconds += constants_.trip_seconds;
    *next = Elements(*body.root());
    return once;
  }

  // A loop costs its first trip and then `trips - 1` trips like the second:
  // what the first trip brought into the cache is there for the others.
  Tally Loop(const HloInstruction& loop) {
    const int64_t counted = TripCount(loop);
    const int64_t trips = counted < 0 ? 1 : counted;
    const bool record = replaying_ == 0;  // a nested loop is recorded on its outer loop's first trip
    const size_t slot = out_->loops.size();
    if (record) out_->loops.emplace_back();  // nested loops are listed after the one that holds them
    std::vector<const HloInstruction*> state = Elements(*loop.operand(0)), next;
    Tally all;
    if (trips > 0) all.Add(Trip(loop, state, &next), 1);
    if (trips > 1) {
      ++replaying_;
      all.Add(Trip(loop, next, &next), trips - 1);
      --replaying_;
    }
    state_[&loop] = next;  // get-tuple-element of the loop reads its last state
    TouchBuffersWrittenWhole(loop, trips);
    if (!record) return all;
    LoopCost& entry = out_->loops[slot];
    entry.computation = loop.parent()->name();
    entry.instruction = loop.name();
    entry.trips = trips;
    entry.trips_known = counted >= 0;
    entry.flops = all.flops;
    entry.bytes = all.bytes;
    entry.seconds = all.seconds;
    return all;
  }

  // A state element the loop updates in place block by block has been
  // written all over once the trips' blocks cover it: it is as recently
  // touched as if one kernel had written it whole. (A kernel's in-place
  // write touches no whole buffer; without this, the splitter's loop
  // results, which the next kernel reads whole, came from memory.)
  void TouchBuffersWrittenWhole(const HloInstruction& loop, int64_t trips) {
    const HloInstruction& root = *loop.CalledComputation("body")->root();
    if (!root.Is(HloOpcode::kTuple)) return;
    for (const HloInstruction* element : root.operands()) {
      if (element->Is(HloOpcode::kDynamicUpdateSlice) &&
          WrittenBytes(*element) * trips >= ArrayBytes(element->shape())) {
        cache_.Touch(Resolve(*element));
      }
    }
  }

  const CostConstants& constants_;
  TimePrediction* out_;
  CacheState cache_;
  Resolver resolve_;
  // The buffers of each loop parameter's (or loop result's) tuple elements.
  std::unordered_map<const HloInstruction*, std::vector<const HloInstruction*>> state_;
  int replaying_ = 0;  // > 0 while walking a loop's second trip
};

}  // namespace

TimePrediction PredictTime(const HloModule& module, const CostConstants& constants) {
  TimePrediction prediction;
  if (module.entry() == nullptr) return prediction;
  CostWalker walker(constants, &prediction);
  const Tally tally = walker.Computation(*module.entry());
  prediction.flops = tally.flops;
  prediction.dot_flops = tally.dot_flops;
  prediction.transcendentals = tally.transcendentals;
  prediction.bytes = tally.bytes;
  prediction.kernels = tally.kernels;
  prediction.trips = tally.trips;
  prediction.seconds = tally.seconds;
  return prediction;
}

}  // namespace exla
