// XLA's `sharding=` attribute, decoded: how the SPMD partitioner spreads a
// value over the devices.
//
// JAX (and any other frontend that shards with XLA) annotates the program it
// hands to XLA with shardings on the parameters, the results and a few
// constraints; XLA's partitioner derives the rest and gives every device its
// piece of each value. exla reads these annotations to know what one device
// holds (see analysis/sharding_analysis.h). The forms XLA prints:
//
//   {replicated}                          every device holds the whole value
//   {maximal device=3}                    one device holds it
//   {manual}                              the program is already per device
//   {devices=[8,1]<=[8]}                  dimension 0 in 8 pieces
//   {devices=[2,2]0,2,1,3}                the same, devices listed explicitly
//   {devices=[4,1,2]<=[8] last_tile_dim_replicate}   4 pieces, each on 2 devices
//   {devices=[1,1,4,2]<=[8] last_tile_dims={manual, replicated}}
//   {{replicated}, {devices=[8]<=[8]}}    one sharding per tuple element
//
// The attribute's text stays the instruction's (the printer writes it back
// unchanged); this is a read-only view of it.
#ifndef EXLA_IR_SHARDING_H_
#define EXLA_IR_SHARDING_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace exla {

struct HloSharding {
  enum class Kind { kReplicated, kMaximal, kManual, kTiled, kTuple };
  Kind kind = Kind::kReplicated;
  // kTiled: pieces of each data dimension, in dimension order ({8, 1}).
  std::vector<int64_t> tiles;
  // kTiled: every device the tile assignment names (pieces of the data
  // dimensions times the replicated and manual subgroups).
  int64_t devices = 1;
  // kTiled: some subgroup of devices is manual (a partially manual value of
  // a shard_map that leaves other mesh axes to the partitioner).
  bool partially_manual = false;
  // kTuple: one sharding per element.
  std::vector<HloSharding> elements;

  bool IsTiled() const { return kind == Kind::kTiled; }
  // Pieces of data dimension `dim` (1 when the value is not tiled).
  int64_t TilesOf(int64_t dim) const;
};

// Decodes the value of a `sharding=` attribute (braces included); nullopt
// for a form exla does not know ({unknown}, shard_as groups...), which
// callers must treat as "partitioned in some unknown way".
std::optional<HloSharding> ParseSharding(std::string_view text);

}  // namespace exla

#endif  // EXLA_IR_SHARDING_H_
