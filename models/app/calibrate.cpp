// `gpumux calibrate`: the fit, its cross-validation and the fitted profile (calibrate.hpp).
#include "models/app/calibrate.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "models/app/application.hpp"
#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"
#include "models/workload/catalog_model.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/units.hpp"

namespace gpumux {

// `text` without its top-level entries named in `keys` (each: its key line and the indented or
// continued lines under it).
std::string without_top_keys(const std::string& text, const std::vector<std::string>& keys) {
  std::istringstream in(text);
  std::string line, out;
  bool skipping = false;
  while (std::getline(in, line)) {
    const bool top = !line.empty() && line[0] != ' ' && line[0] != '\t' && line[0] != '#';
    if (top) {
      skipping = false;
      for (const std::string& key : keys) {
        if (line.rfind(key + ":", 0) == 0) skipping = true;
      }
    }
    if (!skipping) out += line + "\n";
  }
  return out;
}

std::string yaml_quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

namespace {

// ---------------------------------------------------------------- profiles with theta

using Theta = std::map<std::string, double>;  // key path -> ns

std::string ns_text(double ns) { return std::to_string(std::llround(std::max(0.0, ns))) + "ns"; }

// The profile keys that are mappings of a name to a time: host_per_request (by runtime) and
// harness_per_request (by benchmark harness). A parameter of theirs is "KEY.NAME".
const std::vector<std::string>& nested_keys() {
  static const std::vector<std::string> keys = {"host_per_request", "harness_per_request"};
  return keys;
}

// The mapping key of "KEY.NAME" (nested_keys), or "" for a top-level key.
std::string nested_key_of(const std::string& key) {
  for (const std::string& nested : nested_keys()) {
    if (key.rfind(nested + ".", 0) == 0) return nested;
  }
  return "";
}

// The fitted block: every key of `values` as {value, <provenance kind>: text}.
std::string fitted_block(const Theta& values, const std::map<std::string, std::string>& why,
                         const std::string& kind) {
  std::string out;
  std::map<std::string, std::map<std::string, std::string>> nested;
  for (const auto& [key, ns] : values) {
    const auto reason = why.count(key) ? why.at(key) : std::string("calibrate");
    const std::string entry =
        "{value: " + ns_text(ns) + ", " + kind + ": " + yaml_quoted(reason) + "}";
    const std::string parent = nested_key_of(key);
    if (!parent.empty()) {
      nested[parent][key.substr(parent.size() + 1)] = entry;
    } else {
      out += key + ": " + entry + "\n";
    }
  }
  for (const auto& [parent, entries] : nested) {
    out += parent + ":\n";
    for (const auto& [name, entry] : entries) out += "  " + name + ": " + entry + "\n";
  }
  return out;
}

Theta profile_values(const DeviceProfile& gpu) {
  Theta t{{"kernel_fixed_cost", static_cast<double>(gpu.kernel_fixed_cost)},
          {"block_round_cost", static_cast<double>(gpu.block_round_cost)}};
  for (const auto& [runtime, ns] : gpu.host_per_request) {
    t["host_per_request." + runtime] = static_cast<double>(ns);
  }
  for (const auto& [harness, ns] : gpu.harness_per_request) {
    t["harness_per_request." + harness] = static_cast<double>(ns);
  }
  return t;
}

// A private folder for the edited profiles, removed with its files at the end.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gpumux-calibrate-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      throw InputError("calibrate: cannot create a temporary folder under " +
                       std::filesystem::temp_directory_path().string());
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string runtime_of(const CalibrationPoint& p) {
  if (!p.runtime.empty()) return p.runtime;
  return default_runtime(p.phase == "training");
}

// ---------------------------------------------------------------- simulating a point

class PointSimulator {
 public:
  PointSimulator() = default;

  int simulations() const { return simulations_; }

