// Launch timing: a launch sequence's kernels are drawn when it starts (the one kernel
// expansion; a request also takes its memory and its solo latency then), then run in order on
// each stream. Kernel k is issued by the CPU at
//     issue_k = max(finish_{k-1} + host_before_k, start + lead + host_before_0 + k * host_gap)
//     (lead: a batched iteration's engine CPU time, LaunchSequence::host_lead; else 0)
//     (host_before_0, the request's own host time before its dispatch loop, only when host_gap > 0)
// and can start on the GPU at ready_k = issue_k + L_k (L: the profile's launch overhead, or the
// graph launch overhead with `cuda_graph: true`; a kernel-trace kernel may carry its own L_k and
// host_before_k, docs/traces.md). Kernel-trace kernels keep their recorded streams as lanes: one
// Stream per GPU and lane, each running its lane's kernels in order.
// A kernel not ready yet waits for an on_stream_ready event; while it is already issued and only
// L is left, its device is told it is launching (time-slicing counts the context as busy).
#include <algorithm>
#include <cmath>

#include "models/gpu/device_solo.hpp"
#include "models/run/run.hpp"
#include "sim/util/checked.hpp"
#include "models/run/tenant.hpp"

namespace gpumux::run {
namespace {

// The largest kernel work (ns at full rate): 2^62 ns, about 146 years, below the int64 horizon.
constexpr double kMaxKernelWork = 4611686018427387904.0;

}  // namespace

double Tenant::kernel_work(double d) {
  // A draw beyond the int64 horizon (lognormal tail x per-token count) saturates there: the
  // kernel never finishes within representable time (NaN counts as that too).
  return std::isnan(d) ? kMaxKernelWork
                       : std::clamp(checked::round_half_away(d), 1.0, kMaxKernelWork);
}

void Tenant::push_kernel(LaunchSequence& sequence, const KernelSpec& k, double d) {
  sequence.durations.push_back(kernel_work(d));
  sequence.specs.push_back(&k);
}

template <bool kShapes, typename Base, typename Push>
void Tenant::each_launch(const KernelScaling& scaling, Base base, Push push) const {
  auto tokens = [&scaling](TokenCount c) -> std::int64_t {
    return c == TokenCount::input    ? scaling.input_tokens
           : c == TokenCount::output ? scaling.output_tokens
           : c == TokenCount::batch  ? scaling.batch_tokens
                                     : 1;
  };
  const std::int64_t window = spec_.workload.attention_window;
  for (const KernelSpec& k : kernels_for(scaling.input_tokens)) {
    const bool decode = k.repeat_per_token != TokenCount::none;
    if (decode && !scaling.decode) continue;  // no decoding sequence in this iteration
    const std::int64_t launches = !decode                    ? k.repeat
                                  : scaling.repeat_per_token ? tokens(k.repeat_per_token)
                                                             : 1;
    const std::int64_t count =
        k.duration_per_token == TokenCount::none ? 1 : tokens(k.duration_per_token);
    if (count <= 0) continue;  // no tokens of that kind: the kernel is not launched
    const double scale = static_cast<double>(count);
    // What the kernel's per-sequence and per-context terms count (KernelSpec::per_context_token).
    const bool prompt = k.duration_per_token == TokenCount::input;
    const double sequences = prompt   ? scaling.prompt_sequences
                             : decode ? scaling.decode_sequences
                                      : scaling.sequences;
    const double context = prompt   ? scaling.prompt_pairs
                           : decode ? scaling.context_tokens
                                    : scaling.all_context_tokens;
    const double roofline_tokens = k.duration_per_token == TokenCount::none ? sequences : scale;
    for (std::int64_t i = 0; i < launches; ++i) {
      // A request alone: decode launch i reads the prompt and the i tokens generated before it
      // (at most the attention window's).
      const double c = decode && scaling.repeat_per_token
                           ? windowed(context + static_cast<double>(i), window)
                           : context;
      double d = base(k) * scale + static_cast<double>(k.per_sequence) * sequences +
                 k.per_context_token * c;
      LaunchShape shape{k.sm_fraction, k.waves, k.memory_bound, k.busy_share};
      if (k.roofline.any()) {
        d += k.roofline.nanos(roofline_tokens, sequences, c);
        if constexpr (kShapes) {
          k.roofline.shape(roofline_tokens, sequences, c, shape.sm_fraction, shape.waves,
                           shape.memory_bound, shape.busy_share);
        }
      }
      push(k, d, shape);
    }
  }
}

const std::vector<KernelSpec>& Tenant::kernels_for(std::int64_t length) const {
  const WorkloadSpec& w = spec_.workload;
  if (w.length_values.empty()) return w.kernels;
  const auto above = std::lower_bound(w.length_values.begin(), w.length_values.end(), length);
  const std::size_t i = std::min(static_cast<std::size_t>(above - w.length_values.begin()),
                                 w.length_values.size() - 1);
  return w.kernels_by_length[i];
}

void Tenant::expand_kernels(LaunchSequence& sequence, const KernelScaling& scaling) {
  if (single_launch_ != nullptr) {
    // each_launch for a workload of one kernel launched once (launches 1, scale 1).
    const KernelSpec& k = *single_launch_;
    push_kernel(sequence, k,
                single_launch_duration(k, draw(kernels_rng_, k.duration), scaling.sequences));
    return;
  }
  if (fixed_durations_) {
    // No draw: the expansion is the last one's when the scaling is the same (fixed_durations_).
    if (!expansion_valid_ || scaling != expansion_scaling_) {
      expansion_durations_.clear();
      expansion_specs_.clear();
      expansion_shapes_.clear();
      each_launch<true>(
          scaling, [](const KernelSpec& k) { return static_cast<double>(k.duration.value); },
          [this](const KernelSpec& k, double d, const LaunchShape& shape) {
            expansion_durations_.push_back(kernel_work(d));  // push_kernel's
            expansion_specs_.push_back(&k);
            if (shaped_launches_) expansion_shapes_.push_back(shape);
          });
      expansion_scaling_ = scaling;
      expansion_valid_ = true;
    }
    sequence.durations.insert(sequence.durations.end(), expansion_durations_.begin(),
                              expansion_durations_.end());
    sequence.specs.insert(sequence.specs.end(), expansion_specs_.begin(), expansion_specs_.end());
    if (shaped_launches_) {
      sequence.shapes.insert(sequence.shapes.end(), expansion_shapes_.begin(),
                             expansion_shapes_.end());
    }
    return;
  }
  each_launch<true>(
      scaling, [this](const KernelSpec& k) { return draw(kernels_rng_, k.duration); },
      [this, &sequence](const KernelSpec& k, double d, const LaunchShape& shape) {
        push_kernel(sequence, k, d);
        if (shaped_launches_) sequence.shapes.push_back(shape);
      });
}

double Tenant::mean_iteration_time(const KernelScaling& scaling) const {
  std::vector<double>& durations = mean_durations_scratch_;
  std::vector<const KernelSpec*>& specs = mean_specs_scratch_;
  durations.clear();
  specs.clear();
  each_launch<false>(
      scaling, [](const KernelSpec& k) { return k.duration.mean(); },
      [&](const KernelSpec& k, double d, const LaunchShape&) {
        durations.push_back(d);
        specs.push_back(&k);
      });
  // The engine's CPU time comes before the kernels (host_lead), which start as they would at 0.
  return spec_.workload.engine_cpu.time(scaling.sequences) + stream_time(durations, specs);
}

bool Tenant::begin_request(Request& r) {
  r.start = sim_.now();
  const std::int64_t bytes = request_bytes(r);
  if (!allocate(bytes, "per-request allocation:")) return false;
  r.memory = bytes;
  // Draw every kernel's duration now, so the solo latency of this exact request is known.
  expand_kernels(r, alone_scaling(r));
  if (r.durations.empty()) {
    // Nothing to run (e.g. zero tokens): the request completes at once.
    r.solo_latency = 0;
    finish_request(r, RequestStatus::completed);
    return true;
  }
  r.solo_latency = stream_time(r.durations, r.specs);  // the same request alone on the whole GPU
  start_streams(r);
  return true;
}

double Tenant::stream_time(const std::vector<double>& durations,
                           const std::vector<const KernelSpec*>& specs) const {
  // One lane (every kernel list, most traces) keeps its finish time in a local instead of the
  // per-lane table: the same sums.
  double one_lane_finish = 0.0;
  std::vector<double>& lane_finish = lane_finish_scratch_;
  if (lanes_ != 1) lane_finish.assign(static_cast<std::size_t>(lanes_), 0.0);
  double end = 0;
  for (std::size_t k = 0; k < durations.size(); ++k) {
    const KernelSpec& spec = *specs[k];
    double& finish =
        lanes_ == 1 ? one_lane_finish : lane_finish[static_cast<std::size_t>(spec.lane)];
    finish = stream_step(finish, spec, *specs.front(), k, durations[k]);
    end = std::max(end, finish);
  }
  return end;
}

std::size_t Tenant::next_of_lane(const LaunchSequence& sequence, std::size_t from, int lane) const {
  if (lanes_ == 1) return from;
  while (from < sequence.specs.size() && sequence.specs[from]->lane != lane) ++from;
  return from;
}

void Tenant::start_streams(LaunchSequence& sequence) {
  const std::size_t lanes = static_cast<std::size_t>(lanes_);
  sequence.streams.resize(devices_.size() * lanes);
  sequence.streams_done = 0;
  sequence.at_barrier = 0;
  sequence.collective_done = 0;
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      // Every field but the kernel, which prepare_kernel() resets before the device sees it
      // (none of this sequence's kernels is on a device yet: a recycled sequence's ended).
      Stream& stream = sequence.streams[d * lanes + lane];
      stream.ready_event = EventId{};
      stream.launching = false;
      stream.sequence = &sequence;
      stream.device = static_cast<int>(d);
      stream.lane = static_cast<int>(lane);
      stream.next_kernel = next_of_lane(sequence, 0, stream.lane);
    }
  }
  for (Stream& stream : sequence.streams) advance_stream(stream);
}

