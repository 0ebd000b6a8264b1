#include "analysis/sharding_analysis.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <optional>
#include <unordered_set>

#include "analysis/dimension_map.h"
#include "ir/computation.h"
#include "ir/sharding.h"
#include "ir/shardy_names.h"

namespace exla {
namespace {

using Fact = ShardingAnalysis::Fact;

// The arrays of a value: the value itself, or each element of a tuple
// (nullptr for an element that is no array).
std::vector<const Shape*> ArraysOf(const Shape& shape) {
  if (shape.IsArray()) return {&shape};
  std::vector<const Shape*> arrays;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      arrays.push_back(element.IsArray() ? &element : nullptr);
    }
  }
  return arrays;
}

std::string Unquoted(std::string text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') return text.substr(1, text.size() - 2);
  return text;
}

std::string CustomCallTarget(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kCustomCall)) return "";
  return Unquoted(instruction.RawAttribute("custom_call_target").value_or(""));
}

// Shardy's marker of a result's sharding: the value passes unchanged (the
// sharding is on the instruction that reads it). A sharding constraint
// (custom call "Sharding") is no such identity: the partitioner reshards its
// operand to the constraint, which may differ from the operand's sharding.
bool IsShardingIdentity(const HloInstruction& instruction) {
  return instruction.operand_count() == 1 &&
         CustomCallTarget(instruction) == shardy::kFuncResultShardingTarget;
}