  // Values a point's profile takes where it has none of its own (a harness the base profile
  // has no time for yet: 0 until fitted, so that its points simulate before the fit).
  void set_defaults(Theta defaults) { defaults_ = std::move(defaults); }

  // The point's mean latency alone (s) with `theta` written into its profile.
  double predict(const CalibrationPoint& p, const Theta& theta) {
    const std::string profile = profile_with(p.profile, theta);
    double duration_s = 0.25;
    for (int attempt = 0; attempt < 5; ++attempt, duration_s *= 8) {
      ScenarioRequest request;
      request.scenario = scenario_text(p, profile, duration_s);
      request.is_path = false;
      request.source_name = p.file + ":" + std::to_string(p.line) + " (point " + p.id + ")";
      ResolvedScenario resolved;
      try {
        resolved = resolve_request(request);
      } catch (const InputError& e) {
        // The scenario is calibrate's own text: its line and column mean nothing to the user;
        // the key (tenants.0.workload.runtime) names the column at fault.
        std::string why = e.what();
        const SourceLocation& at = e.where();
        if (at.file == request.source_name && why.rfind(at.describe() + ": ", 0) == 0) {
          why = why.substr(at.describe().size() + 2);
          if (!at.key_path.empty()) why = at.key_path + ": " + why;
        }
        point_error(p.file, p.line, p.id, "gpumux refuses this point: " + why);
      }
      RunControl control;
      control.record_requests = false;
      const RunResult result = simulate_resolved(resolved, control);
      ++simulations_;
      const TenantResult& t = result.tenants.front();
      if (t.failed > 0) {
        point_error(p.file, p.line, p.id,
                    "its requests fail alone (" + std::to_string(t.failed) +
                        " failed: out of memory?); it cannot calibrate a time");
      }
      if (t.latency.count >= 3) return t.latency.mean * 1e-9;
    }
    point_error(p.file, p.line, p.id, "fewer than 3 requests complete in 1000 s of simulation");
  }

 private:
  std::string profile_with(const std::string& base, const Theta& theta) {
    const DeviceProfile& gpu = load_device_profile(base);
    Theta values = profile_values(gpu);
    for (const auto& [key, ns] : defaults_) values.emplace(key, ns);
    for (const auto& [key, ns] : theta) values[key] = ns;
    std::string& text = base_texts_[base];
    if (text.empty()) text = without_top_keys(device_profile_text(base), catalog_fit_keys());
    const std::string document =
        text + fitted_block(values, {}, "assumption") + "\n# (calibrate: trial values)\n";
    // The file keeps the base's stem: the profile's name keys per-GPU data (kernel-families
    // memory_latency).
    const std::string folder = scratch_.path() + "/" + std::to_string(files_++);
    std::filesystem::create_directory(folder);
    const std::string path = folder + "/" + gpu.name + ".yaml";
    std::ofstream(path) << document;
    return path;
  }

  static std::string scenario_text(const CalibrationPoint& p, const std::string& profile,
                                   double duration_s) {
    std::string gpu =
        "  - {name: gpu0, model: " + yaml_quoted(profile) + ", sharing: {mode: exclusive}";
    if (!p.mig.empty()) gpu += ", mig: " + yaml_quoted(p.mig);
    gpu += "}\n";
    std::string w = "      model: " + yaml_quoted(p.model) + "\n";
    if (p.batch > 0) w += "      batch: " + std::to_string(p.batch) + "\n";
    if (p.seq_len > 0) w += "      seq_len: " + std::to_string(p.seq_len) + "\n";
    if (!p.dtype.empty()) w += "      dtype: " + yaml_quoted(p.dtype) + "\n";
    if (!p.phase.empty()) w += "      phase: " + yaml_quoted(p.phase) + "\n";
    if (!p.runtime.empty()) w += "      runtime: " + yaml_quoted(p.runtime) + "\n";
    if (!p.memory_format.empty())
      w += "      memory_format: " + yaml_quoted(p.memory_format) + "\n";
    if (!p.harness.empty()) w += "      harness: " + yaml_quoted(p.harness) + "\n";
    if (p.cuda_graph) w += "      cuda_graph: true\n";
    w += "      arrivals: {process: closed, concurrency: 1, think: 1us}\n";
    return "name: calibrate\nseed: 1\nduration: " + std::to_string(std::llround(duration_s * 1e3)) +
           "ms\nwarmup: 0s\ngpus:\n" + gpu +
           "tenants:\n  - name: w\n    device: " + (p.mig.empty() ? "gpu0" : "gpu0/0") +
           "\n    workload:\n" + w;
  }

