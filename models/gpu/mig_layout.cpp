#include "models/gpu/mig_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <numeric>

#include "sim/util/strings.hpp"

namespace gpumux {
namespace {

// "a, b or c"
std::string join_or(const std::vector<std::string>& items) {
  if (items.size() <= 1) return join(items, "");
  std::vector<std::string> head(items.begin(), items.end() - 1);
  return join(head, ", ") + " or " + items.back();
}

std::vector<std::string> profile_names(const DeviceProfile& gpu) {
  std::vector<std::string> names;
  for (const MigProfileSpec& spec : gpu.mig_profiles) names.push_back(spec.name);
  return names;
}

/// "4-7" for slices [start, start + size), "4" for a single slice.
std::string slice_range(int start, int size) {
  return size == 1 ? std::to_string(start) : fmt::format("{}-{}", start, start + size - 1);
}

std::uint32_t slice_mask(int start, int size) { return ((std::uint32_t{1} << size) - 1) << start; }

// Exhaustive depth-first search over start slices. Instances are tried in `order` (largest
// memory footprint first, then layout order), each at its allowed starts from the lowest up; the
// first complete assignment wins, so identical profiles get increasing starts in layout order.
class PlacementSearch {
 public:
  PlacementSearch(const std::vector<const MigProfileSpec*>& specs, std::vector<int> order)
      : specs_(specs), order_(std::move(order)), starts_(specs.size(), -1) {}

  bool run() { return place(0, 0); }
  const std::vector<int>& starts() const { return starts_; }
  /// The deepest partial assignment reached, and the instance that could not be placed there.
  const std::vector<int>& best_starts() const { return best_starts_; }
  int blocked_instance() const { return order_[best_depth_]; }

 private:
  bool place(std::size_t depth, std::uint32_t used) {
    if (depth == order_.size()) return true;
    if (best_starts_.empty() || depth > best_depth_) {
      best_depth_ = depth;
      best_starts_ = starts_;
    }
    const int index = order_[depth];
    const MigProfileSpec& spec = *specs_[index];
    for (const int start : spec.placements) {
      const std::uint32_t mask = slice_mask(start, spec.memory_slices);
      if (used & mask) continue;
      starts_[index] = start;
      if (place(depth + 1, used | mask)) return true;
      starts_[index] = -1;
    }
    return false;
  }

  const std::vector<const MigProfileSpec*>& specs_;
  std::vector<int> order_;
  std::vector<int> starts_;
  std::vector<int> best_starts_;
  std::size_t best_depth_ = 0;
};

// One line naming the instance that cannot be placed, its allowed ranges, and who holds them.
std::string blocked_reason(const std::vector<const MigProfileSpec*>& specs,
                           const std::vector<int>& starts, int blocked) {
  const MigProfileSpec& spec = *specs[blocked];
  std::vector<std::string> ranges;
  std::uint32_t wanted = 0;
  for (const int start : spec.placements) {
    ranges.push_back(slice_range(start, spec.memory_slices));
    wanted |= slice_mask(start, spec.memory_slices);
  }
  std::string reason = fmt::format("{} (#{}) needs memory slice{} {}", spec.name, blocked,
                                   spec.memory_slices == 1 ? "" : "s", join_or(ranges));

  std::vector<int> occupants;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (starts[i] >= 0 && (slice_mask(starts[i], specs[i]->memory_slices) & wanted)) {
      occupants.push_back(static_cast<int>(i));
    }
  }
  std::sort(occupants.begin(), occupants.end(),
            [&](int a, int b) { return starts[a] < starts[b]; });
  for (std::size_t k = 0; k < occupants.size(); ++k) {
    const int i = occupants[k];
    const std::string range = slice_range(starts[i], specs[i]->memory_slices);
    if (k == 0) {
      reason += fmt::format("; {} {} used by", range, specs[i]->memory_slices == 1 ? "is" : "are");
    } else {
      reason += fmt::format(", {} by", range);
    }
    reason += fmt::format(" {} (#{})", specs[i]->name, i);
  }
  return reason;
}

std::string format_gib(std::int64_t bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace

MigFitResult fit_mig_layout(const DeviceProfile& gpu, const std::vector<std::string>& profiles) {
  MigFitResult result;
  if (gpu.mig_profiles.empty()) {
    result.reason = gpu.name + " does not support MIG";
    return result;
  }
  if (profiles.empty()) {
    result.reason = "empty MIG layout: give at least one profile";
    return result;
  }

  std::vector<const MigProfileSpec*> specs;
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    const MigProfileSpec* spec = gpu.find_mig_profile(profiles[i]);
    if (!spec) {
      result.reason = fmt::format("no MIG profile '{}' (#{}) on {}; known: {}", profiles[i], i,
                                  gpu.name, join(profile_names(gpu), ", "));
      return result;
    }
    specs.push_back(spec);
  }

  // Driver limits first: per-profile instance counts, then the compute-slice budget.
  for (const MigProfileSpec& spec : gpu.mig_profiles) {
    const auto count = std::count(specs.begin(), specs.end(), &spec);
    if (count > spec.max_count) {
      result.reason =
          fmt::format("{}: at most {} per GPU, layout has {}", spec.name, spec.max_count, count);
      return result;
    }
  }
  int compute = 0;
  int memory = 0;
  for (const MigProfileSpec* spec : specs) {
    compute += spec->compute_slices;
    memory += spec->memory_slices;
  }
  if (compute > gpu.compute_slices) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (std::find(specs.begin(), specs.begin() + i, specs[i]) != specs.begin() + i) continue;
      const auto count = std::count(specs.begin(), specs.end(), specs[i]);
      parts.push_back(
          fmt::format("{} x{} = {}", specs[i]->name, count, count * specs[i]->compute_slices));
    }
    result.reason = fmt::format("layout uses {} of {} compute slices ({})", compute,
                                gpu.compute_slices, join(parts, ", "));
    return result;
  }

  std::vector<int> order(specs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (specs[a]->memory_slices != specs[b]->memory_slices) {
      return specs[a]->memory_slices > specs[b]->memory_slices;
    }
    return specs[a]->compute_slices > specs[b]->compute_slices;
  });
  PlacementSearch search(specs, order);
  if (!search.run()) {
    result.reason = blocked_reason(specs, search.best_starts(), search.blocked_instance());
    if (memory > gpu.memory_slices) {
      result.reason +=
          fmt::format(" (the layout needs {} of {} memory slices)", memory, gpu.memory_slices);
    }
    return result;
  }
  result.fits = true;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    result.placements.push_back({static_cast<int>(i), specs[i], search.starts()[i]});
  }
  return result;
}