void Tenant::advance_stream(Stream& stream) {
  LaunchSequence& sequence = *stream.sequence;
  if (stream.next_kernel == sequence.durations.size()) {
    if (++sequence.streams_done == static_cast<int>(sequence.streams.size())) {
      sequence_done(sequence);
    }
    return;
  }
  if (wait_at_collective(stream)) return;
  issue_next_kernel(stream);
}

void Tenant::issue_next_kernel(Stream& stream) {
  if (direct_pending_ != nullptr) {
    direct_issue(stream, *direct_pending_);  // the batched inline loop (direct.cpp)
    return;
  }
  const Nanos now = sim_.now();
  const LaunchSequence& sequence = *stream.sequence;
  const Nanos issue = issue_time(sequence, stream.next_kernel, now);
  const Nanos ready = issue + launch_time(sequence, stream.next_kernel);
  if (ready <= now) {
    submit_kernel(stream);
    return;
  }
  stream.ready_event = sim_.schedule_at(ready, make_event<&Tenant::on_stream_ready>(*this, stream),
                                        kPriorityControl);
  // Already in the stream's queue (the CPU issued it): its context is not idle meanwhile.
  if (issue <= now) {
    stream.launching = true;
    devices_[static_cast<std::size_t>(stream.device)]->kernel_launching(index_, true);
  }
}

