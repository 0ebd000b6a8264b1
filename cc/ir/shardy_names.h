// Names that Shardy, XLA's sharding dialect, gives the attributes, custom
// calls and computations it leaves in HLO text. exla reads them to follow a
// program's shardings (analysis/sharding_analysis.h) and
// writes one of them back (a sharding constraint in Shardy's form); they are
// spelled once, here, as XLA's xla/service/spmd/shardy/constants.h does.
#ifndef EXLA_IR_SHARDY_NAMES_H_
#define EXLA_IR_SHARDY_NAMES_H_

#include <string_view>

namespace exla::shardy {

// Module header attribute holding the meshes: `xla.sdy.meshes={mesh = #sdy.mesh<[...]>}`.
inline constexpr std::string_view kMeshesAttribute = "xla.sdy.meshes";
// Start of one mesh's axis list in that attribute: `#sdy.mesh<["a"=4, "b"=2]>`.
inline constexpr std::string_view kMeshAxesPrefix = "#sdy.mesh<[";
// Custom call that marks a result's sharding; its value passes unchanged.
inline constexpr std::string_view kFuncResultShardingTarget = "xla.sdy.FuncResultSharding";
// Prefix of the computation holding a shard_map's body.
inline constexpr std::string_view kManualComputationBodyPrefix = "xla.sdy.manual_computation_body";
// Frontend attribute listing the manual axes of a shard_map's entry/exit calls.
inline constexpr std::string_view kManualAxesKey = "manual_axes{";
// Frontend attribute of a sharding in Shardy's form, on a constraint.
inline constexpr std::string_view kShardingFrontendAttribute = "xla.sdy.sharding";
// Prefix of the value of that attribute.
inline constexpr std::string_view kShardingPerValuePrefix = "#sdy.sharding_per_value<[<@";

}  // namespace exla::shardy

#endif  // EXLA_IR_SHARDY_NAMES_H_
