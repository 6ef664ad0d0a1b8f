// `gpumux calibrate` on calibration/microbench's CSVs: the laws and the fit (microbench_fit.hpp;
// reading and file kinds: microbench_read.cpp; the report, JSON and profile entries:
// microbench_output.cpp).
#include "models/app/microbench_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "models/app/calibrate.hpp"
#include "models/app/microbench_read.hpp"
#include "models/config/input_error.hpp"
#include "sim/util/csv.hpp"
#include "sim/util/strings.hpp"

namespace gpumux {
using namespace microbench_detail;

namespace {

// ---------------------------------------------------------------- statistics

std::vector<double> in_us(const std::vector<std::int64_t>& ns) {
  std::vector<double> out;
  out.reserve(ns.size());
  for (const std::int64_t v : ns) out.push_back(static_cast<double>(v) / 1000.0);
  return out;
}

double median_us(const std::vector<std::int64_t>& ns) { return percentile_linear(in_us(ns), 50); }

double median_abs(std::vector<double> v) {
  if (v.empty()) return kNaN;
  for (double& x : v) x = std::abs(x);
  return percentile_linear(v, 50);
}

// ---------------------------------------------------------------- time-slicing

struct Spinner {
  std::int64_t block = 0, start = 0, end = 0;
  std::vector<std::int64_t> gap_start, gap_end;  // sorted by start (stable)
};

// fit.py spinners(): per process its lowest logged block among the "spin" rows, with its gaps.
std::map<std::int64_t, Spinner> spinners(const std::vector<SpinnerBlock>& meta,
                                         const std::vector<SpinnerGap>& gaps) {
  std::map<std::int64_t, Spinner> procs;
  for (const SpinnerBlock& b : meta) {
    if (b.role != "spin") continue;
    const auto it = procs.find(b.process_id);
    if (it != procs.end() && it->second.block <= b.block) continue;
    procs[b.process_id] = Spinner{b.block, b.kernel_start_ns, b.kernel_end_ns, {}, {}};
  }
  for (auto& [p, d] : procs) {
    std::vector<const SpinnerGap*> mine;
    for (const SpinnerGap& g : gaps) {
      if (g.process_id == p && g.block == d.block) mine.push_back(&g);
    }
    std::stable_sort(mine.begin(), mine.end(), [](const SpinnerGap* a, const SpinnerGap* b) {
      return a->start_ns < b->start_ns;
    });
    for (const SpinnerGap* g : mine) {
      d.gap_start.push_back(g->start_ns);
      d.gap_end.push_back(g->end_ns);
    }
  }
  return procs;
}

}  // namespace

double percentile_linear(std::vector<double> x, double q) {
  if (x.empty()) return kNaN;
  std::sort(x.begin(), x.end());
  const double index = q / 100.0 * static_cast<double>(x.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(index));
  const double t = index - static_cast<double>(lo);
  if (lo + 1 >= x.size()) return x.back();
  const double a = x[lo], b = x[lo + 1], diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;  // numpy's _lerp
}

TimesliceSamples analyze_timeslice_run(const std::vector<SpinnerBlock>& meta,
                                       const std::vector<SpinnerGap>& gaps) {
  TimesliceSamples out;
  const std::map<std::int64_t, Spinner> procs = spinners(meta, gaps);
  out.spinners = static_cast<int>(procs.size());
  if (procs.empty()) return out;
  std::int64_t w0 = std::numeric_limits<std::int64_t>::min();
  std::int64_t w1 = std::numeric_limits<std::int64_t>::max();
  for (const auto& [p, d] : procs) {
    w0 = std::max(w0, d.start);
    w1 = std::min(w1, d.end);
  }
  // Each spinner's runs: kernel start and gap ends -> gap starts and kernel end.
  struct Run {
    std::int64_t start, end;
  };
  std::map<std::int64_t, std::vector<Run>> runs;
  for (const auto& [p, d] : procs) {
    std::vector<Run>& r = runs[p];
    r.push_back({d.start, d.gap_start.empty() ? d.end : d.gap_start.front()});
    for (std::size_t i = 0; i < d.gap_end.size(); ++i) {
      r.push_back({d.gap_end[i], i + 1 < d.gap_start.size() ? d.gap_start[i + 1] : d.end});
    }
  }
  struct Slice {
    std::int64_t start, end, process;
    bool operator<(const Slice& o) const {
      return std::tie(start, end, process) < std::tie(o.start, o.end, o.process);
    }
  };
  std::vector<Slice> merged;
  for (const auto& [p, d] : procs) {
    // The other spinners' runs, sorted by start, to find those overlapping a gap.
    std::vector<Run> others;
    for (const auto& [q, r] : runs) {
      if (q != p) others.insert(others.end(), r.begin(), r.end());
    }
    std::sort(others.begin(), others.end(),
              [](const Run& a, const Run& b) { return a.start < b.start; });
    std::int64_t longest = 0;
    for (const Run& r : others) longest = std::max(longest, r.end - r.start);
    std::vector<bool> is_switch(d.gap_start.size(), false);
    for (std::size_t i = 0; i < d.gap_start.size(); ++i) {
      const std::int64_t gs = d.gap_start[i], ge = d.gap_end[i];
      // A run overlapping [gs, ge] starts before ge and after gs - longest.
      auto it = std::lower_bound(others.begin(), others.end(), gs - longest,
                                 [](const Run& r, std::int64_t t) { return r.start < t; });
      for (; it != others.end() && it->start < ge; ++it) {
        if (std::min(ge, it->end) - std::max(gs, it->start) > 0) {
          is_switch[i] = true;
          break;
        }
      }
      if (is_switch[i] && gs >= w0 && ge <= w1) out.waits.push_back(ge - gs);
    }
    // Slices: runs joined across stalls.
    std::vector<std::int64_t> ss{d.start}, se;
    for (std::size_t i = 0; i < d.gap_start.size(); ++i) {
      if (!is_switch[i]) continue;
      se.push_back(d.gap_start[i]);
      ss.push_back(d.gap_end[i]);
    }
    se.push_back(d.end);
    for (std::size_t i = 0; i < ss.size(); ++i) {
      merged.push_back({ss[i], se[i], p});
      const bool inner = i > 0 && i + 1 < ss.size();
      if (inner && ss[i] >= w0 && se[i] <= w1) out.slices.push_back(se[i] - ss[i]);
    }
  }
  std::sort(merged.begin(), merged.end());
  for (std::size_t i = 0; i + 1 < merged.size(); ++i) {
    const Slice& a = merged[i];
    const Slice& b = merged[i + 1];
    if (a.process == b.process || a.end < w0 || b.start > w1) continue;
    if (b.start >= a.end) out.switches.push_back(b.start - a.end);
  }
  return out;
}

ShortKernelSamples analyze_short_kernel_run(const std::vector<SpinnerBlock>& meta,
                                            const std::vector<SpinnerGap>& gaps,
                                            const std::vector<ShortKernel>& kernels) {
  ShortKernelSamples out;
  std::set<std::int64_t> batches;
  for (const ShortKernel& k : kernels) batches.insert(k.batch);
  out.synchronous = !kernels.empty() && batches.size() == kernels.size();
  const std::map<std::int64_t, Spinner> procs = spinners(meta, gaps);
  out.spinners = static_cast<int>(procs.size());
  if (procs.empty() || kernels.empty()) return out;
  const Spinner& d = procs.begin()->second;  // the lowest process id
  if (d.gap_start.empty()) return out;
  std::map<std::size_t, std::pair<std::int64_t, std::int64_t>> hit;  // gap -> first start, last end
  for (const ShortKernel& k : kernels) {
    const auto after = std::upper_bound(d.gap_start.begin(), d.gap_start.end(), k.gpu_start_ns);
    if (after == d.gap_start.begin()) continue;
    const auto gap = static_cast<std::size_t>(after - d.gap_start.begin()) - 1;
    if (d.gap_end[gap] < k.gpu_end_ns) continue;
    const auto [it, fresh] = hit.try_emplace(gap, k.gpu_start_ns, k.gpu_end_ns);
    if (!fresh) {
      it->second.first = std::min(it->second.first, k.gpu_start_ns);
      it->second.second = std::max(it->second.second, k.gpu_end_ns);
    }
  }
  for (const auto& [gap, span] : hit) {
    out.switch_in.push_back(span.first - d.gap_start[gap]);
    out.switch_out.push_back(d.gap_end[gap] - span.second);
  }
  return out;
}

// ---------------------------------------------------------------- the fit

MicrobenchFit fit_microbench(const std::vector<std::string>& files) {
  MicrobenchFit fit;
  fit.timeslice_us = fit.switch_us = fit.switch_in_us = fit.switch_out_us = kNaN;
  fit.wait_in_sample = fit.wait_out_of_sample = kNaN;
  // Runs by stem (the file name less _meta.csv, _gaps.csv, _kernels.csv).
  struct RunFiles {
    std::string meta, gaps, kernels;
  };
  std::map<std::string, RunFiles> runs;  // sorted by stem: a deterministic order
  std::string launch_file;
  for (const std::string& file : files) {
    const CalibrationFileKind kind = calibration_file_kind(file);
    const std::string name = base_name(file);
    const auto stem = [&](const std::string& tail) {
      return ends_with(name, tail) ? name.substr(0, name.size() - tail.size())
                                   : std::filesystem::path(name).stem().string();
    };
    const auto place = [&](std::string RunFiles::*slot, const std::string& tail) {
      std::string& at = runs[stem(tail)].*slot;
      if (!at.empty()) {
        throw InputError(file + ": a second " + tail.substr(1) + " for run '" + stem(tail) +
                         "' (the first: " + at + ")");
      }
      at = file;
    };
    switch (kind) {
      case CalibrationFileKind::spinner_meta:
        place(&RunFiles::meta, "_meta.csv");
        break;
      case CalibrationFileKind::spinner_gaps:
        place(&RunFiles::gaps, "_gaps.csv");
        break;
      case CalibrationFileKind::short_kernels:
        place(&RunFiles::kernels, "_kernels.csv");
        break;
      case CalibrationFileKind::launch:
        if (!launch_file.empty()) {
          throw InputError(file + ": a second launch_probe CSV (the first: " + launch_file + ")");
        }
        launch_file = file;
        break;
      case CalibrationFileKind::run_facts: {
        const Table t = read_table(file);
        for (std::size_t i = 0; i < t.rows.size(); ++i) {
          const std::string& key = t.rows[i][0];
          const std::string& value = t.rows[i][1];
          if (key == "name") fit.gpu = value;
          if (key == "date_utc") {
            const std::string day = value.substr(0, 10);
            const bool ok = day.size() == 10 && day[4] == '-' && day[7] == '-' &&
                            std::all_of(day.begin(), day.end(), [](char c) {
                              return std::isdigit(static_cast<unsigned char>(c)) || c == '-';
                            });
            if (!ok)
              point_error(file, t.lines[i], "date_utc",
                          "expected YYYY-MM-DD..., got '" + value + "'");
            fit.date = day;
          }
        }
        break;
      }
      case CalibrationFileKind::run_steps:
        (void)read_table(file);  // readable, well-formed
        break;
      case CalibrationFileKind::other_run_output:
        break;
      case CalibrationFileKind::catalog_points:
        throw InputError(file + ": catalog points, not microbenchmark output");
    }
  }
  // Time-slicing and short-kernel runs.
  std::vector<std::int64_t> slices, switches;
  std::vector<std::string> slice_files, switch_out_files;
  struct RunResult {
    std::string stem;
    TimesliceSamples samples;
  };
  std::vector<RunResult> ts_runs;
  const ShortKernelSamples* chosen = nullptr;
  std::vector<std::pair<std::string, ShortKernelSamples>> sk_runs;
  for (const auto& [stem, rf] : runs) {
    if (rf.meta.empty() || rf.gaps.empty()) {
      const std::string& given =
          rf.meta.empty() ? (rf.gaps.empty() ? rf.kernels : rf.gaps) : rf.meta;
      throw InputError(given + ": run '" + stem + "' needs both " + stem + "_meta.csv and " + stem +
                       "_gaps.csv among the data files (timeslice_probe writes them "
                       "together)");
    }
    const std::vector<SpinnerBlock> meta = read_meta(rf.meta);
    const std::vector<SpinnerGap> gaps = read_gaps(rf.gaps);
    if (!rf.kernels.empty()) {
      sk_runs.emplace_back(stem, analyze_short_kernel_run(meta, gaps, read_kernels(rf.kernels)));
      continue;
    }
    ts_runs.push_back({stem, analyze_timeslice_run(meta, gaps)});
  }
  // The short-kernel run that informs the split: synchronous, beside a spinner (run_all.sh's
  // sk_sync; fit.py takes that one by name, so it goes first).
  std::stable_sort(sk_runs.begin(), sk_runs.end(), [](const auto& a, const auto& b) {
    return (a.first == "sk_sync") > (b.first == "sk_sync");
  });
  std::string chosen_stem;
  for (const auto& [stem, s] : sk_runs) {
    if (s.synchronous && s.spinners > 0 && !s.switch_out.empty()) {
      chosen = &s;
      chosen_stem = stem;
      break;
    }
  }
  std::vector<const RunResult*> sliced;
  for (const RunResult& r : ts_runs) {
    if (r.samples.spinners < 2) continue;
    sliced.push_back(&r);
    slices.insert(slices.end(), r.samples.slices.begin(), r.samples.slices.end());
    switches.insert(switches.end(), r.samples.switches.begin(), r.samples.switches.end());
    slice_files.push_back(runs.at(r.stem).meta);
    slice_files.push_back(runs.at(r.stem).gaps);
  }
  if (!slices.empty()) fit.timeslice_us = median_us(slices);
  if (!switches.empty()) fit.switch_us = median_us(switches);
  if (chosen != nullptr) {
    fit.switch_in_us = median_us(chosen->switch_in);
    fit.switch_out_us = median_us(chosen->switch_out);
    switch_out_files = {runs.at(chosen_stem).meta, runs.at(chosen_stem).gaps,
                        runs.at(chosen_stem).kernels};
  }
  // Leave one time-slicing run out: T and S without it; the wait law on it.
  std::vector<double> fold_t, fold_s, err_in, err_out;
  for (const RunResult* left : sliced) {
    std::vector<std::int64_t> t, s;
    for (const RunResult* r : sliced) {
      if (r == left) continue;
      t.insert(t.end(), r->samples.slices.begin(), r->samples.slices.end());
      s.insert(s.end(), r->samples.switches.begin(), r->samples.switches.end());
    }
    const double ft = t.empty() ? kNaN : median_us(t);
    const double fs = s.empty() ? kNaN : median_us(s);
    if (!t.empty()) fold_t.push_back(ft);
    if (!s.empty()) fold_s.push_back(fs);
    if (left->samples.waits.empty() || std::isnan(fit.timeslice_us) || std::isnan(fit.switch_us))
      continue;
    const double n1 = left->samples.spinners - 1;
    MicrobenchFit::WaitCheck w;
    w.run = left->stem;
    w.spinners = left->samples.spinners;
    w.measured_us = median_us(left->samples.waits);
    w.in_sample_us = n1 * (fit.timeslice_us + fit.switch_us) + fit.switch_us;
    w.out_of_sample_us = std::isnan(ft) || std::isnan(fs) ? kNaN : n1 * (ft + fs) + fs;
    err_in.push_back(w.in_sample_us / w.measured_us - 1);
    if (!std::isnan(w.out_of_sample_us)) err_out.push_back(w.out_of_sample_us / w.measured_us - 1);
    fit.waits.push_back(w);
  }
  fit.wait_in_sample = median_abs(err_in);
  fit.wait_out_of_sample = median_abs(err_out);
  const auto add = [&](const std::string& key, double value, const std::string& unit,
                       const std::string& law, std::vector<std::string> from, int samples,
                       const std::vector<double>& folds) {
    MicrobenchValue v;
    v.key = key;
    v.value = value;
    v.unit = unit;
    v.law = law;
    v.files = std::move(from);
    v.samples = samples;
    v.folds = static_cast<int>(folds.size());
    v.fold_min = v.fold_max = value;
    for (const double f : folds) {
      v.fold_min = std::min(v.fold_min, f);
      v.fold_max = std::max(v.fold_max, f);
    }
    fit.values.push_back(std::move(v));
  };
  std::string spans;
  {
    std::set<int> ns;
    for (const RunResult* r : sliced) ns.insert(r->samples.spinners);
    if (!ns.empty()) {
      spans = std::to_string(*ns.begin());
      if (ns.size() > 1) spans += "-" + std::to_string(*ns.rbegin());
    }
  }
  if (!std::isnan(fit.timeslice_us)) {
    add("timeslice", fit.timeslice_us, "us",
        "median slice between context switches of " + spans + " spinning processes", slice_files,
        static_cast<int>(slices.size()), fold_t);
  }
  if (!std::isnan(fit.switch_us)) {
    if (!std::isnan(fit.switch_out_us)) {
      std::vector<std::string> both = switch_out_files;
      both.insert(both.end(), slice_files.begin(), slice_files.end());
      add("context_switch", fit.switch_out_us, "us",
          "median idle from a short kernel's end to the resume of the spinner beside it",
          switch_out_files, static_cast<int>(chosen->switch_out.size()), {});
      std::vector<double> fold_p;
      for (const double s : fold_s) fold_p.push_back(std::max(s - fit.switch_out_us, 0.0));
      add("preemption_latency", std::max(fit.switch_us - fit.switch_out_us, 0.0), "us",
          "S - context_switch, S = median idle between two spinning contexts", both,
          static_cast<int>(switches.size()), fold_p);
    } else {
      add("context_switch", fit.switch_us, "us",
          "median idle between two spinning contexts, save + restore", slice_files,
          static_cast<int>(switches.size()), fold_s);
    }
  }
  if (!launch_file.empty()) {
    const auto launch = read_launch(launch_file);
    const auto take = [&](const char* metric, const char* key, const char* unit, const char* law) {
      const auto it = launch.find(metric);
      if (it != launch.end()) add(key, it->second.first, unit, law, {launch_file}, 1, {});
    };
    take("launch_stream_us", "launch_overhead", "us",
         "empty kernels back to back on one stream, median of the repetitions (launch_probe)");
    take("launch_graph_us", "graph_launch_overhead", "us",
         "empty kernels of a CUDA graph, median of the repetitions (launch_probe)");
    take("bw_read_GBps", "hbm_bandwidth_measured", "GB/s",
         "read kernel over a large buffer, best of the repetitions (launch_probe)");
  }
  // microbench_keys() order.
  std::vector<MicrobenchValue> ordered;
  for (const std::string& key : microbench_keys()) {
    if (const MicrobenchValue* v = fit.find(key)) ordered.push_back(*v);
  }
  fit.values = std::move(ordered);
  return fit;
}

}  // namespace gpumux
