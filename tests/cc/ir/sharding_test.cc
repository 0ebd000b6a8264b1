// XLA's sharding attribute as exla reads it (cc/ir/sharding.h): one row per
// form XLA prints, with the pieces of each dimension it must give.
#include "ir/sharding.h"

#include <string>
#include <vector>

#include "tests/cc/test_harness.h"

namespace {

using exla::HloSharding;
using exla::ParseSharding;
using Kind = HloSharding::Kind;

struct Row {
  const char* text;
  Kind kind;
  std::vector<int64_t> tiles;
  int64_t devices;
  bool partially_manual;
};

TEST(HloSharding, ReadsEveryFormXlaPrints) {
  const std::vector<Row> rows = {
      {"{replicated}", Kind::kReplicated, {}, 1, false},
      {"{maximal device=3}", Kind::kMaximal, {}, 1, false},
      {"{manual}", Kind::kManual, {}, 1, false},
      {"{devices=[8,1]<=[8]}", Kind::kTiled, {8, 1}, 8, false},
      // The device order does not change the pieces.
      {"{devices=[2,4]<=[4,2]T(1,0)}", Kind::kTiled, {2, 4}, 8, false},
      {"{devices=[2,2]0,2,1,3}", Kind::kTiled, {2, 2}, 4, false},
      // The replicated subgroup is no data dimension.
      {"{devices=[4,1,2]<=[8] last_tile_dim_replicate}", Kind::kTiled, {4, 1}, 8, false},
      {"{devices=[1,1,4,2]<=[8] last_tile_dims={manual, replicated}}", Kind::kTiled, {1, 1}, 8,
       true},
      {"{devices=[8,1]<=[8] metadata={op_name=\"x\"}}", Kind::kTiled, {8, 1}, 8, false},
  };
  for (const Row& row : rows) {
    std::optional<HloSharding> sharding = ParseSharding(row.text);
    ASSERT_TRUE(sharding.has_value()) << row.text;
    EXPECT_TRUE(sharding->kind == row.kind) << row.text;
    EXPECT_TRUE(sharding->tiles == row.tiles) << row.text;
    EXPECT_EQ(sharding->devices, row.devices) << row.text;
    EXPECT_EQ(sharding->partially_manual, row.partially_manual) << row.text;
  }
}

TEST(HloSharding, TupleHasOneShardingPerElement) {
  std::optional<HloSharding> sharding =
      ParseSharding("{{replicated}, {devices=[4,1,2]<=[8] last_tile_dim_replicate}}");
  ASSERT_TRUE(sharding.has_value());
  ASSERT_TRUE(sharding->kind == Kind::kTuple);
  ASSERT_EQ(sharding->elements.size(), 2u);
  EXPECT_TRUE(sharding->elements[0].kind == Kind::kReplicated);
  EXPECT_EQ(sharding->elements[1].TilesOf(0), 4);
  EXPECT_EQ(sharding->elements[1].TilesOf(1), 1);
}

TEST(HloSharding, DimensionsOfAnUntiledValueAreWhole) {
  EXPECT_EQ(ParseSharding("{replicated}")->TilesOf(0), 1);
  EXPECT_EQ(ParseSharding("{devices=[8,1]<=[8]}")->TilesOf(5), 1);
}

TEST(HloSharding, UnknownFormsAreNotGuessed) {
  for (const char* text : {"{unknown}", "{devices=[8,1]<=[8] shard_as 1}", "devices=[8]<=[8]",
                           "{devices=[0,1]<=[8]}", "{devices=[8,1]<=[8] last_tile_dims={foo}}"}) {
    EXPECT_FALSE(ParseSharding(text).has_value()) << text;
  }
}

}  // namespace