// The name of the first of Shardy's meshes (`xla.sdy.meshes={mesh = ...}`).
std::string FirstMeshName(const std::string& header) {
  const std::string key = std::string(shardy::kMeshesAttribute) + "={";
  size_t at = header.find(key);
  if (at == std::string::npos) return "";
  at += key.size();
  size_t end = header.find('=', at);
  if (end == std::string::npos) return "";
  std::string name = header.substr(at, end - at);
  name.erase(std::remove_if(name.begin(), name.end(),
                            [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
             name.end());
  return name;
}

// Every `"name"=size` of Shardy's meshes in the module header
// (`xla.sdy.meshes={mesh = #sdy.mesh<["a"=4, "b"=2]>}`).
std::vector<std::pair<std::string, int64_t>> MeshAxes(const std::string& header) {
  std::vector<std::pair<std::string, int64_t>> axes;
  size_t at = header.find(std::string(shardy::kMeshesAttribute) + "=");
  while (at != std::string::npos) {
    at = header.find(shardy::kMeshAxesPrefix, at);
    if (at == std::string::npos) break;
    size_t end = header.find("]>", at);
    std::string list = header.substr(at, end == std::string::npos ? std::string::npos : end - at);
    list.erase(std::remove(list.begin(), list.end(), '\\'), list.end());
    size_t quote = list.find('"');
    while (quote != std::string::npos) {
      size_t close = list.find('"', quote + 1);
      if (close == std::string::npos || close + 1 >= list.size() || list[close + 1] != '=') break;
      size_t digits = close + 2;
      int64_t size = 0;
      while (digits < list.size() && std::isdigit(static_cast<unsigned char>(list[digits]))) {
        size = size * 10 + (list[digits++] - '0');
      }
      axes.push_back({list.substr(quote + 1, close - quote - 1), size});
      quote = list.find('"', digits);
    }
    at = end;
  }
  return axes;
}

// The mesh axes a shard_map is manual over, from the frontend attribute
// `xla.sdy.manual_axes="#sdy<manual_axes{\"a\", \"b\"}>"` of the custom call
// that enters or leaves its body.
std::optional<std::vector<std::string>> ManualAxes(const HloInstruction& instruction) {
  std::string attributes = instruction.RawAttribute("frontend_attributes").value_or("");
  size_t at = attributes.find(shardy::kManualAxesKey);
  if (at == std::string::npos) return std::nullopt;
  size_t end = attributes.find('}', at);
  std::string list = attributes.substr(at, end == std::string::npos ? std::string::npos : end - at);
  list.erase(std::remove(list.begin(), list.end(), '\\'), list.end());
  std::vector<std::string> names;
  size_t quote = list.find('"');
  while (quote != std::string::npos) {
    size_t close = list.find('"', quote + 1);
    if (close == std::string::npos) break;
    names.push_back(list.substr(quote + 1, close - quote - 1));
    quote = list.find('"', close + 1);
  }
  return names;
}

// The manual axes of a shard_map's call, from the custom calls that enter or
// leave its body. Those reach the call through get-tuple-elements when the
// body takes or returns several values; jaxlib <= 0.10 copied the attribute
// onto those get-tuple-elements, jaxlib >= 0.11 leaves it on the custom
// calls alone.
std::optional<std::vector<std::string>> ShardMapManualAxes(const HloInstruction& call) {
  for (const HloInstruction* operand : call.operands()) {
    std::optional<std::vector<std::string>> manual = ManualAxes(*operand);
    if (!manual.has_value() && operand->Is(HloOpcode::kGetTupleElement)) {
      manual = ManualAxes(*operand->operand(0));
    }
    if (manual.has_value()) return manual;
  }
  for (const HloInstruction* user : call.users()) {
    std::optional<std::vector<std::string>> manual = ManualAxes(*user);
    if (manual.has_value()) return manual;
    if (!user->Is(HloOpcode::kGetTupleElement)) continue;
    for (const HloInstruction* leaving : user->users()) {
      manual = ManualAxes(*leaving);
      if (manual.has_value()) return manual;
    }
  }
  return std::nullopt;
}

// Shardy's form of a shard_map: `call(...)` of a computation named
// xla.sdy.manual_computation_body*, entered through
// xla.sdy.GlobalToLocalShape custom calls.
bool IsManualComputationCall(const HloInstruction& instruction) {
  if (!instruction.Is(HloOpcode::kCall)) return false;
  const HloComputation* body = instruction.CalledComputation("to_apply");
  return body != nullptr && body->name().rfind(shardy::kManualComputationBodyPrefix, 0) == 0;
}

// Union-find over dimension nodes, with the facts of each class.
class Classes {
 public:
  int64_t Add(int64_t count) {
    const int64_t first = static_cast<int64_t>(parent_.size());
    for (int64_t i = 0; i < count; ++i) {
      parent_.push_back(first + i);
      facts_.emplace_back();
    }
    return first;
  }
  int64_t Find(int64_t node) {
    while (parent_[node] != node) node = parent_[node] = parent_[parent_[node]];
    return node;
  }
  void Union(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return;
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    parent_[b] = a;
    facts_[a] = Merge(facts_[a], facts_[b]);
  }
  void Seed(int64_t node, Fact fact) {
    if (node < 0) return;
    node = Find(node);
    facts_[node] = Merge(facts_[node], fact);
  }
  Fact Resolved(int64_t node) { return facts_[Find(node)]; }
  int64_t size() const { return static_cast<int64_t>(parent_.size()); }

 private:
  static Fact Merge(Fact a, Fact b) {
    if (a.pieces == 0 && !a.conflict) return b;
    if (b.pieces == 0 && !b.conflict) return a;
    if (a.result != b.result) {
      // What the program's results ask for gives way to what its inputs and
      // constraints say: the partitioner reshards at the end.
      Fact kept = a.result ? b : a;
      kept.refused = a.refused || b.refused;
      return kept;
    }
    Fact merged = a;
    merged.conflict = a.conflict || b.conflict || a.pieces != b.pieces;
    merged.refused = a.refused || b.refused;
    merged.pieces = std::min(a.pieces, b.pieces);
    if (merged.reason < 0) merged.reason = b.reason;
    return merged;
  }
  std::vector<int64_t> parent_;
  std::vector<Fact> facts_;
};

}  // namespace

// The analysis is a union-find over the dimensions of every value: the steps
// below make the nodes, mark shard_map bodies, seed the classes with what the
// annotations say and join the dimensions that are the same dimension of one
// value; the facts of each class are then resolved.
class ShardingAnalysis::Builder {
 public:
  Builder(ShardingAnalysis* analysis, const HloModule& module)
      : self_(*analysis), module_(module), mesh_(MeshAxes(module.header_attributes())) {}

  void Run() {
    self_.mesh_ = FirstMeshName(module_.header_attributes());
    int64_t mesh_devices = 1;
    for (const auto& axis : mesh_) mesh_devices *= std::max<int64_t>(1, axis.second);
    self_.devices_ = std::max(self_.devices_, mesh_devices);
    AddNodes();
    FindShardMapBodies();
    for (const auto& computation : module_.computations()) Visit(*computation);
    self_.facts_.resize(classes_.size());
    self_.classes_.resize(classes_.size());
    for (int64_t n = 0; n < classes_.size(); ++n) {
      self_.facts_[n] = classes_.Resolved(n);
      self_.classes_[n] = classes_.Find(n);
    }
  }

 private:
  // One node per dimension of every array of every instruction.
  void AddNodes() {
    for (const auto& computation : module_.computations()) {
      for (const auto& instruction : computation->instructions()) {
        auto& first = self_.first_node_[instruction.get()];
        for (const Shape* array : ArraysOf(instruction->shape())) {
          if (array == nullptr) {
            first.push_back({-1, 0});
          } else {
            first.push_back({classes_.Add(array->rank()), array->rank()});
          }
        }
      }
    }
  }

  int64_t node(const HloInstruction* instruction, size_t array, int64_t dim) const {
    return self_.Node(*instruction, array, dim);
  }

  // Connects every dimension of array `a` of `x` with the same dimension of
  // array `b` of `y` (the same value, or a value of the same shape).
  void Same(const HloInstruction* x, size_t a, const HloInstruction* y, size_t b) {
    std::vector<const Shape*> xs = ArraysOf(x->shape()), ys = ArraysOf(y->shape());
    if (a >= xs.size() || b >= ys.size() || xs[a] == nullptr || ys[b] == nullptr) return;
    if (xs[a]->rank() != ys[b]->rank()) return;
    for (int64_t d = 0; d < xs[a]->rank(); ++d) classes_.Union(node(x, a, d), node(y, b, d));
  }

  int Reason(std::string text) {
    self_.reasons_.push_back(std::move(text));
    return static_cast<int>(self_.reasons_.size() - 1);
  }

  // Every dimension of `instruction` gets `fact`.
  void SeedAll(const HloInstruction* instruction, const Fact& fact) {
    std::vector<const Shape*> arrays = ArraysOf(instruction->shape());
    for (size_t a = 0; a < arrays.size(); ++a) {
      for (int64_t d = 0; arrays[a] != nullptr && d < arrays[a]->rank(); ++d) {
        classes_.Seed(node(instruction, a, d), fact);
      }
    }
  }

  // Every dimension of `instruction` is refused for `why`.
  void Refuse(const HloInstruction* instruction, int why) {
    SeedAll(instruction, Fact{0, true, true, why});
  }

  // shard_map bodies in Shardy's form are per-device programs, unless manual
  // over only some of the mesh axes (refused); so is what they call.
  void FindShardMapBodies() {
    for (const auto& computation : module_.computations()) {
      for (const auto& instruction : computation->instructions()) {
        if (IsManualComputationCall(*instruction)) ClassifyShardMap(*instruction);
      }
    }
    std::vector<const HloComputation*> stack(manual_bodies_.begin(), manual_bodies_.end());
    for (const auto& [body, why] : refused_bodies_) stack.push_back(body);
    while (!stack.empty()) {
      const HloComputation* computation = stack.back();
      stack.pop_back();
      for (const auto& instruction : computation->instructions()) {
        for (const HloComputation* callee : instruction->called_computations()) {
          bool refused = refused_bodies_.count(computation) != 0;
          bool added = refused
                           ? refused_bodies_.emplace(callee, refused_bodies_.at(computation)).second
                           : manual_bodies_.insert(callee).second;
          if (added) stack.push_back(callee);
        }
      }
    }
  }

  void ClassifyShardMap(const HloInstruction& call) {
    self_.active_ = true;
    const HloComputation* body = call.CalledComputation("to_apply");
    std::optional<std::vector<std::string>> manual = ShardMapManualAxes(call);
    std::string partial;
    for (const auto& [axis, size] : mesh_) {
      if (size > 1 && (!manual.has_value() ||
                       std::find(manual->begin(), manual->end(), axis) == manual->end())) {
        partial += (partial.empty() ? "" : ", ") + axis;
      }
    }
    if (!manual.has_value() && mesh_.empty()) partial = "(its mesh axes cannot be read)";
    if (partial.empty()) {
      manual_bodies_.insert(body);
    } else {
      refused_bodies_[body] = "the shard_map body " + body->name() +
                              " leaves mesh axes to the partitioner: " + partial;
    }
  }

  void Visit(const HloComputation& computation) {
    const bool manual = manual_bodies_.count(&computation) != 0;
    auto refused = refused_bodies_.find(&computation);
    const int refused_why = refused == refused_bodies_.end() ? -1 : Reason(refused->second);
    for (const auto& owned : computation.instructions()) {
      const HloInstruction* instruction = owned.get();
      if (refused_why >= 0) {
        Refuse(instruction, refused_why);
        continue;
      }
      if (manual) {
        // What one device holds: a sharding written inside is not about it.
        if (instruction->Is(HloOpcode::kParameter)) SeedAll(instruction, Fact{1, false, false, -1});
      } else if (std::optional<std::string> text = instruction->RawAttribute("sharding")) {
        if (!SeedAnnotation(instruction, *text)) continue;
      }
      if (!JoinSameValues(instruction)) JoinMappedDimensions(instruction);
    }
  }

  // Seeds the dimensions of `instruction` with its `sharding=` annotation;
  // false when it cannot be read (then every dimension is refused).
  bool SeedAnnotation(const HloInstruction* instruction, const std::string& text) {
    self_.active_ = true;
    std::optional<HloSharding> sharding = ParseSharding(text);
    const std::string unreadable = "exla cannot read the sharding " + text + " of " +
                                   instruction->name();
    if (!sharding.has_value()) {
      Refuse(instruction, Reason(unreadable));
      return false;
    }
    // The sharding asked of the program's results (or of a dead value).
    const bool result = instruction->user_count() == 0;
    std::vector<const Shape*> arrays = ArraysOf(instruction->shape());
    for (size_t a = 0; a < arrays.size(); ++a) {
      const HloSharding& own =
          sharding->kind == HloSharding::Kind::kTuple
              ? (a < sharding->elements.size() ? sharding->elements[a] : *sharding)
              : *sharding;
      self_.devices_ = std::max(self_.devices_, own.devices);
      if (arrays[a] == nullptr) continue;
      const bool readable =
          own.kind != HloSharding::Kind::kTuple &&
          (!own.IsTiled() || static_cast<int64_t>(own.tiles.size()) == arrays[a]->rank());
      for (int64_t d = 0; d < arrays[a]->rank(); ++d) {
        Fact fact{own.TilesOf(d), false, false, -1, result};
        if (!readable) {
          fact = Fact{0, true, true, Reason(unreadable)};
        } else if (own.partially_manual) {
          fact = Fact{0, true, true, Reason(instruction->name() + " is manual over only "
                                            "some mesh axes (a shard_map that leaves the "
                                            "others to the partitioner)")};
        }
        classes_.Seed(node(instruction, a, d), fact);
      }
    }
    return true;
  }

  // Dimensions that are the same dimension of another value (tuples, loop
  // state, calls, slices exla builds); true when the opcode is one of these.
  bool JoinSameValues(const HloInstruction* instruction) {
    switch (instruction->opcode()) {
      case HloOpcode::kTuple:
        for (int k = 0; k < instruction->operand_count(); ++k) {
          Same(instruction, static_cast<size_t>(k), instruction->operand(k), 0);
        }
        return true;
      case HloOpcode::kGetTupleElement:
        Same(instruction, 0, instruction->operand(0),
             static_cast<size_t>(instruction->IntAttribute("index").value_or(0)));
        return true;
      case HloOpcode::kWhile:
        JoinLoopState(instruction);
        return true;
      case HloOpcode::kCall: {
        const HloComputation* callee = instruction->CalledComputation("to_apply");
        if (callee == nullptr || IsManualComputationCall(*instruction)) return true;
        for (int k = 0; k < instruction->operand_count(); ++k) {
          Same(instruction->operand(k), 0, callee->parameter(k), 0);
        }
        for (size_t a = 0; a < ArraysOf(instruction->shape()).size(); ++a) {
          Same(instruction, a, callee->root(), a);
        }
        return true;
      }
      case HloOpcode::kDynamicSlice:
        // The loops exla builds slice whole dimensions only; a slice of a
        // cut one is refused with the dimension it slices.
        Same(instruction, 0, instruction->operand(0), 0);
        return true;
      case HloOpcode::kDynamicUpdateSlice:
        Same(instruction, 0, instruction->operand(0), 0);
        Same(instruction, 0, instruction->operand(1), 0);
        return true;
      case HloOpcode::kCustomCall:
        if (IsShardingIdentity(*instruction)) Same(instruction, 0, instruction->operand(0), 0);
        return true;
      default:
        return false;
    }
  }

  // The loop state: operand, body parameter and root, condition parameter
  // and result are one value.
  void JoinLoopState(const HloInstruction* loop) {
    const HloComputation* body = loop->CalledComputation("body");
    const HloComputation* condition = loop->CalledComputation("condition");
    for (size_t a = 0; a < ArraysOf(loop->shape()).size(); ++a) {
      Same(loop, a, loop->operand(0), a);
      if (body != nullptr) {
        Same(loop, a, body->parameter(0), a);
        Same(loop, a, body->root(), a);
      }
      if (condition != nullptr) Same(loop, a, condition->parameter(0), a);
    }
  }

  // Everything else along the splitter's dimension map; sort and top-k give
  // each of their arrays the same rows.
  void JoinMappedDimensions(const HloInstruction* instruction) {
    const bool rows = instruction->Is(HloOpcode::kSort) || instruction->Is(HloOpcode::kTopK);
    std::vector<const Shape*> arrays = ArraysOf(instruction->shape());
    if (arrays.empty() || (!instruction->shape().IsArray() && !rows)) return;
    for (int k = 0; k < instruction->operand_count(); ++k) {
      const Shape& operand = instruction->operand(k)->shape();
      if (!operand.IsArray()) continue;
      for (int64_t d = 0; d < operand.rank(); ++d) {
        DimensionMapping r = ResultDimension(*instruction, k, d);
        if (!r.is_dimension()) continue;
        for (size_t a = 0; a < arrays.size(); ++a) {
          classes_.Union(node(instruction, a, r.dimension()), node(instruction->operand(k), 0, d));
        }
      }
      for (int64_t r = 0; arrays[0] != nullptr && r < arrays[0]->rank(); ++r) {
        DimensionMapping d = OperandDimension(*instruction, r, k);
        if (d.is_dimension()) {
          classes_.Union(node(instruction, 0, r), node(instruction->operand(k), 0, d.dimension()));
        }
      }
    }
  }

  ShardingAnalysis& self_;
  const HloModule& module_;
  const std::vector<std::pair<std::string, int64_t>> mesh_;
  Classes classes_;
  std::unordered_set<const HloComputation*> manual_bodies_;  // per-device programs
  std::unordered_map<const HloComputation*, std::string> refused_bodies_;
};

ShardingAnalysis::ShardingAnalysis(const HloModule& module) { Builder(this, module).Run(); }

int64_t ShardingAnalysis::Node(const HloInstruction& instruction, size_t array, int64_t dim) const {
  auto it = first_node_.find(&instruction);
  if (it == first_node_.end() || array >= it->second.size()) return -1;
  const auto [first, rank] = it->second[array];
  if (first < 0 || dim < 0 || dim >= rank) return -1;
  return first + dim;
}

int64_t ShardingAnalysis::Pieces(const HloInstruction& instruction, int64_t dim) const {
  if (!active_) return 1;
  int64_t n = Node(instruction, 0, dim);
  return n < 0 ? 0 : facts_[n].pieces;
}

std::vector<int64_t> ShardingAnalysis::Cuts(const HloInstruction& instruction, size_t array,
                                            int64_t whole_dim) const {
  std::vector<const Shape*> arrays = ArraysOf(instruction.shape());
  if (array >= arrays.size() || arrays[array] == nullptr) return {};
  const int rank = arrays[array]->rank();
  std::vector<int64_t> pieces(rank, 1);
  if (!active_) return pieces;
  // The most pieces first, each class once, never more pieces than devices.
  std::vector<int> cut;
  for (int d = 0; d < rank; ++d) {
    int64_t n = Node(instruction, array, d);
    if (d != whole_dim && n >= 0 && facts_[n].pieces > 1) cut.push_back(d);
  }
  std::stable_sort(cut.begin(), cut.end(), [&](int x, int y) {
    return facts_[Node(instruction, array, x)].pieces > facts_[Node(instruction, array, y)].pieces;
  });
  std::unordered_set<int64_t> used;
  int64_t product = 1;
  for (int d : cut) {
    const int64_t n = Node(instruction, array, d);
    if (used.count(classes_[n]) || product * facts_[n].pieces > devices_) continue;
    used.insert(classes_[n]);
    product *= facts_[n].pieces;
    pieces[d] = facts_[n].pieces;
  }
  return pieces;
}

int64_t ShardingAnalysis::DeviceBytes(const HloInstruction& instruction, int64_t whole_dim,
                                      bool largest) const {
  if (!active_) {
    return largest ? LargestArrayBytes(instruction.shape()) : instruction.shape().ByteSize();
  }
  std::vector<const Shape*> arrays = ArraysOf(instruction.shape());
  if (arrays.empty()) return instruction.shape().ByteSize();
  int64_t total = 0, most = 0;
  for (size_t a = 0; a < arrays.size(); ++a) {
    if (arrays[a] == nullptr) continue;
    Shape local = *arrays[a];
    std::vector<int64_t> pieces = Cuts(instruction, a, whole_dim);
    for (int d = 0; d < local.rank(); ++d) local.set_dim(d, (local.dim(d) + pieces[d] - 1) / pieces[d]);
    total += local.ByteSize();
    most = std::max(most, local.ByteSize());
  }
  return largest ? most : total;
}

int64_t ShardingAnalysis::LargestDeviceBytes(const HloInstruction& instruction) const {
  return DeviceBytes(instruction, -1, /*largest=*/true);
}

bool ShardingAnalysis::KeptWhole(const HloInstruction& instruction) const {
  return !kept_.empty() && instruction.parent() != nullptr &&
         kept_.count(instruction.parent()->name() + "/" + instruction.name()) != 0;
}

int64_t ShardingAnalysis::BytesToSplit(const HloInstruction& instruction) const {
  return KeptWhole(instruction) ? 0 : LargestDeviceBytes(instruction);
}

int64_t ShardingAnalysis::DeviceByteSize(const HloInstruction& instruction,
                                         int64_t whole_dim) const {
  return DeviceBytes(instruction, whole_dim, /*largest=*/false);
}

// Why nothing certain is known of dimension `dim`, or Ok.
WhyNot ShardingAnalysis::Unsure(const HloInstruction& instruction, int64_t dim) const {
  const std::string which = "dimension " + std::to_string(dim) + " of " + instruction.name();
  int64_t n = Node(instruction, 0, dim);
  if (n < 0) return WhyNot::Because(which + " has no known partitioning");
  const Fact& fact = facts_[n];
  if (fact.conflict) {
    return WhyNot::Because(which + " may be cut between devices: " +
                           (fact.reason >= 0 ? reasons_[fact.reason]
                                             : std::string("its shardings disagree")));
  }
  if (fact.pieces == 0) return WhyNot::Because("how XLA partitions " + which + " is not known");
  return WhyNot::Ok();
}

WhyNot ShardingAnalysis::MayLoopOver(const HloInstruction& instruction, int64_t dim) const {
  if (!active_) return WhyNot::Ok();
  WhyNot sure = Unsure(instruction, dim);
  if (!sure.ok()) return sure;
  const int64_t pieces = facts_[Node(instruction, 0, dim)].pieces;
  if (pieces == 1 || DeviceByteSize(instruction, dim) == DeviceByteSize(instruction)) {
    return WhyNot::Ok();
  }
  return WhyNot::Because("dimension " + std::to_string(dim) + " of " + instruction.name() +
                         " is cut between " + std::to_string(pieces) +
                         " devices (a loop over it would gather it onto every device)");
}

WhyNot ShardingAnalysis::MaySlice(const HloInstruction& instruction, int64_t dim, int64_t limit,
                                  bool* gather) const {
  *gather = false;
  if (!active_) return WhyNot::Ok();
  int64_t n = Node(instruction, 0, dim);
  if (n >= 0 && facts_[n].refused) return Unsure(instruction, dim);
  if (n >= 0 && !facts_[n].conflict && facts_[n].pieces == 1) return WhyNot::Ok();
  if (!instruction.shape().IsArray() || instruction.shape().ByteSize() > limit) {
    WhyNot sure = Unsure(instruction, dim);
    return WhyNot::Because(
        instruction.name() + " (" + HumanBytes(instruction.shape().ByteSize()) +
        ") would be sliced along dimension " + std::to_string(dim) + ", which " +
        (sure.ok() ? "is cut between " + std::to_string(facts_[n].pieces) + " devices"
                   : "may be cut between devices (" + sure.reason() + ")") +
        ", and is too large to gather onto every device");
  }
  *gather = true;
  return WhyNot::Ok();
}

HloInstruction* ShardingAnalysis::WholeOnEveryDevice(HloInstruction* value) const {
  HloInstruction* whole = value->parent()->Add(HloOpcode::kCustomCall, value->shape(), {value},
                                               value->name() + ".whole");
  whole->SetAttribute("custom_call_target", "\"Sharding\"");
  if (!mesh_.empty()) {
    // Shardy reads its own form of the constraint; GSPMD reads `sharding`.
    std::string dims;
    for (int d = 0; d < value->shape().rank(); ++d) dims += d == 0 ? "{}" : ", {}";
    whole->SetAttribute("frontend_attributes",
                        "{" + std::string(shardy::kShardingFrontendAttribute) + "=\"" +
                            std::string(shardy::kShardingPerValuePrefix) + mesh_ + ", [" + dims +
                            "]>]>\"}");
  }
  // Decorations go before the first decoration: set last, printed first.
  whole->SetAttribute("sharding", "{replicated}");
  return whole;
}

}  // namespace exla
