// ncu --csv metrics joined to kernels by name (not a trace; kernel_trace.hpp): SM and DRAM
// throughput per kernel name, averaged over launches, in the wide (--page raw) or the long
// (Metric Name / Metric Value) layout.
#include "models/scenario/kernel_trace_internal.hpp"

#include <sstream>
#include <fstream>
#include <map>

namespace gpumux {
using namespace kernel_trace_detail;

std::map<std::string, NcuMetrics> parse_ncu_metrics(std::istream& in, const std::string& path) {
  static const std::string kSm = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
  static const std::string kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
  std::string line;
  int number = 0;
  // ncu prints "==PROF==" lines before the table when its output is captured whole.
  std::vector<std::string> header;
  while (read_line(in, line, number)) {
    if (line.rfind("==", 0) == 0 || strip_whitespace(line).empty()) continue;
    header = split_csv(line, path, number);
    break;
  }
  if (header.empty()) fail(path, 0, "empty file: expected ncu --csv output");
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < header.size(); ++i) at.emplace(header[i], i);
  const auto name_it = at.find("Kernel Name");
  if (name_it == at.end())
    fail(path, number, "missing column 'Kernel Name' (not ncu --csv output?)");
  struct Sum {
    double sm = 0, dram = 0;
    int n_sm = 0, n_dram = 0;
  };
  std::map<std::string, Sum> sums;
  const auto metric_name = at.find("Metric Name");
  const auto metric_value = at.find("Metric Value");
  const bool long_layout = metric_name != at.end() && metric_value != at.end();
  const auto sm_col = at.find(kSm);
  const auto dram_col = at.find(kDram);
  if (!long_layout && (sm_col == at.end() || dram_col == at.end())) {
    fail(path, number,
         "missing column '" + (sm_col == at.end() ? kSm : kDram) + "': run ncu --csv --metrics " +
             kSm + "," + kDram);
  }
  const int header_line = number;
  while (read_line(in, line, number)) {
    if (strip_whitespace(line).empty() || line.rfind("==", 0) == 0) continue;
    const std::vector<std::string> f = split_csv(line, path, number);
    if (f.size() < header.size()) {
      fail(path, number,
           "missing fields (" + std::to_string(f.size()) + " of " + std::to_string(header.size()) +
               " columns)");
    }
    const std::string& name = f[name_it->second];
    const auto add = [&](Sum& s, bool sm, const std::string& text, const std::string& column) {
      const double v = number_field(text, column, path, number);
      (sm ? s.sm : s.dram) += v;
      ++(sm ? s.n_sm : s.n_dram);
    };
    if (long_layout) {
      const std::string& metric = f[metric_name->second];
      if (metric != kSm && metric != kDram) continue;
      for (const std::string& key : {name, ncu_key(name)}) {
        add(sums[key], metric == kSm, f[metric_value->second], "Metric Value");
      }
    } else {
      // --page raw prints a units row ("%") under the header; skip non-numeric rows.
      if (number == header_line + 1 && name.empty()) continue;
      for (const std::string& key : {name, ncu_key(name)}) {
        add(sums[key], true, f[sm_col->second], kSm);
        add(sums[key], false, f[dram_col->second], kDram);
      }
    }
  }
  std::map<std::string, NcuMetrics> out;
  for (const auto& [name, s] : sums) {
    if (s.n_sm == 0 || s.n_dram == 0) continue;
    out[name] = NcuMetrics{s.sm / s.n_sm, s.dram / s.n_dram};
  }
  if (out.empty()) {
    fail(path, 0, "no kernel has both " + kSm + " and " + kDram);
  }
  return out;
}

std::map<std::string, NcuMetrics> read_ncu_metrics(const std::string& path) {
  std::istringstream in(read_whole(path));
  return parse_ncu_metrics(in, path);
}

}  // namespace gpumux
