#include "models/cluster/openb_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>

#include "models/cluster/input_files.hpp"
#include "models/scenario/work_estimate.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/checked.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/utf8.hpp"

namespace gpumux::cluster {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
// The largest value a column may hold: far beyond the trace (cpu_milli 128000, memory_mib
// 786432, times ~1.3e7 s), small enough that MiB -> bytes and s -> ns cannot overflow int64.
constexpr std::int64_t kMaxCell = 1'000'000'000;

// One data row split into its cells (views into the text) with their 1-based columns.
struct Row {
  std::vector<std::string_view> cells;
  std::vector<int> columns;
  int line = 0;
};

class CsvTable {
 public:
  CsvTable(const std::string& text, std::string source) : source_(std::move(source)) {
    // Node names and models go into the results (JSON, HDF5), which must be UTF-8.
    if (const auto bad = find_invalid_utf8(text))
      fail_at(bad->line, bad->column, "", bad->message());
    std::size_t pos = 0;
    int line = 0;
    while (pos < text.size()) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      std::string_view content(text.data() + pos, end - pos);
      if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
      ++line;
      pos = end + 1;
      if (content.empty()) continue;
      Row row;
      row.line = line;
      std::size_t start = 0;
      while (true) {
        const std::size_t comma = content.find(',', start);
        const std::size_t stop = comma == std::string_view::npos ? content.size() : comma;
        row.cells.push_back(content.substr(start, stop - start));
        row.columns.push_back(static_cast<int>(start) + 1);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      if (content.find('"') != std::string_view::npos) {
        fail_at(line, 1, "", "quoted fields are not part of the openb format");
      }
      if (header_.empty()) {
        for (std::string_view cell : row.cells) header_.emplace_back(cell);
      } else {
        rows_.push_back(std::move(row));
      }
    }
    if (header_.empty()) fail_at(0, 0, "", "empty file (expected a header line)");
  }

  // The index of column `name`, or nullopt; `required` fails when it is missing.
  std::optional<std::size_t> column(const std::string& name, bool required) const {
    const auto it = std::find(header_.begin(), header_.end(), name);
    if (it != header_.end()) return static_cast<std::size_t>(it - header_.begin());
    if (required) {
      fail_at(1, 1, name, fmt::format("missing column '{}' (header: {})", name, join(header_)));
    }
    return std::nullopt;
  }

  const std::vector<Row>& rows() const { return rows_; }
  std::size_t width() const { return header_.size(); }
  const std::string& name(std::size_t index) const { return header_[index]; }

  [[noreturn]] void fail_at(int line, int column, const std::string& key,
                            const std::string& message) const {
    throw InputError(SourceLocation{source_, line, column, key}, message);
  }

  void check_width(const Row& row) const {
    if (row.cells.size() != header_.size()) {
      fail_at(row.line, 1, "",
              fmt::format("{} fields, the header has {}", row.cells.size(), header_.size()));
    }
  }

  std::string_view cell(const Row& row, std::size_t index) const { return row.cells[index]; }

  std::int64_t integer(const Row& row, std::size_t index, std::int64_t min) const {
    const std::string_view text = row.cells[index];
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
      fail_at(row.line, row.columns[index], header_[index],
              fmt::format("expected an integer, got '{}'", text));
    }
    if (value < min || value > kMaxCell) {
      fail_at(row.line, row.columns[index], header_[index],
              fmt::format("must be from {} to {}, got {}", min, kMaxCell, value));
    }
    return value;
  }

  std::optional<std::int64_t> optional_integer(const Row& row, std::size_t index,
                                               std::int64_t min) const {
    if (row.cells[index].empty()) return std::nullopt;
    return integer(row, index, min);
  }

  [[noreturn]] void fail(const Row& row, std::size_t index, const std::string& message) const {
    fail_at(row.line, row.columns[index], header_[index], message);
  }

 private:
  std::string source_;
  std::vector<std::string> header_;
  std::vector<Row> rows_;
};

}  // namespace

std::vector<PodSpec> sorted_by_arrival(std::vector<PodSpec> pods) {
  if (std::is_sorted(pods.begin(), pods.end(),
                     [](const PodSpec& a, const PodSpec& b) { return a.arrival < b.arrival; })) {
    return pods;
  }
  // Sort indices, then move each pod once: a PodSpec is large (its optional tenant), and
  // std::stable_sort would move each O(log n) times.
  std::vector<std::size_t> order(pods.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return pods[a].arrival < pods[b].arrival; });
  std::vector<PodSpec> sorted;
  sorted.reserve(pods.size());
  for (const std::size_t i : order) sorted.push_back(std::move(pods[i]));
  return sorted;
}

