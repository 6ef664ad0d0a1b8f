// launch_probe: kernel launch overhead (stream and CUDA graph) and DRAM bandwidth.
//
//   launch_probe --out launch.csv --device-out device.csv [--bw-mib 2048] [--reps 20]
//                [--kernels 20000] [--warmup-ms 1500]
//
// launch.csv: metric,param,value,unit
//   launch_stream_us      GPU time per empty kernel, N launched back to back on one stream
//                         (cudaEvent around the batch; median of 5 batches) = the gap the
//                         simulator's launch_overhead stands for
//   launch_host_call_us   host CPU time per cudaLaunchKernel call in those batches
//   launch_graph_us       GPU time per kernel node of a graph of 1000 empty kernels
//   launch_sync_p50_us / launch_sync_p99_us   host round trip of launch + cudaStreamSynchronize
//   bw_read_GBps / bw_write_GBps / bw_copy_GBps   DRAM bandwidth over --bw-mib MiB buffers
//                         (copy counts bytes read + written), best and median of --reps
// device.csv: key,value (name, SMs, compute capability, clocks, versions, compute mode, ...).
// Nothing here changes any GPU setting.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "common.cuh"

namespace {

__global__ void empty_kernel() {}

// Read: 16-byte loads, grid-stride, four independent loads in flight per thread.
__global__ void read_kernel(const ulonglong2* __restrict__ in, std::size_t n,
                            unsigned long long* sink) {
  unsigned long long acc = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const ulonglong2 a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
    acc ^= a.x ^ a.y ^ b.x ^ b.y ^ c.x ^ c.y ^ d.x ^ d.y;
  }
  for (; i < n; i += stride) acc ^= in[i].x ^ in[i].y;
  if (acc == 0x5a5a5a5a5a5a5a5aULL) *sink = acc;  // practically never true; keeps the loads
}

__global__ void write_kernel(ulonglong2* __restrict__ out, std::size_t n, unsigned long long v) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = make_ulonglong2(v, v ^ i);
  }
}

__global__ void copy_kernel(const ulonglong2* __restrict__ in, ulonglong2* __restrict__ out,
                            std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = in[i];
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t k = std::min(v.size() - 1, static_cast<std::size_t>(q * (v.size() - 1) + 0.5));
  return v[k];
}

struct Csv {
  std::ofstream f;
  explicit Csv(const std::string& path) : f(path) { f << "metric,param,value,unit\n"; }
  void row(const std::string& metric, const std::string& param, double value,
           const std::string& unit) {
    f << metric << ',' << param << ',' << value << ',' << unit << '\n';
    f.flush();
    std::fprintf(stderr, "launch_probe: %-22s %-24s %12.4f %s\n", metric.c_str(), param.c_str(),
                 value, unit.c_str());
  }
};

