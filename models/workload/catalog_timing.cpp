// The workload catalog's kernel timing (catalog_model.hpp, "GEMM selection", "Latency floor",
// "Grid", "Roofline", "Boundedness", "Collective", "Fixed"): each layer's kernels on a GPU.
#include "models/workload/catalog_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/gpu/sharing_law.hpp"
#include "models/workload/catalog_layer_builder.hpp"
#include "models/workload/kernel_trace_model.hpp"
#include "models/workload/roofline.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/units.hpp"

namespace gpumux {
using catalog_detail::ceil_div;
namespace {

// Resident blocks per SM of a block shape (kernel_trace_model.hpp's occupancy law); 0 when the
// profile has no sm_limits.
int shape_blocks_per_sm(const SmLimits& limits, double threads, double registers, double shared) {
  TraceKernel k;
  k.block[0] = static_cast<std::int64_t>(threads);
  k.registers_per_thread = static_cast<int>(registers);
  k.shared_memory = static_cast<std::int64_t>(shared);
  return blocks_per_sm(k, limits);
}

double hbm_bandwidth(const DeviceProfile& gpu) { return achievable_hbm_bandwidth(gpu); }

// The HBM bandwidth (bytes/s) a grid of `blocks` blocks draws alone from `bandwidth` on `sms`
// SMs: every byte passes through the port of the SM that asked for it, so at most
// min(blocks, sms) x s with s the profile's per-SM ceiling `sm_bandwidth` (contention law 2's,
// the same product models/gpu/contention_law.hpp's hbm_draw takes as a kernel's solo draw);
// `bandwidth` where the profile has no ceiling (or the run's law none: catalog_timing_profile).
double grid_bandwidth(double bandwidth, std::int64_t blocks, int sms, const DeviceProfile& gpu) {
  if (sms <= 0) return bandwidth;
  const double held =
      static_cast<double>(std::min<std::int64_t>(std::max<std::int64_t>(1, blocks), sms));
  return contention::sm_port_limit(bandwidth, held, gpu.sm_bandwidth);
}

// The busiest of `sms` SMs computes ceil(blocks / sms) of the blocks.
double busiest_share(std::int64_t blocks, int sms) {
  const double g = static_cast<double>(std::max<std::int64_t>(1, blocks));
  return static_cast<double>(sms) * static_cast<double>(ceil_div(blocks, sms)) / g;
}

}  // namespace

int dtype_bytes(const std::string& dtype) {
  if (dtype == "fp16" || dtype == "bf16") return 2;
  if (dtype == "fp8" || dtype == "int8") return 1;
  if (dtype == "tf32" || dtype == "fp32") return 4;
  return 0;
}

double tensor_peak(const DeviceProfile& gpu, const std::string& dtype) {
  const ComputeThroughput& c = gpu.compute;
  if (dtype == "fp16") return c.fp16_tensor;
  if (dtype == "bf16") return c.bf16_tensor;
  if (dtype == "fp8") return c.fp8_tensor;
  if (dtype == "int8") return c.int8_tensor;
  if (dtype == "tf32") return c.tf32_tensor;
  if (dtype == "fp32") return c.fp32;
  return 0;
}

double per_head_attention_shared_memory(std::int64_t key_rows, std::int64_t head_dim,
                                        double element_bytes, double q_tile_rows) {
  return (2.0 * static_cast<double>(key_rows) + q_tile_rows) * static_cast<double>(head_dim) *
         element_bytes;
}

double per_head_attention_compact_shared_memory(std::int64_t key_rows, std::int64_t head_dim,
                                                double element_bytes, double q_tile_rows) {
  return (static_cast<double>(key_rows) + q_tile_rows) * static_cast<double>(head_dim) *
         element_bytes;
}

double per_head_attention_block_shared_memory(const SmLimits& limits, std::int64_t key_rows,
                                              std::int64_t head_dim, double element_bytes,
                                              double q_tile_rows) {
  const double full =
      per_head_attention_shared_memory(key_rows, head_dim, element_bytes, q_tile_rows);
  if (per_head_attention_fits(limits, full)) return full;
  const double compact =
      per_head_attention_compact_shared_memory(key_rows, head_dim, element_bytes, q_tile_rows);
  return per_head_attention_fits(limits, compact) ? compact : 0.0;
}

bool per_head_attention_fits(const SmLimits& limits, double shared_bytes) {
  if (!limits.known()) return true;
  return shared_bytes <=
         static_cast<double>(limits.shared_memory - limits.shared_reserved_per_block);
}

namespace {

// Latency floor (catalog_model.hpp): the critical path of the busiest SM. It runs `per_sm` blocks,
// at most `resident` at a time, in rounds; in a round of b blocks each waits for its first
// operands (`path.fill` + b `path.fill_per_block`: a latency, then the resident blocks' first
// tiles through the SM's share of L2), runs `path.iterations` main-loop iterations of which each
// takes the longer of its compute (`path.block_compute` seconds for one block alone on the SM, b
// blocks sharing it) and `path.iteration_latency` (a memory latency over the loads in flight),
// then stores (`path.epilogue` + b `path.epilogue_per_block`).
struct BlockPath {
  double iterations = 1;
  double block_compute = 0;
  double iteration_latency = 0;
  double fill = 0, fill_per_block = 0;
  double epilogue = 0, epilogue_per_block = 0;
};
// One round of `blocks` resident blocks on an SM along `path`.
double round_time(std::int64_t blocks, const BlockPath& path) {
  const double b = static_cast<double>(blocks);
  const double iterations = std::max(1.0, path.iterations);
  const double per_iteration = b * path.block_compute / iterations;
  return path.fill + b * path.fill_per_block +
         iterations * std::max(per_iteration, path.iteration_latency) + path.epilogue +
         b * path.epilogue_per_block;
}
double critical_path(std::int64_t per_sm, int resident, const BlockPath& path) {
  if (per_sm <= 0) return 0;
  const std::int64_t r = std::max<std::int64_t>(1, std::min<std::int64_t>(resident, per_sm));
  const std::int64_t full = per_sm / r;
  const std::int64_t rest = per_sm % r;
  return static_cast<double>(full) * round_time(r, path) +
         (rest > 0 ? round_time(rest, path) : 0.0);
}

// Contention law 2's throughput share tau (KernelSpec::sm_throughput_share) of a critical path
// of `per_sm` blocks on the busiest SM, `resident` at a time: the round time read as affine in
// its blocks, round(b) = L + b C, through its ends (C = (round(r) - round(1)) / (r - 1), the
// chord of the convex max() over one round's residency; L = round(1) - C), so the busiest SM
// takes T(n) = ceil(n / r) L + n C and tau = n C / T(n). With one block per round (r = 1)
// every round is one block: tau = 1 (the law then counts blocks, which equal its rounds).
// Why per block: the warps of every block resident on an SM issue through the same four
// sub-partitions, one Tensor Core each (source: NVIDIA A100 Tensor Core GPU Architecture
// whitepaper, "A100 SM Architecture", images.nvidia.com/aem-dam/en-zz/Solutions/data-center/
// nvidia-ampere-architecture-whitepaper.pdf; CUDA C++ Programming Guide, "Hardware
// Multithreading", docs.nvidia.com/cuda/cuda-c-programming-guide/#hardware-multithreading), so
// b blocks' work takes b times one block's: the b x block_compute of round_time, which the
// device physics must also count when a slice puts more blocks on each SM than the whole GPU.
double throughput_share(std::int64_t per_sm, int resident, const BlockPath& path) {
  if (per_sm <= 0) return 0;
  const std::int64_t r = std::max(1, resident);
  if (r == 1) return 1.0;
  const double one = round_time(1, path);
  const double per_block = (round_time(r, path) - one) / static_cast<double>(r - 1);
  const double per_round = one - per_block;
  const double n = static_cast<double>(per_sm);
  const double rounds = static_cast<double>(ceil_div(per_sm, r));
  const double total = rounds * per_round + n * per_block;
  return total > 0 ? std::clamp(n * per_block / total, 0.0, 1.0) : 0.0;
}

// The profile's per-round block cost (block dispatch, prologue, the epilogue's barrier), s: paid
// once per round of resident blocks on the busiest SM, as part of the round's fill.
double block_round_seconds(const DeviceProfile& gpu) {
  return static_cast<double>(gpu.block_round_cost) * 1e-9;
}

// One SM's share of the L2 bandwidth (bytes/s): what a wave of blocks that all load or store at
// once gets each (the HBM's share on a profile without an L2 figure).
double sm_l2_bandwidth(const DeviceProfile& gpu) {
  const double l2 = gpu.l2_bandwidth > 0 ? gpu.l2_bandwidth : hbm_bandwidth(gpu);
  return l2 / gpu.sms;
}

// The critical path of an elementwise kernel: per round of resident blocks one DRAM load, the
// per-block compute, one store into L2.
BlockPath elementwise_path(double block_compute, const MemoryLatency& latency, double round_cost) {
  BlockPath path;
  path.block_compute = block_compute;
  path.fill = latency.dram.value + round_cost;
  path.epilogue = latency.l2.value;
  return path;
}

// The floor of an elementwise kernel of `blocks` blocks (`resident` per SM) on `sms` SMs, and
// its throughput share (throughput_share).
struct Floor {
  double seconds = 0, throughput_share = 0;
};
Floor elementwise_floor(std::int64_t blocks, int resident, int sms, double block_compute,
                        const MemoryLatency& latency, double round_cost) {
  const BlockPath path = elementwise_path(block_compute, latency, round_cost);
  const std::int64_t per_sm = ceil_div(std::max<std::int64_t>(1, blocks), sms);
  return {critical_path(per_sm, resident, path), throughput_share(per_sm, resident, path)};
}

// The split-K reduction kernel of `split` fp32 partials of `outputs` elements written at
// `element_bytes` each: an elementwise kernel (blocks of kernel-families `elementwise`), its
// duration the longer of its HBM traffic and its floor, on `sms` SMs of `bandwidth`.
struct Reduction {
  std::int64_t blocks = 0;
  int blocks_per_sm = 0;
  double t_memory = 0, t_floor = 0;
  double throughput_share = 0;  // of t_floor (the busy phase)
  double duration() const { return std::max(t_memory, t_floor); }
};
Reduction split_k_reduction(double outputs, int split, double element_bytes,
                            const KernelFamilies& families, const DeviceProfile& gpu, int sms,
                            double bandwidth) {
  Reduction r;
  const auto per_block = static_cast<std::int64_t>(families.elementwise_threads.value *
                                                   families.elementwise_items.value);
  r.blocks = std::max<std::int64_t>(1, ceil_div(static_cast<std::int64_t>(outputs), per_block));
  r.blocks_per_sm = shape_blocks_per_sm(gpu.sm_limits, families.elementwise_threads.value,
                                        families.elementwise_registers.value, 0);
  r.t_memory =
      outputs * (4.0 * split + element_bytes) / grid_bandwidth(bandwidth, r.blocks, sms, gpu);
  const Floor floor = elementwise_floor(r.blocks, r.blocks_per_sm, sms, 0,
                                        families.latency(gpu.name), block_round_seconds(gpu));
  r.t_floor = floor.seconds;
  r.throughput_share = floor.throughput_share;
  return r;
}

}  // namespace

static GemmChoice time_gemm(const LayerWork& layer, const GemmTile& tile, int split, bool serial,
                            const KernelFamilies& families, const DeviceProfile& gpu, double peak,
                            int library_sms) {
  serial = serial && split > 1;
  const int sms = gpu.sms;
  const int lib = library_sms > 0 ? std::min(library_sms, sms) : sms;
  const double bandwidth = hbm_bandwidth(gpu) * static_cast<double>(lib) / sms;
  const double dt = layer.element_bytes > 0 ? layer.element_bytes : 2;
  const MemoryLatency& latency = families.latency(gpu.name);
  // Operand bytes a block draws from L2 per FLOP: a tile of m x n outputs reads (m + n)
  // elements per k for 2 m n FLOPs; the SM's share of the L2 bandwidth must feed its share of
  // the peak.
  const double intensity = 2.0 * tile.m * tile.n / ((tile.m + tile.n) * dt);
  const double tile_eff =
      gpu.l2_bandwidth > 0 ? std::min(1.0, intensity * gpu.l2_bandwidth / peak) : 1.0;
  GemmChoice c;
  c.tile = tile;
  c.split = split;
  c.serial = serial;
  c.blocks = layer.count * ceil_div(layer.m, tile.m) * ceil_div(layer.n, tile.n) * split;
  c.blocks_per_sm = shape_blocks_per_sm(gpu.sm_limits, tile.threads, tile.registers,
                                        static_cast<double>(tile.shared_memory));
  const std::int64_t depth = ceil_div(layer.k, split);
  const double block_flops = 2.0 * tile.m * tile.n * static_cast<double>(depth);
  const double sm_rate = families.gemm_efficiency.value * tile_eff * peak / sms;
  const std::int64_t per_sm = ceil_div(c.blocks, lib);
  c.t_compute = static_cast<double>(per_sm) * block_flops / sm_rate;
  // The busiest SM's critical path: ceil(depth / k) iterations, each at least the DRAM latency
  // over the stages - 1 k-slices in flight; before them the first k-slice's load (a DRAM latency,
  // then (m + n) k elements through the SM's share of L2), after them the epilogue: the fused
  // activation on the CUDA cores and the tile's store (an L2 latency, then m n outputs, or fp32
  // partials under split-K with a reduction kernel, through the same share).
  c.iterations = static_cast<int>(ceil_div(depth, tile.k));
  const double l2_share = sm_l2_bandwidth(gpu);
  BlockPath path;
  path.iterations = c.iterations;
  path.block_compute = block_flops / sm_rate;
  path.iteration_latency = latency.dram.value / std::max(1, tile.stages - 1);
  path.fill = latency.dram.value + block_round_seconds(gpu);
  path.fill_per_block = static_cast<double>(tile.m + tile.n) * tile.k * dt / l2_share;
  path.epilogue = latency.l2.value;
  const double outputs_per_block = static_cast<double>(tile.m) * tile.n;
  path.epilogue_per_block = outputs_per_block * (split > 1 && !serial ? 4.0 : dt) / l2_share +
                            outputs_per_block * layer.epilogue_flops / (gpu.compute.fp32 / sms);
  const double path_time = critical_path(per_sm, c.blocks_per_sm, path);
  const double path_share = throughput_share(per_sm, c.blocks_per_sm, path);
  // Serial split-K: the splits of a tile finish their main loops together and then add into the
  // output tile one after another: s - 1 steps after the first's epilogue, each the release seen
  // by the next split's poll and the tile's read (an L2 round trip each) and the tile read and
  // written in the output type through the SM's L2 share. Latency, not SM work: the throughput
  // share of the path is diluted by it.
  if (serial) {
    const double step = 2.0 * latency.l2.value + 2.0 * outputs_per_block * dt / l2_share;
    c.t_serial_chain = static_cast<double>(split - 1) * step;
  }
  c.t_latency = path_time + c.t_serial_chain;
  c.throughput_share = c.t_serial_chain > 0 ? path_share * path_time / c.t_latency : path_share;
  // Split-K with a reduction kernel: each split writes its fp32 partial tile instead of the
  // output; the kernel reads them back and writes the output (kernel-families `elementwise`
  // blocks). Serial split-K writes the output tile (its intermediate states stay in L2).
  const double outputs = static_cast<double>(layer.count) * static_cast<double>(layer.m) *
                         static_cast<double>(layer.n);
  const double partials = split > 1 && !serial ? outputs * (4.0 * split - dt) : 0.0;
  c.t_memory = (layer.bytes + partials) / grid_bandwidth(bandwidth, c.blocks, lib, gpu);
  if (split > 1 && !serial) {
    const Reduction r = split_k_reduction(outputs, split, dt, families, gpu, lib, bandwidth);
    c.t_reduce = r.duration();
    c.reduce_blocks = r.blocks;
  }
  return c;
}

double GemmChoice::time(const DeviceProfile& gpu) const {
  const double gemm = std::max(t_latency, t_memory);
  // The reduction is a second kernel: its own launch (the stream rate: a library chooses
  // without knowing whether it is captured in a graph) and duration.
  return split > 1 && !serial
             ? gemm + static_cast<double>(gpu.modelled_launch(false)) * 1e-9 + t_reduce
             : gemm;
}

double gemm_reread_bytes(const LayerWork& layer, const GemmTile& tile) {
  if (!(layer.a_bytes > 0) && !(layer.b_bytes > 0)) return layer.working_set;
  const std::int64_t row_tiles = ceil_div(layer.m, std::max<std::int64_t>(1, tile.m));
  const std::int64_t column_tiles = ceil_div(layer.n, std::max<std::int64_t>(1, tile.n));
  const double dt = layer.element_bytes > 0 ? layer.element_bytes : 2;
  const double left_matrix = static_cast<double>(layer.count) * static_cast<double>(layer.m) *
                             static_cast<double>(layer.k) * dt;
  const bool left_reread = column_tiles > 1 || layer.a_bytes < left_matrix;
  return (left_reread ? layer.a_bytes : 0.0) + (row_tiles > 1 ? layer.b_bytes : 0.0);
}

DeviceProfile catalog_timing_profile(const std::string& contention_law, const DeviceProfile& gpu) {
  const ContentionLaw* law = contention_law_or_default(contention_law);
  DeviceProfile timed = gpu;
  if (law != nullptr && !law->per_sm_bandwidth()) timed.sm_bandwidth = 0;
  return timed;
}

GemmChoice choose_gemm(const LayerWork& layer, const KernelFamilies& families,
                       const DeviceProfile& gpu, double peak, int library_sms) {
  if (families.fixed_gemm) {
    // A named GEMM library (catalog_model.hpp, "GEMM library"): its one tile and split rule.
    const GemmLibrary& lib = *families.fixed_gemm;
    const GemmTile& tile = layer.element_bytes >= 4 && lib.tile_fp32 ? *lib.tile_fp32 : lib.tile;
    const std::int64_t depth = static_cast<std::int64_t>(lib.split_depth.value);
    const double tiles = static_cast<double>(ceil_div(layer.m, tile.m)) *
                         static_cast<double>(ceil_div(layer.n, tile.n));
    const int split = layer.count == 1 && tiles < lib.split_below_tiles.value && layer.k >= depth
                          ? static_cast<int>(ceil_div(layer.k, depth))
                          : 1;
    return time_gemm(layer, tile, split, false, families, gpu, peak, library_sms);
  }
  GemmChoice best;
  double best_time = -1;
  const int lib = library_sms > 0 ? std::min(library_sms, gpu.sms) : gpu.sms;
  for (const GemmTile& tile : families.gemm_tiles) {
    // Serial split-K is offered where the unsplit grid leaves SMs idle (fewer output tiles than
    // the library's SMs), the case split-K exists for (CUTLASS efficient_gemm.md, "Parallelized
    // Reductions": "for small problems ... too few threadblocks to efficiently occupy the entire
    // GPU").
    const bool serial_offered =
        families.gemm_split_k_serial &&
        layer.count * ceil_div(layer.m, tile.m) * ceil_div(layer.n, tile.n) < lib;
    for (const int split : families.gemm_split_k) {
      if (split > 1 &&
          static_cast<double>(layer.k) / split < families.gemm_split_k_min_depth.value) {
        break;
      }
      // The reduction kernel first, then (where the library offers it) serial split-K.
      for (const bool serial : {false, true}) {
        if (serial && (split == 1 || !serial_offered)) break;
        const GemmChoice c =
            time_gemm(layer, tile, split, serial, families, gpu, peak, library_sms);
        const double t = c.time(gpu);
        // Strictly better by more than rounding: ties keep the earlier tile, the smaller split
        // and the reduction kernel.
        if (best_time < 0 || t < best_time * (1 - 1e-9)) {
          best_time = t;
          best = c;
        }
      }
    }
  }
  if (best_time < 0) throw std::invalid_argument("kernel-families lists no GEMM tile");
  return best;
}

namespace {

// A roofline kernel: its SMs busy for t_busy and its HBM traffic taking t_memory, overlapped
// (contention law 2): memory_bound = t_memory / max and busy_share = t_busy / max, the larger 1.
KernelSpec fixed_kernel(const std::string& name, double seconds, double t_busy, double t_memory) {
  KernelSpec spec;
  spec.name = name;
  const RooflinePhases phases = roofline_phases(t_busy, t_memory);
  spec.memory_bound = phases.memory_bound;
  spec.busy_share = phases.busy_share;
  spec.duration.kind = DurationDistribution::Kind::fixed;
  spec.duration.value = std::max<Nanos>(1, std::llround(seconds * 1e9));
  return spec;
}

// KernelSpec::tensor_flops of a GEMM or fused attention layer: its FLOPs when its operands are
// 2-byte (FP16/BF16 tensor math), else 0 (int8, TF32/FP32: no measured energy per operation).
double fp16_tensor_flops(const LayerWork& layer) {
  return layer.element_bytes == 2 ? layer.flops : 0.0;
}

BlockFootprint footprint(double threads, double registers, double shared_memory) {
  return {static_cast<int>(threads), static_cast<int>(registers),
          static_cast<std::int64_t>(shared_memory)};
}

BlockFootprint elementwise_footprint(const KernelFamilies& families) {
  return footprint(families.elementwise_threads.value, families.elementwise_registers.value, 0);
}

}  // namespace

namespace {

// One kernel of a layer on the whole GPU (catalog_model.hpp, "Roofline"): its SMs busy for
// `busy` seconds (max(t_compute, t_latency)), its memory phase `memory` seconds, `fixed` seconds
// outside the roofline (a collective's latency), and its grid.
struct KernelTiming {
  double busy = 0;
  double memory = 0;
  double fixed = 0;
  double throughput_share = 0;  // tau of `busy` (contention law 2)
  std::int64_t blocks = 1;
  int bps = 0;
  BlockFootprint block;  // what one block holds of an SM (0 = unknown: whole-SM residency)
  std::string what;
};

// A GEMM: the (tile, split) chosen for the library's SMs, timed on the whole GPU, and with
// split-K its reduction kernel.
void gemm_kernels(const LayerWork& layer, const KernelFamilies& families, const DeviceProfile& gpu,
                  double peak, int library_sms, LayerKernels& out) {
  if (!(peak > 0)) throw std::invalid_argument("no tensor throughput");
  const int sms = gpu.sms;
  const double bandwidth = hbm_bandwidth(gpu);
  // Chosen for the device the library runs on, timed on the whole GPU.
  const GemmChoice chosen = choose_gemm(layer, families, gpu, peak, library_sms);
  const GemmChoice whole =
      time_gemm(layer, chosen.tile, chosen.split, chosen.serial, families, gpu, peak, gpu.sms);
  const std::string what = "gemm " + std::to_string(chosen.tile.m) + "x" +
                           std::to_string(chosen.tile.n) +
                           (chosen.split > 1 ? " split-K " + std::to_string(chosen.split) : "") +
                           (chosen.serial ? " serial" : "") +
                           (families.fixed_gemm ? " " + families.fixed_gemm->name : "");
  KernelSpec spec = fixed_kernel(layer.name, std::max(whole.t_latency, whole.t_memory),
                                 whole.t_latency, whole.t_memory);
  spec.working_set = static_cast<std::int64_t>(gemm_reread_bytes(layer, chosen.tile));
  spec.sm_throughput_share = whole.throughput_share;
  spec.tensor_flops = fp16_tensor_flops(layer);
  set_kernel_grid(spec, whole.blocks, whole.blocks_per_sm, sms,
                  footprint(chosen.tile.threads, chosen.tile.registers,
                            static_cast<double>(chosen.tile.shared_memory)));
  out.kernels.push_back(spec);
  out.details.push_back(what);
  if (chosen.split > 1 && !chosen.serial) {
    const double outputs = static_cast<double>(layer.count) * static_cast<double>(layer.m) *
                           static_cast<double>(layer.n);
    const double dt = layer.element_bytes > 0 ? layer.element_bytes : 2;
    const Reduction r = split_k_reduction(outputs, chosen.split, dt, families, gpu, sms, bandwidth);
    KernelSpec reduce =
        fixed_kernel(layer.name + ".splitk_reduce", r.duration(), r.t_floor, r.t_memory);
    reduce.sm_throughput_share = r.throughput_share;
    set_kernel_grid(reduce, r.blocks, r.blocks_per_sm, sms, elementwise_footprint(families));
    out.kernels.push_back(reduce);
    out.details.push_back("split-K reduction of " + std::to_string(chosen.split) + " partials");
  }
}

// A fused attention kernel: tensor work at the attention efficiency, the latency floor of its
// key loop, its Q, K, V and O traffic.
KernelTiming attention_timing(const LayerWork& layer, const KernelFamilies& families,
                              const DeviceProfile& gpu, double peak) {
  if (!(peak > 0)) throw std::invalid_argument("no tensor throughput");
  const int sms = gpu.sms;
  const MemoryLatency& latency = families.latency(gpu.name);
  KernelTiming t;
  // Attention grid (catalog_model.hpp): a tiled kernel runs block_rows query rows per block; a
  // per-head kernel (layer.block_rows = L_q) one block per (batch, head) holding K and V of the
  // whole sequence and a block_rows-row Q tile in shared memory, or, on a GPU whose blocks cannot
  // hold that (100 KiB GA10x / Ada SMs), the plugin's compact variant holding K and the Q tile.
  // A GPU whose blocks cannot hold either has no such kernel and computes the attention over the
  // tiled grid.
  const double tile_rows = families.attention_block_rows.value;
  const double dt_in = layer.element_bytes > 0 ? layer.element_bytes : 2;
  double shared = families.attention_shared_memory.value;
  std::int64_t block_rows = static_cast<std::int64_t>(tile_rows);
  if (layer.block_rows > 0) {
    const double per_head_shared =
        per_head_attention_block_shared_memory(gpu.sm_limits, layer.n, layer.k, dt_in, tile_rows);
    if (per_head_shared > 0) {
      block_rows = layer.block_rows;
      shared = per_head_shared;
    }
  }
  t.blocks = layer.count * ceil_div(layer.m, block_rows);
  t.bps = shape_blocks_per_sm(gpu.sm_limits, families.attention_threads.value,
                              families.attention_registers.value, shared);
  t.block = footprint(families.attention_threads.value, families.attention_registers.value, shared);
  const double rate = families.attention_efficiency.value * peak;
  const double t_compute = layer.flops / rate * busiest_share(t.blocks, sms);
  // Each block iterates over the keys, block_cols at a time, the next K/V tile in flight.
  const double iterations = static_cast<double>(
      ceil_div(layer.n, static_cast<std::int64_t>(families.attention_block_cols.value)));
  const double block_compute = layer.flops / static_cast<double>(t.blocks) / (rate / sms);
  // Before the loop the Q tile and the first K and V tiles, after it the O tile (through
  // the SM's share of L2, as a GEMM's fill and epilogue).
  const auto rows = static_cast<double>(block_rows);
  const double cols = families.attention_block_cols.value;
  const double dt = layer.element_bytes > 0 ? layer.element_bytes : 2;
  BlockPath path;
  path.iterations = iterations;
  path.block_compute = block_compute;
  path.iteration_latency = latency.dram.value / (families.attention_stages.value - 1);
  path.fill = latency.dram.value + block_round_seconds(gpu);
  path.fill_per_block =
      (rows + 2 * cols) * static_cast<double>(layer.k) * dt / sm_l2_bandwidth(gpu);
  path.epilogue = latency.l2.value;
  path.epilogue_per_block = rows * static_cast<double>(layer.k) * dt / sm_l2_bandwidth(gpu);
  const double t_latency = critical_path(ceil_div(t.blocks, sms), t.bps, path);
  t.busy = std::max(t_compute, t_latency);
  // The tensor work alone (t_compute >= t_latency) is all per block.
  t.throughput_share =
      t_compute >= t_latency ? 1.0 : throughput_share(ceil_div(t.blocks, sms), t.bps, path);
  t.memory = layer.bytes / grid_bandwidth(hbm_bandwidth(gpu), t.blocks, sms, gpu);
  t.what = layer.backward ? "fused attention backward" : "fused attention";
  return t;
}

// An elementwise (or normalisation) kernel: fp32 work, one round trip per round of resident
// blocks, its reads and writes.
KernelTiming elementwise_timing(const LayerWork& layer, const KernelFamilies& families,
                                const DeviceProfile& gpu) {
  if (!(gpu.compute.fp32 > 0)) throw std::invalid_argument("no fp32 throughput");
  const int sms = gpu.sms;
  KernelTiming t;
  const auto per_block = static_cast<std::int64_t>(families.elementwise_threads.value *
                                                   families.elementwise_items.value);
  t.blocks = std::max<std::int64_t>(1, ceil_div(layer.elements, per_block));
  t.bps = shape_blocks_per_sm(gpu.sm_limits, families.elementwise_threads.value,
                              families.elementwise_registers.value, 0);
  t.block = elementwise_footprint(families);
  const double t_compute = layer.flops / gpu.compute.fp32 * busiest_share(t.blocks, sms);
  const double block_compute =
      layer.flops / static_cast<double>(t.blocks) / (gpu.compute.fp32 / sms);
  const Floor floor = elementwise_floor(t.blocks, t.bps, sms, block_compute,
                                        families.latency(gpu.name), block_round_seconds(gpu));
  t.busy = std::max(t_compute, floor.seconds);
  t.throughput_share = t_compute >= floor.seconds ? 1.0 : floor.throughput_share;
  t.memory = layer.bytes / grid_bandwidth(hbm_bandwidth(gpu), t.blocks, sms, gpu);
  t.what = "elementwise";
  return t;
}

// An NCCL ring all-reduce of `collective_gpus` GPUs (catalog_model.hpp, "Collective").
KernelTiming collective_timing(const LayerWork& layer, const KernelFamilies& families,
                               const DeviceProfile& gpu, double bus_bandwidth,
                               int collective_gpus) {
  KernelTiming t;
  const double bus = bus_bandwidth > 0 ? bus_bandwidth : families.collective_bus_bandwidth.value;
  const double n = std::max(1, collective_gpus);
  t.memory = 2.0 * (n - 1) / n * layer.bytes / bus;
  t.fixed =
      families.collective_latency.value + 2.0 * (n - 1) * families.collective_latency_per_hop.value;
  t.blocks = static_cast<std::int64_t>(families.collective_blocks.value);
  t.bps = shape_blocks_per_sm(gpu.sm_limits, families.collective_threads.value, 0, 0);
  t.what = "nccl ring all-reduce";
  return t;
}

}  // namespace

LayerKernels layer_kernels(const LayerWork& layer, const KernelFamilies& families,
                           const DeviceProfile& gpu, double peak, double bus_bandwidth,
                           int collective_gpus, int library_sms) {
  LayerKernels out;
  KernelTiming t;
  switch (layer.kind) {
    case LayerWork::Kind::gemm:
      gemm_kernels(layer, families, gpu, peak, library_sms, out);
      return out;
    case LayerWork::Kind::attention:
      t = attention_timing(layer, families, gpu, peak);
      break;
    case LayerWork::Kind::elementwise:
      t = elementwise_timing(layer, families, gpu);
      break;
    case LayerWork::Kind::collective:
      t = collective_timing(layer, families, gpu, bus_bandwidth, collective_gpus);
      break;
  }
  KernelSpec spec =
      fixed_kernel(layer.name, std::max(t.busy, t.memory) + t.fixed, t.busy, t.memory + t.fixed);
  if (layer.kind == LayerWork::Kind::attention) {
    spec.working_set = static_cast<std::int64_t>(layer.bytes);
    spec.tensor_flops = fp16_tensor_flops(layer);
  }
  if (layer.kind == LayerWork::Kind::collective) {
    spec.collective = true;
    const GridShape grid = grid_shape(t.blocks, t.bps, gpu.sms);
    spec.sm_fraction = grid.sm_fraction;
    spec.waves = grid.waves;
  } else {
    set_kernel_grid(spec, t.blocks, t.bps, gpu.sms, t.block);
    spec.sm_throughput_share = t.throughput_share;
  }
  out.kernels.push_back(spec);
  out.details.push_back(t.what);
  return out;
}

KernelSpec roofline_kernel(const LayerWork& layer, const KernelFamilies& families,
                           const DeviceProfile& gpu, double peak, double bus_bandwidth,
                           int collective_gpus, int library_sms, std::string* detail) {
  LayerKernels k =
      layer_kernels(layer, families, gpu, peak, bus_bandwidth, collective_gpus, library_sms);
  if (detail != nullptr) *detail = k.details.front();
  return k.kernels.front();
}

}  // namespace gpumux
