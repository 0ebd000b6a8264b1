// exla integration for XLA: the size syntax of --xla_tensor_size_threshold and
// --xla_tensor_split_size.
//
// Kept free of any dependency beyond the C++17 standard library so that
// //xla:debug_options_flags can validate flag values with it and so that it
// can be compiled and tested outside an XLA build (exla's
// xla_patches/check_syntax.sh does that).

#ifndef XLA_SERVICE_EXLA_EXLA_SIZE_H_
#define XLA_SERVICE_EXLA_EXLA_SIZE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace xla {

// The accepted forms, for error messages.
inline constexpr char kExlaSizeSyntax[] =
    "a whole number of bytes, optionally followed by a unit: 123, 100KB, "
    "100MB, 1GB (powers of 1000) or 100KiB, 100MiB, 1GiB (powers of 1024); "
    "units are case-insensitive";

// Parses a size such as "123", "100KB", "1gb" or "1GiB" into bytes: decimal
// digits immediately followed by an optional unit KB, MB, GB (x1000^k) or KiB,
// MiB, GiB (x1024^k), case-insensitive, nothing else (no sign, no fraction, no
// spaces). Returns std::nullopt when `text` does not have that form or the
// value does not fit in int64_t.
std::optional<int64_t> ParseExlaSize(std::string_view text);

}  // namespace xla

#endif  // XLA_SERVICE_EXLA_EXLA_SIZE_H_