std::string describe_mig(const DeviceProfile& gpu) {
  std::string text = fmt::format("{} ({}): {} SMs, {}\n", gpu.name, gpu.display_name, gpu.sms,
                                 format_gib(gpu.memory));
  if (gpu.mig_profiles.empty()) return text + "MIG: not supported\n";
  text += fmt::format("MIG: {} memory slices, {} compute slices\n\n", gpu.memory_slices,
                      gpu.compute_slices);

  text +=
      fmt::format("{:<14} {:>4} {:>11}  {:>10}  {:>14}  {:>3}  {}\n", "profile", "SMs", "memory",
                  "mem slices", "compute slices", "max", "placements (memory slices)");
  for (const MigProfileSpec& spec : gpu.mig_profiles) {
    std::vector<std::string> ranges;
    for (const int start : spec.placements)
      ranges.push_back(slice_range(start, spec.memory_slices));
    text += fmt::format("{:<14} {:>4} {:>11}  {:>10}  {:>14}  {:>3}  {}\n", spec.name, spec.sms,
                        format_gib(spec.memory), spec.memory_slices, spec.compute_slices,
                        spec.max_count, join(ranges, ", "));
  }

  // SMs per compute slice differ between profiles on Hopper (3g = 60, 4g = 64 of 132).
  bool proportional = true;
  const MigProfileSpec& first = gpu.mig_profiles.front();
  for (const MigProfileSpec& spec : gpu.mig_profiles) {
    if (spec.sms * first.compute_slices != first.sms * spec.compute_slices) proportional = false;
  }
  if (!proportional) {
    std::vector<std::string> counts;
    for (const MigProfileSpec& spec : gpu.mig_profiles) {
      if (spec.name.find('+') == std::string::npos) {
        counts.push_back(fmt::format("{} {}", spec.name, spec.sms));
      }
    }
    text += fmt::format(
        "\nnote: SMs are not proportional to compute slices on this GPU (SMs come in uneven\n"
        "      GPC/TPC groups): use the counts above, not 1/{} of {} SMs.\n      {}\n",
        gpu.compute_slices, gpu.sms, join(counts, ", "));
  }

  if (!gpu.mig_layouts.empty()) {
    text += "\nnamed layouts (#instance profile@memory slices):\n";
    std::size_t width = 0;
    for (const auto& [name, layout] : gpu.mig_layouts) width = std::max(width, name.size());
    for (const auto& [name, layout] : gpu.mig_layouts) {
      const MigFitResult fit = fit_mig_layout(gpu, layout);
      std::vector<std::string> items;
      for (const MigInstancePlacement& p : fit.placements) {
        items.push_back(fmt::format("#{} {}@{}", p.index, p.profile->name,
                                    slice_range(p.start, p.profile->memory_slices)));
      }
      text += fmt::format("  {:<{}}  {}\n", name, width,
                          fit.fits ? join(items, "  ") : "does not fit: " + fit.reason);
    }
  }
  return text;
}

}  // namespace gpumux