int attr(cudaDeviceAttr a) {
  int v = -1;
  if (cudaDeviceGetAttribute(&v, a, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return v;
}

void write_device(const std::string& path) {
  cudaDeviceProp p{};
  MB_CHECK(cudaGetDeviceProperties(&p, 0));
  int drv = 0, rt = 0;
  MB_CHECK(cudaDriverGetVersion(&drv));
  MB_CHECK(cudaRuntimeGetVersion(&rt));
  std::ofstream f(path);
  f << "key,value\n";
  f << "name," << p.name << '\n';
  f << "compute_capability," << p.major << '.' << p.minor << '\n';
  f << "sm_count," << p.multiProcessorCount << '\n';
  f << "total_global_mem_bytes," << p.totalGlobalMem << '\n';
  f << "l2_cache_bytes," << p.l2CacheSize << '\n';
  f << "memory_bus_width_bits," << p.memoryBusWidth << '\n';
  f << "sm_clock_max_khz," << attr(cudaDevAttrClockRate) << '\n';
  f << "mem_clock_max_khz," << attr(cudaDevAttrMemoryClockRate) << '\n';
  f << "compute_mode," << attr(cudaDevAttrComputeMode) << '\n';  // 0 = default (shared)
  f << "compute_preemption_supported," << attr(cudaDevAttrComputePreemptionSupported) << '\n';
  f << "cuda_driver_version," << drv << '\n';
  f << "cuda_runtime_version," << rt << '\n';
  f << "pci_bus_id," << p.pciBusID << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  const mb::Args a(argc, argv, 1);
  const std::string out = a.str("out", "launch.csv");
  const std::string dev_out = a.str("device-out", "device.csv");
  const int nk = static_cast<int>(a.num("kernels", 20000));
  const int reps = static_cast<int>(std::max<long long>(a.num("reps", 20), 1));
  const std::size_t bytes = static_cast<std::size_t>(a.num("bw-mib", 2048)) << 20;
  const long long warm_ns = a.num("warmup-ms", 1500) * 1000000LL;

  MB_CHECK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
  MB_CHECK(cudaSetDevice(0));
  write_device(dev_out);
  Csv csv(out);

  const std::size_t n = bytes / sizeof(ulonglong2);
  ulonglong2 *buf_a = nullptr, *buf_b = nullptr;
  unsigned long long* sink = nullptr;
  MB_CHECK(cudaMalloc(&buf_a, bytes));
  MB_CHECK(cudaMalloc(&buf_b, bytes));
  MB_CHECK(cudaMalloc(&sink, sizeof(unsigned long long)));
  cudaStream_t s;
  MB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  MB_CHECK(cudaEventCreate(&e0));
  MB_CHECK(cudaEventCreate(&e1));
  const int sms = attr(cudaDevAttrMultiProcessorCount);
  const int bw_blocks = std::max(sms, 1) * 8, bw_threads = 512;

  // Warm-up: the clocks idle low (345 MHz SM on an idle H200) until the GPU is busy.
  const long long t_warm = mb::host_ns();
  write_kernel<<<bw_blocks, bw_threads, 0, s>>>(buf_a, n, 1);
  MB_CHECK(cudaStreamSynchronize(s));
  while (mb::host_ns() - t_warm < warm_ns) {
    copy_kernel<<<bw_blocks, bw_threads, 0, s>>>(buf_a, buf_b, n);
    MB_CHECK(cudaStreamSynchronize(s));
  }
  MB_CHECK(cudaGetLastError());

  // --- launch overhead, stream
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 32, 0, s>>>();
  MB_CHECK(cudaStreamSynchronize(s));
  std::vector<double> per_kernel, host_call;
  for (int r = 0; r < 5; ++r) {
    MB_CHECK(cudaEventRecord(e0, s));
    const long long h0 = mb::host_ns();
    for (int i = 0; i < nk; ++i) empty_kernel<<<1, 32, 0, s>>>();
    const long long h1 = mb::host_ns();
    MB_CHECK(cudaEventRecord(e1, s));
    MB_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    MB_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    per_kernel.push_back(ms * 1000.0 / nk);
    host_call.push_back((h1 - h0) / 1000.0 / nk);
  }
  MB_CHECK(cudaGetLastError());
  const std::string np = "n=" + std::to_string(nk) + "x5";
  csv.row("launch_stream_us", np, median(per_kernel), "us");
  csv.row("launch_stream_min_us", np, *std::min_element(per_kernel.begin(), per_kernel.end()),
          "us");
  csv.row("launch_host_call_us", np, median(host_call), "us");

  // --- launch overhead, graph of 1000 empty kernels
  {
    const int gk = 1000;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    MB_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < gk; ++i) empty_kernel<<<1, 32, 0, s>>>();
    MB_CHECK(cudaStreamEndCapture(s, &g));
    MB_CHECK(cudaGraphInstantiate(&ge, g, 0));
    MB_CHECK(cudaGraphLaunch(ge, s));
    MB_CHECK(cudaStreamSynchronize(s));
    std::vector<double> gper;
    for (int r = 0; r < 10; ++r) {
      MB_CHECK(cudaEventRecord(e0, s));
      MB_CHECK(cudaGraphLaunch(ge, s));
      MB_CHECK(cudaEventRecord(e1, s));
      MB_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      MB_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      gper.push_back(ms * 1000.0 / gk);
    }
    csv.row("launch_graph_us", "n=1000x10", median(gper), "us");
    MB_CHECK(cudaGraphExecDestroy(ge));
    MB_CHECK(cudaGraphDestroy(g));
  }

  // --- launch + synchronize round trip (host view)
  {
    std::vector<double> rt;
    for (int i = 0; i < 2000; ++i) {
      const long long h0 = mb::host_ns();
      empty_kernel<<<1, 32, 0, s>>>();
      MB_CHECK(cudaStreamSynchronize(s));
      rt.push_back((mb::host_ns() - h0) / 1000.0);
    }
    csv.row("launch_sync_p50_us", "n=2000", percentile(rt, 0.5), "us");
    csv.row("launch_sync_p99_us", "n=2000", percentile(rt, 0.99), "us");
  }

  // --- DRAM bandwidth
  auto time_it = [&](auto launch, double moved_bytes, const char* metric) {
    std::vector<double> gbps;
    launch();
    MB_CHECK(cudaStreamSynchronize(s));
    for (int r = 0; r < reps; ++r) {
      MB_CHECK(cudaEventRecord(e0, s));
      launch();
      MB_CHECK(cudaEventRecord(e1, s));
      MB_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      MB_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      gbps.push_back(moved_bytes / (ms * 1e-3) / 1e9);
    }
    MB_CHECK(cudaGetLastError());
    const std::string p = "bytes=" + std::to_string(bytes) + ",reps=" + std::to_string(reps);
    csv.row(std::string(metric), p, *std::max_element(gbps.begin(), gbps.end()), "GB/s");
    csv.row(std::string(metric) + "_median", p, median(gbps), "GB/s");
  };
  const double b = static_cast<double>(bytes);
  time_it([&] { read_kernel<<<bw_blocks, bw_threads, 0, s>>>(buf_a, n, sink); }, b, "bw_read_GBps");
  time_it([&] { write_kernel<<<bw_blocks, bw_threads, 0, s>>>(buf_b, n, 7); }, b, "bw_write_GBps");
  time_it([&] { copy_kernel<<<bw_blocks, bw_threads, 0, s>>>(buf_a, buf_b, n); }, 2 * b,
          "bw_copy_GBps");

  MB_CHECK(cudaFree(buf_a));
  MB_CHECK(cudaFree(buf_b));
  MB_CHECK(cudaFree(sink));
  return 0;
}