std::vector<NodePoolSpec> parse_openb_nodes(const std::string& csv_text,
                                            const std::string& source_name) {
  const CsvTable table(csv_text, source_name);
  const std::size_t sn = *table.column("sn", true);
  const std::size_t cpu = *table.column("cpu_milli", true);
  const std::size_t memory = *table.column("memory_mib", true);
  const std::size_t gpu = *table.column("gpu", true);
  const std::size_t model = *table.column("model", true);
  std::vector<NodePoolSpec> pools;
  std::map<std::tuple<std::string, int, std::int64_t, std::int64_t>, std::size_t> index;
  std::map<std::string, int> seen;
  for (const Row& row : table.rows()) {
    table.check_width(row);
    const std::string name(table.cell(row, sn));
    if (name.empty()) table.fail(row, sn, "empty node name");
    if (!seen.emplace(name, row.line).second) {
      table.fail(row, sn, fmt::format("node '{}' listed twice (also line {})", name, seen[name]));
    }
    const std::int64_t cpu_milli = table.integer(row, cpu, 0);
    const std::int64_t memory_mib = table.integer(row, memory, 0);
    const int gpus = static_cast<int>(table.integer(row, gpu, 0));
    if (gpus > 64) table.fail(row, gpu, fmt::format("at most 64 GPUs per node, got {}", gpus));
    std::string gpu_model(table.cell(row, model));
    if (gpus > 0 && gpu_model.empty()) table.fail(row, model, "a GPU node needs a model");
    if (gpus == 0) gpu_model.clear();
    const auto key = std::make_tuple(gpu_model, gpus, cpu_milli, memory_mib);
    auto it = index.find(key);
    if (it == index.end()) {
      NodePoolSpec pool;
      const int same_model =
          static_cast<int>(std::count_if(pools.begin(), pools.end(), [&](const NodePoolSpec& p) {
            return p.gpu_model == gpu_model;
          }));
      pool.name =
          fmt::format("openb-{}-{}x-{}", gpu_model.empty() ? "cpu" : gpu_model, gpus, same_model);
      pool.count = 0;
      pool.gpu_model = gpu_model;
      pool.gpus_per_node = gpus;
      pool.cpu_milli = cpu_milli;
      pool.memory_bytes = memory_mib * kMiB;
      if (gpus > 0) {
        pool.sharing.sharing = SharingKind::fractional;
        pool.sharing.source = "openb (Alibaba GPU sharing)";
        pool.labels["model"] = gpu_model;
      }
      pool.where = SourceLocation{source_name, row.line, 1, ""};
      pool.sharing.where = pool.where;
      it = index.emplace(key, pools.size()).first;
      pools.push_back(std::move(pool));
    }
    NodePoolSpec& pool = pools[it->second];
    ++pool.count;
    pool.node_names.push_back(name);
  }
  if (pools.empty()) table.fail_at(1, 1, "", "no nodes (the file has only a header)");
  return pools;
}