  ScratchDir scratch_;
  Theta defaults_;
  std::map<std::string, std::string> base_texts_;
  int files_ = 0;
  int simulations_ = 0;
};

// Out of sample with one source (no fold to leave out): NaN, printed "n/a", JSON null.
constexpr double kNotAvailable = std::numeric_limits<double>::quiet_NaN();

// "12.3 %" of a relative error, or "n/a" (kNotAvailable).
std::string percent_text(double relative) {
  if (std::isnan(relative)) return "n/a";
  std::ostringstream s;
  s.precision(3);
  s << 100 * relative << " %";
  return s.str();
}

double median_abs(std::vector<double> v) {
  if (v.empty()) return 0;
  for (double& x : v) x = std::abs(x);
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

// ---------------------------------------------------------------- public

std::vector<double> nonnegative_least_squares(const std::vector<double>& a,
                                              const std::vector<double>& b, int columns) {
  const int n = static_cast<int>(b.size());
  const int p = columns;
  if (p <= 0) return {};
  if (p > 12) throw std::invalid_argument("nonnegative_least_squares: at most 12 columns");
  Eigen::MatrixXd A(n, p);
  Eigen::VectorXd B(n);
  for (int i = 0; i < n; ++i) {
    B(i) = b[static_cast<std::size_t>(i)];
    for (int j = 0; j < p; ++j) A(i, j) = a[static_cast<std::size_t>(i * p + j)];
  }
  std::vector<double> best(static_cast<std::size_t>(p), 0.0);
  double best_cost = B.squaredNorm();
  for (unsigned mask = 1; mask < (1u << p); ++mask) {
    std::vector<int> free;
    for (int j = 0; j < p; ++j) {
      if (mask & (1u << j)) free.push_back(j);
    }
    Eigen::MatrixXd S(n, static_cast<int>(free.size()));
    for (std::size_t k = 0; k < free.size(); ++k) S.col(static_cast<int>(k)) = A.col(free[k]);
    const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(S);
    if (qr.rank() < static_cast<int>(free.size())) continue;  // a dependent set: a subset does it
    const Eigen::VectorXd x = qr.solve(B);
    if ((x.array() < 0).any()) continue;
    const double cost = (S * x - B).squaredNorm();
    if (cost < best_cost - 1e-15 * (1 + best_cost)) {
      best_cost = cost;
      std::fill(best.begin(), best.end(), 0.0);
      for (std::size_t k = 0; k < free.size(); ++k)
        best[static_cast<std::size_t>(free[k])] = x(static_cast<int>(k));
    }
  }
  return best;
}

const std::vector<std::string>& catalog_fit_keys() {
  static const std::vector<std::string> keys = {"kernel_fixed_cost", "block_round_cost",
                                                "host_per_request", "harness_per_request"};
  return keys;
}

std::string calibration_base_profile(const std::vector<CalibrationPoint>& points,
                                     const std::string& measured_gpu, const std::string& given,
                                     bool writing, const CalibrateOptionNames& names) {
  if (!given.empty()) return given;
  if (points.empty()) {
    if (!writing) return "";
    throw InputError(names.output + ": say which profile the microbenchmark values go into with " +
                     names.profile + " (e.g. " + names.profile_example +
                     (measured_gpu.empty() ? std::string() : "; measured on " + measured_gpu) +
                     ")");
  }
  const std::string& base = points.front().profile;
  for (const CalibrationPoint& p : points) {
    if (p.profile != base && writing) {
      throw InputError(names.output + ": the points name several profiles (" + base + ", " +
                       p.profile + "); say which to write with " + names.profile);
    }
  }
  return base;
}

CalibrationResult calibrate(const std::vector<CalibrationPoint>& points,
                            const CalibrationOptions& options) {
  CalibrationResult result;
  result.points = points;
  const auto& pts = result.points;
  const std::size_t n = pts.size();
  const auto note = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  const auto wants = [&](const std::string& kind) {
    return options.fit.empty() ||
           std::find(options.fit.begin(), options.fit.end(), kind) != options.fit.end();
  };
  for (const std::string& kind : options.fit) {
    const auto& known = catalog_fit_keys();
    if (std::find(known.begin(), known.end(), kind) == known.end()) {
      throw InputError("calibrate: --fit: unknown parameter '" + kind + "' (" + join(known, ", ") +
                       ")");
    }
  }
  // The free parameters.
  std::vector<std::string> keys;
  if (wants("kernel_fixed_cost")) keys.emplace_back("kernel_fixed_cost");
  if (wants("block_round_cost")) keys.emplace_back("block_round_cost");
  if (wants("host_per_request")) {
    std::set<std::string> runtimes;
    for (const CalibrationPoint& p : pts) {
      if (p.phase != "training") runtimes.insert(runtime_of(p));
    }
    for (const std::string& r : runtimes) keys.push_back("host_per_request." + r);
  }
  if (wants("harness_per_request")) {
    std::set<std::string> harnesses;
    for (const CalibrationPoint& p : pts) {
      if (!p.harness.empty()) harnesses.insert(p.harness);
    }
    for (const std::string& h : harnesses) keys.push_back("harness_per_request." + h);
  }
  // A key asked for by name that no point informs was fitted as nothing, exit 0 (`--fit
  // harness_per_request` on points of no harness: an empty parameter table).
  const auto asked = [&](const std::string& kind) {
    return std::find(options.fit.begin(), options.fit.end(), kind) != options.fit.end();
  };
  const auto has_key = [&](const std::string& prefix) {
    return std::any_of(keys.begin(), keys.end(),
                       [&](const std::string& k) { return k.rfind(prefix, 0) == 0; });
  };
  if (asked("harness_per_request") && !has_key("harness_per_request.")) {
    throw InputError(
        "--fit harness_per_request: no point names a harness (the `harness` column, e.g. "
        "mlperf-loadgen)");
  }
  if (asked("host_per_request") && !has_key("host_per_request.")) {
    throw InputError("--fit host_per_request: no inference point (every point is a training step)");
  }
  const int pcount = static_cast<int>(keys.size());
  for (const CalibrationPoint& p : pts) result.sources.push_back(p.source);
  std::sort(result.sources.begin(), result.sources.end());
  result.sources.erase(std::unique(result.sources.begin(), result.sources.end()),
                       result.sources.end());

  PointSimulator sim;
  // A harness being fitted is 0 where a profile has no time for it yet (the before column); one
  // that is not fitted must be in the points' profiles (a point naming another is refused).
  Theta harness_defaults;
  for (const CalibrationPoint& p : pts) {
    if (!p.harness.empty() && wants("harness_per_request")) {
      harness_defaults["harness_per_request." + p.harness] = 0;
    }
  }
  sim.set_defaults(harness_defaults);
  const auto predict_all = [&](const Theta& theta) {
    std::vector<double> t(n);
    for (std::size_t i = 0; i < n; ++i) t[i] = sim.predict(pts[i], theta);
    return t;
  };
  // Before: each profile's own values.
  result.rows.resize(n);
  const std::vector<double> before = predict_all({});
  Theta theta;
  for (const std::string& key : keys) theta[key] = 0;
  std::vector<double> at = predict_all(theta);
  std::vector<double> jac(n * static_cast<std::size_t>(std::max(1, pcount)), 0.0);
  const double bump = 1000;  // ns
  // Point i's row of the weighted problem linearised at theta: W J (theta' - theta) against
  // W (T - t(theta)), i.e. A = W J and b = W (T - t(theta) + J theta).
  const auto linearised_row = [&](std::size_t i, std::vector<double>& a, std::vector<double>& b) {
    const double w = 1.0 / pts[i].target_s;
    double offset = 0;
    for (int j = 0; j < pcount; ++j) {
      const double jij = jac[i * static_cast<std::size_t>(pcount) + static_cast<std::size_t>(j)];
      a.push_back(w * jij);
      offset += jij * theta[keys[static_cast<std::size_t>(j)]];
    }
    b.push_back(w * (pts[i].target_s - at[i] + offset));
  };
  for (int iteration = 0; iteration < options.iterations && pcount > 0; ++iteration) {
    note("fit " + std::to_string(iteration + 1) + "/" + std::to_string(options.iterations) + ": " +
         std::to_string(n * static_cast<std::size_t>(pcount)) + " simulations");
    for (int j = 0; j < pcount; ++j) {
      Theta bumped = theta;
      bumped[keys[static_cast<std::size_t>(j)]] += bump;
      const std::vector<double> t = predict_all(bumped);
      for (std::size_t i = 0; i < n; ++i) {
        jac[i * static_cast<std::size_t>(pcount) + static_cast<std::size_t>(j)] =
            (t[i] - at[i]) / bump;
      }
    }
    std::vector<double> a, b;
    for (std::size_t i = 0; i < n; ++i) linearised_row(i, a, b);
    const std::vector<double> x = nonnegative_least_squares(a, b, pcount);
    double moved = 0;
    for (int j = 0; j < pcount; ++j) {
      double& v = theta[keys[static_cast<std::size_t>(j)]];
      moved = std::max(moved, std::abs(x[static_cast<std::size_t>(j)] - v));
      v = x[static_cast<std::size_t>(j)];
    }
    at = predict_all(theta);
    if (moved < 1.0) break;
  }
  // Cross-validation: one fold per source, linearised at the fit. With one source there is no
  // fold to leave out (the other sources would be none): out of sample is not available (NaN).
  const bool cross_validated = result.sources.size() >= 2;
  std::vector<double> out_of_sample(n, cross_validated ? 0.0 : kNotAvailable);
  std::vector<Theta> folds;
  for (const std::string& source : cross_validated ? result.sources : std::vector<std::string>{}) {
    note("leave out " + source);
    std::vector<double> a, b;
    for (std::size_t i = 0; i < n; ++i) {
      if (pts[i].source != source) linearised_row(i, a, b);
    }
    Theta fold;
    const std::vector<double> x = b.empty()
                                      ? std::vector<double>(static_cast<std::size_t>(pcount), 0.0)
                                      : nonnegative_least_squares(a, b, pcount);
    for (int j = 0; j < pcount; ++j)
      fold[keys[static_cast<std::size_t>(j)]] = x[static_cast<std::size_t>(j)];
    folds.push_back(fold);
    for (std::size_t i = 0; i < n; ++i) {
      if (pts[i].source == source) out_of_sample[i] = sim.predict(pts[i], fold);
    }
  }
  // Parameters.
  for (int j = 0; j < pcount; ++j) {
    const std::string& key = keys[static_cast<std::size_t>(j)];
    CalibrationParameter param;
    param.key = key;
    const Theta base = profile_values(load_device_profile(pts.front().profile));
    param.before_ns = base.count(key) ? base.at(key) : 0.0;
    param.fitted_ns = theta[key];
    param.fold_min_ns = param.fold_max_ns = theta[key];
    for (const Theta& fold : folds) {
      param.fold_min_ns = std::min(param.fold_min_ns, fold.at(key));
      param.fold_max_ns = std::max(param.fold_max_ns, fold.at(key));
    }
    for (std::size_t i = 0; i < n; ++i) {
      // Depends: 1 us of the parameter moves the prediction by more than 0.01 %.
      const double sensitivity =
          std::abs(jac[i * static_cast<std::size_t>(pcount) + static_cast<std::size_t>(j)]) *
          1000.0 / pts[i].target_s;
      if (sensitivity > 1e-4) {
        ++param.informed_by;
        result.rows[i].depends_on.push_back(key);
      }
    }
    result.parameters.push_back(param);
  }
  for (std::size_t i = 0; i < n; ++i) {
    CalibrationRow& row = result.rows[i];
    row.point = &pts[i];
    row.before_s = before[i];
    row.in_sample_s = at[i];
    row.out_of_sample_s = out_of_sample[i];
  }
  for (const char* mechanism : {"alone", "MIG", "all"}) {
    CalibrationResult::Errors e;
    e.mechanism = mechanism;
    std::vector<double> b, in, out;
    for (const CalibrationRow& row : result.rows) {
      const bool mig = !row.point->mig.empty();
      if ((std::string(mechanism) == "alone" && mig) || (std::string(mechanism) == "MIG" && !mig))
        continue;
      const double t = row.point->target_s;
      b.push_back(row.before_s / t - 1);
      in.push_back(row.in_sample_s / t - 1);
      out.push_back(row.out_of_sample_s / t - 1);
    }
    e.points = static_cast<int>(b.size());
    if (e.points == 0) continue;
    e.before = median_abs(b);
    e.in_sample = median_abs(in);
    e.out_of_sample = cross_validated ? median_abs(out) : kNotAvailable;
    result.errors.push_back(e);
  }
  result.simulations = sim.simulations();
  return result;
}

std::string fitted_profile_text(const std::string& base, const CalibrationResult& result,
                                const std::vector<std::string>& files, const std::string& date) {
  const DeviceProfile& gpu = load_device_profile(base);
  const CalibrationResult::Errors* all = nullptr;
  for (const auto& e : result.errors) {
    if (e.mechanism == "all") all = &e;
  }
  std::ostringstream tail;
  tail.precision(3);
  if (all != nullptr) {
    tail << "; median |error| in sample " << percent_text(all->in_sample)
         << ", leave-one-source-out "
         << (std::isnan(all->out_of_sample) ? "n/a (one source)" : percent_text(all->out_of_sample))
         << " (" << all->points << " points)";
  }
  Theta fitted;
  std::map<std::string, std::string> why;
  for (const CalibrationParameter& p : result.parameters) {
    fitted[p.key] = p.fitted_ns;
    std::ostringstream s;
    s << "gpumux calibrate " << join(files, " ") << " (" << date << "; sources "
      << join(result.sources, ", ") << "; informed by " << p.informed_by << " of the points; folds "
      << std::llround(p.fold_min_ns) << "-" << std::llround(p.fold_max_ns) << " ns" << tail.str()
      << ")";
    why[p.key] = s.str();
  }
  // The base's entries of the fitted keys are replaced; a host_per_request runtime (or
  // harness_per_request harness) the fit did not touch is written back with its value, marked as
  // kept.
  Theta kept;
  for (const auto& [key, ns] : profile_values(gpu)) {
    if (fitted.count(key)) continue;
    const std::string parent = nested_key_of(key);
    const bool rewritten_block =
        !parent.empty() && std::any_of(fitted.begin(), fitted.end(), [&](const auto& f) {
          return nested_key_of(f.first) == parent;
        });
    if (rewritten_block && ns > 0) kept[key] = ns;
  }
  std::vector<std::string> top_keys;
  for (const auto& [key, ns] : fitted) top_keys.push_back(key.substr(0, key.find('.')));
  const std::string removed = without_top_keys(device_profile_text(base), top_keys);
  std::string block = "\n# Fitted by gpumux calibrate (docs/calibration.md); rerun it to refit.\n";
  Theta top_values;
  std::map<std::string, Theta> nested_values;
  for (const auto& [key, ns] : fitted) {
    const std::string parent = nested_key_of(key);
    (parent.empty() ? top_values : nested_values[parent])[key] = ns;
  }
  block += fitted_block(top_values, why, "fitted");
  for (const auto& [parent, values] : nested_values) {
    const std::size_t cut = parent.size() + 1;
    std::map<std::string, std::string> entries;
    for (const auto& [key, ns] : values) {
      entries[key.substr(cut)] =
          "{value: " + ns_text(ns) + ", fitted: " + yaml_quoted(why[key]) + "}";
    }
    for (const auto& [key, ns] : kept) {
      if (nested_key_of(key) != parent) continue;
      entries[key.substr(cut)] =
          "{value: " + ns_text(ns) + ", assumption: " +
          yaml_quoted("kept from the base profile " + base + " (not refitted: no point of this " +
                      (parent == "host_per_request" ? "runtime" : "harness") + ")") +
          "}";
    }
    block += parent + ":\n";
    for (const auto& [name, entry] : entries) block += "  " + name + ": " + entry + "\n";
  }
  return removed + block;
}

std::string calibration_report(const CalibrationResult& result) {
  std::ostringstream out;
  out.precision(3);
  out << "## Fitted parameters\n\n| parameter | before | fitted | range over folds | points "
         "depending on it |\n|---|---:|---:|---:|---:|\n";
  for (const CalibrationParameter& p : result.parameters) {
    out << "| `" << p.key << "` | " << units::format_duration(std::llround(p.before_ns)) << " | "
        << units::format_duration(std::llround(p.fitted_ns)) << " | "
        << units::format_duration(std::llround(p.fold_min_ns)) << " - "
        << units::format_duration(std::llround(p.fold_max_ns)) << " | " << p.informed_by << " |\n";
  }
  out << "\n## Median |error| by mechanism\n\n| mechanism | points | before | in sample | "
         "out of sample (leave one source out) |\n|---|---:|---:|---:|---:|\n";
  for (const auto& e : result.errors) {
    out << "| " << e.mechanism << " | " << e.points << " | " << percent_text(e.before) << " | "
        << percent_text(e.in_sample) << " | " << percent_text(e.out_of_sample) << " |\n";
  }
  out << "\n## Points\n\n| point | source | setup | measured | before | in sample | out of "
         "sample | depends on |\n|---|---|---|---:|---:|---:|---:|---|\n";
  for (const CalibrationRow& row : result.rows) {
    const CalibrationPoint& p = *row.point;
    const auto err = [&](double t) {
      if (std::isnan(t)) return std::string("n/a");
      std::ostringstream s;
      s.precision(3);
      s << units::format_duration(std::llround(t * 1e9)) << " (" << std::showpos
        << 100 * (t / p.target_s - 1) << std::noshowpos << " %)";
      return s.str();
    };
    out << "| " << p.id << " | " << p.source << " | " << p.model << " " << p.phase << " b"
        << p.batch << (p.seq_len ? " s" + std::to_string(p.seq_len) : "") << " " << runtime_of(p)
        << (p.harness.empty() ? "" : " + " + p.harness) << (p.cuda_graph ? " (CUDA graph)" : "")
        << " on " << p.profile << (p.mig.empty() ? "" : " " + p.mig) << " | "
        << units::format_duration(std::llround(p.target_s * 1e9)) << " | " << err(row.before_s)
        << " | " << err(row.in_sample_s) << " | " << err(row.out_of_sample_s) << " | "
        << join(row.depends_on, ", ") << " |\n";
  }
  out << "\n" << result.simulations << " simulations.\n";
  return out.str();
}

}  // namespace gpumux