void Tenant::on_stream_ready(Stream& stream) {
  recycle_graveyard();
  stream.ready_event = EventId{};
  if (stream.launching) {
    stream.launching = false;
    devices_[static_cast<std::size_t>(stream.device)]->kernel_launching(index_, false);
  }
  if (direct_holder_ && Device::SoloSession::available_to_holder(*devices_.front(), index_)) {
    run_holder(stream);  // this submission and what follows it, inline (direct.cpp)
    return;
  }
  submit_kernel(stream);
}

void Tenant::submit_kernel(Stream& stream) {
  devices_[static_cast<std::size_t>(stream.device)]->submit(prepare_kernel(stream));
}

void Tenant::on_kernel_finished(KernelRun& kernel, Nanos now) {
  Stream& stream = *static_cast<Stream*>(kernel.owner_data);
  if (stream.sequence->dead) return;
  if (wait_at_collective_end(stream, now)) return;
  end_kernel(stream, now);
}

void Tenant::end_kernel(Stream& stream, Nanos now) {
  const KernelRun& kernel = stream.kernel;
  LaunchSequence& sequence = *stream.sequence;
  if (run_.wants_kernels()) {  // (else nothing to build: a run over many devices reads each cold)
    run_.record_kernel(KernelRecord{
        static_cast<std::uint32_t>(index_), sequence.id, kernel.kernel_index,
        devices_[static_cast<std::size_t>(stream.device)]->index(), kernel.first_start, now});
  }
  // A request alone: its first token is ready when its first decode kernel ends (a batched
  // iteration's first token is counted for the whole batch by end_iteration).
  Request* r = sequence.request;
  if (output_token_kernels_ && r != nullptr && r->first_token < 0 && stream.device == 0 &&
      sequence.specs[stream.next_kernel]->repeat_per_token == TokenCount::output) {
    r->first_token = now;
  }
  stream.next_kernel = next_of_lane(sequence, stream.next_kernel + 1, stream.lane);
  advance_stream(stream);
}

}  // namespace gpumux::run
