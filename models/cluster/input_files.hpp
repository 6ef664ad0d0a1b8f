#pragma once
// Internal to the cluster input readers: reading a whole text file within its size limit
// (sim/util/input_file.hpp: YAML configs 16 MiB, trace CSVs 2 GiB), with the failure as an
// InputError naming the file (and the key that referenced it, when there is one).
#include <cstdint>
#include <string>

#include "models/config/input_error.hpp"

namespace gpumux::cluster::detail {

/// mig-parted and device-plugin configs: hand-written, NVIDIA's full mig-parted default config
/// is 11 KiB (tests/data/cluster/mig-parted-config-default.yaml), so 256 KiB is 20x that. The
/// limit bounds memory: yaml-cpp's node tree plus the reader's location records take about 1 KB
/// per YAML value (measured: a 3 MB flow list of 1.5 M one-letter items peaked at 1.5 GB), so a
/// config at the limit peaks below ~150 MB where the general 16 MiB limit allowed ~8 GB.
inline constexpr std::int64_t kMaxGpuConfigBytes = std::int64_t{256} << 10;

/// The bytes of `path`, at most `limit`. Throws InputError at `referenced_from` (or at the file
/// itself when that has no file) for a missing or unreadable path, a directory, device or
/// socket, or a file over the limit; `what` names the kind of file ("device-plugin config").
std::string read_text_file(const std::string& path, const std::string& what,
                           const SourceLocation& referenced_from = {},
                           std::int64_t limit = std::int64_t{16} << 20);

}  // namespace gpumux::cluster::detail