std::vector<PodSpec> parse_openb_pods(const std::string& csv_text, const std::string& source_name,
                                      std::size_t max_pods, const SourceLocation& budget_where) {
  // The work budget, before the rows are split (the split rows alone take ~100 B per pod).
  const auto lines = static_cast<std::size_t>(std::count(csv_text.begin(), csv_text.end(), '\n'));
  if (max_pods != SIZE_MAX && lines > max_pods + 1) {
    std::size_t rows = 0;  // non-empty lines after the header
    for (std::size_t pos = 0; pos < csv_text.size();) {
      std::size_t end = csv_text.find('\n', pos);
      if (end == std::string::npos) end = csv_text.size();
      if (end > pos && !(end == pos + 1 && csv_text[pos] == '\r')) ++rows;
      pos = end + 1;
    }
    if (rows > max_pods + 1) {
      const SourceLocation where =
          budget_where.file.empty() ? SourceLocation{source_name, 0, 0, ""} : budget_where;
      throw InputError(where, fmt::format("{}: {} pods, over the work budget of {} cluster pods "
                                          "(about {} B each); use a shorter pod list or set "
                                          "allow_large: true to run it anyway",
                                          source_name, rows - 1, max_pods,
                                          static_cast<long long>(kClusterBytesPerPod)));
    }
  }
  const CsvTable table(csv_text, source_name);
  const std::size_t name = *table.column("name", true);
  const std::size_t cpu = *table.column("cpu_milli", true);
  const std::size_t memory = *table.column("memory_mib", true);
  const std::size_t num_gpu = *table.column("num_gpu", true);
  const std::size_t gpu_milli = *table.column("gpu_milli", true);
  // multigpu50 has only the five columns above: no GPU types, QoS or times.
  const auto gpu_spec = table.column("gpu_spec", false);
  const auto creation = table.column("creation_time", false);
  const auto deletion = table.column("deletion_time", false);
  const auto scheduled = table.column("scheduled_time", false);
  if (deletion && !creation)
    table.fail_at(1, 1, "creation_time", "deletion_time needs creation_time");
  std::vector<PodSpec> pods;
  pods.reserve(table.rows().size());
  std::map<std::string_view, int> seen;
  for (const Row& row : table.rows()) {
    table.check_width(row);
    PodSpec pod;
    pod.name = std::string(table.cell(row, name));
    if (pod.name.empty()) table.fail(row, name, "empty pod name");
    if (!seen.emplace(table.cell(row, name), row.line).second) {
      table.fail(row, name,
                 fmt::format("pod '{}' listed twice (also line {})", pod.name,
                             seen[table.cell(row, name)]));
    }
    pod.where = SourceLocation{source_name, row.line, 1, ""};
    pod.cpu_milli = table.integer(row, cpu, 0);
    pod.memory_bytes = table.integer(row, memory, 0) * kMiB;
    const std::int64_t gpus = table.integer(row, num_gpu, 0);
    const std::int64_t milli = table.integer(row, gpu_milli, 0);
    if (gpus > 64) table.fail(row, num_gpu, fmt::format("at most 64 GPUs, got {}", gpus));
    if (gpus == 0) {
      if (milli != 0) {
        table.fail(row, gpu_milli,
                   fmt::format("a pod with num_gpu 0 asks for no GPU share, got "
                               "gpu_milli {}",
                               milli));
      }
    } else if (milli == kMilliPerGpu) {
      pod.gpu_resources["nvidia.com/gpu"] = gpus;
    } else if (gpus == 1 && milli > 0 && milli < kMilliPerGpu) {
      pod.gpu_milli = static_cast<int>(milli);
      pod.gpu_resources["nvidia.com/gpu"] = 1;
    } else {
      table.fail(row, gpu_milli,
                 fmt::format("num_gpu {} with gpu_milli {}: a share (1-999) is for one GPU, "
                             "whole GPUs have gpu_milli 1000",
                             gpus, milli));
    }
    pod.pod_class = fmt::format("{}x{}m", gpus, milli);
    if (gpu_spec) {
      const std::string_view spec = table.cell(row, *gpu_spec);
      std::size_t start = 0;
      while (start <= spec.size() && !spec.empty()) {
        const std::size_t bar = spec.find('|', start);
        const std::size_t stop = bar == std::string_view::npos ? spec.size() : bar;
        if (stop > start) pod.gpu_models.emplace_back(spec.substr(start, stop - start));
        if (bar == std::string_view::npos) break;
        start = bar + 1;
      }
    }
    if (creation) {
      const std::int64_t created = table.integer(row, *creation, 0);
      pod.arrival = created * kSecond;
      if (deletion) {
        if (const auto deleted = table.optional_integer(row, *deletion, 0)) {
          if (*deleted < created) {
            table.fail(
                row, *deletion,
                fmt::format("deletion_time {} is before creation_time {}", *deleted, created));
          }
          pod.workload.duration = (*deleted - created) * kSecond;
        }
      }
      if (scheduled) {
        if (const auto at = table.optional_integer(row, *scheduled, 0); at && *at < created) {
          table.fail(row, *scheduled,
                     fmt::format("scheduled_time {} is before creation_time {}", *at, created));
        }
      }
    }
    pods.push_back(std::move(pod));
  }
  if (pods.empty()) table.fail_at(1, 1, "", "no pods (the file has only a header)");
  return sorted_by_arrival(std::move(pods));
}

std::vector<NodePoolSpec> load_openb_nodes(const std::string& path,
                                           const SourceLocation& referenced_from) {
  return parse_openb_nodes(
      detail::read_text_file(path, "openb node list", referenced_from, input_file::kMaxTraceBytes),
      path);
}

std::vector<PodSpec> load_openb_pods(const std::string& path, const SourceLocation& referenced_from,
                                     std::size_t max_pods) {
  return parse_openb_pods(
      detail::read_text_file(path, "openb pod list", referenced_from, input_file::kMaxTraceBytes),
      path, max_pods, referenced_from);
}

}  // namespace gpumux::cluster
