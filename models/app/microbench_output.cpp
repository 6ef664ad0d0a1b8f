// `gpumux calibrate` on calibration/microbench's CSVs: the report, the JSON block and the
// profile entries (microbench_fit.hpp).
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
#include "models/config/input_error.hpp"
#include "sim/util/csv.hpp"
#include "sim/util/strings.hpp"

namespace gpumux {

// ---------------------------------------------------------------- output

namespace {

std::string number_text(double v, int digits) {
  std::ostringstream s;
  s.precision(digits);
  s << v;
  return s.str();
}

std::string value_text(const MicrobenchValue& v) {
  if (v.unit == "us") return std::to_string(std::llround(v.value * 1000.0)) + "ns";
  return number_text(v.value, 10) + v.unit;
}

std::string percent(double fraction) {
  return std::isnan(fraction) ? "n/a" : number_text(100 * fraction, 3) + " %";
}

}  // namespace

std::string with_microbench_values(const std::string& profile_text, const MicrobenchFit& fit,
                                   const std::vector<std::string>& keys, const std::string& date) {
  std::vector<const MicrobenchValue*> chosen;
  for (const MicrobenchValue& v : fit.values) {
    if (keys.empty() || std::find(keys.begin(), keys.end(), v.key) != keys.end()) {
      chosen.push_back(&v);
    }
  }
  if (chosen.empty()) return profile_text;
  std::vector<std::string> top;
  for (const MicrobenchValue* v : chosen) top.push_back(v->key);
  std::string out = without_top_keys(profile_text, top);
  out +=
      "\n# Fitted by gpumux calibrate from calibration/microbench output (docs/calibration.md)\n";
  for (const MicrobenchValue* v : chosen) {
    std::ostringstream why;
    why << "gpumux calibrate " << join(v->files, " ") << " (" << date;
    if (!fit.gpu.empty()) why << "; " << fit.gpu;
    why << "; " << v->law << ", n=" << v->samples;
    if (v->folds > 0) {
      why << "; leave one run out: " << number_text(v->fold_min, 6) << "-"
          << number_text(v->fold_max, 6) << " " << v->unit << " over " << v->folds << " folds";
    } else {
      why << "; one run: no cross-validation fold";
    }
    if ((v->key == "timeslice" || v->key == "context_switch" || v->key == "preemption_latency") &&
        !fit.waits.empty()) {
      why << "; wait (N-1)(T+S)+S median |error| " << percent(fit.wait_in_sample) << " in sample, "
          << percent(fit.wait_out_of_sample) << " leaving the run out";
    }
    why << ")";
    out += v->key + ": {value: " + value_text(*v) + ", fitted: " + yaml_quoted(why.str()) + "}\n";
  }
  return out;
}

std::string microbench_report(const MicrobenchFit& fit) {
  std::ostringstream out;
  out << "## Fitted from calibration/microbench output";
  if (!fit.gpu.empty()) out << " (" << fit.gpu << (fit.date.empty() ? "" : ", " + fit.date) << ")";
  out << "\n\n| parameter | value | samples | leave one run out | law "
         "|\n|---|---:|---:|---:|---|\n";
  for (const MicrobenchValue& v : fit.values) {
    out << "| `" << v.key << "` | " << number_text(v.value, 6) << " " << v.unit << " | "
        << v.samples << " | "
        << (v.folds > 0 ? number_text(v.fold_min, 6) + " - " + number_text(v.fold_max, 6) + " " +
                              v.unit + " (" + std::to_string(v.folds) + " folds)"
                        : std::string("one run"))
        << " | " << v.law << " |\n";
  }
  if (fit.values.empty()) out << "| (none measured) | | | | |\n";
  if (!fit.waits.empty()) {
    out << "\nA spinner's wait (its switch gap) against the round-robin law (N-1)(T+S)+S: median "
           "|error| "
        << percent(fit.wait_in_sample) << " in sample, " << percent(fit.wait_out_of_sample)
        << " with T and S refitted without the run.\n\n| run | N | measured | in sample | out of "
           "sample |\n|---|---:|---:|---:|---:|\n";
    for (const MicrobenchFit::WaitCheck& w : fit.waits) {
      out << "| " << w.run << " | " << w.spinners << " | " << number_text(w.measured_us, 6)
          << " us | " << number_text(w.in_sample_us, 6) << " us | "
          << (std::isnan(w.out_of_sample_us) ? std::string("n/a")
                                             : number_text(w.out_of_sample_us, 6) + " us")
          << " |\n";
    }
  }
  return out.str();
}

nlohmann::ordered_json microbench_json(const MicrobenchFit& fit) {
  const auto num = [](double v) {
    return std::isnan(v) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v);
  };
  nlohmann::ordered_json out;
  out["gpu"] = fit.gpu;
  out["date"] = fit.date;
  out["values"] = nlohmann::ordered_json::object();
  for (const MicrobenchValue& v : fit.values) {
    out["values"][v.key] = {{"value", v.value}, {"unit", v.unit},         {"samples", v.samples},
                            {"folds", v.folds}, {"fold_min", v.fold_min}, {"fold_max", v.fold_max},
                            {"files", v.files}};
  }
  out["timeslice_us"] = num(fit.timeslice_us);
  out["switch_us"] = num(fit.switch_us);
  out["switch_in_us"] = num(fit.switch_in_us);
  out["switch_out_us"] = num(fit.switch_out_us);
  out["wait"] = {{"in_sample", num(fit.wait_in_sample)},
                 {"out_of_sample", num(fit.wait_out_of_sample)},
                 {"runs", nlohmann::ordered_json::array()}};
  for (const auto& w : fit.waits) {
    out["wait"]["runs"].push_back({{"run", w.run},
                                   {"spinners", w.spinners},
                                   {"measured_us", w.measured_us},
                                   {"in_sample_us", w.in_sample_us},
                                   {"out_of_sample_us", num(w.out_of_sample_us)}});
  }
  return out;
}

}  // namespace gpumux
