// sm_bandwidth_probe: HBM read bandwidth of a streaming kernel confined to N SMs, for the per-SM
// ceiling of the contention law (models/gpu/contention_law.hpp, law 2; profile key
// `sm_bandwidth:`).
//
//   sm_bandwidth_probe [--bytes 2147483648] [--threads 1024] [--repeats 5] --out FILE.csv
//
// For N = 1, 2, 4, ... up to every SM (and the SM count itself), launches N blocks that each
// need more than half of an SM's shared memory, so no two share an SM: exactly N SMs run it.
// Every thread streams 16-byte loads (4 independent loads in flight per iteration) over a
// buffer much larger than L2, grid-strided, and folds them into a sum written once (so nothing
// is optimised away). Bandwidth = bytes read / kernel time (cudaEvent), best of --repeats.
// Output: sms,threads,bytes,best_ns,gb_per_s,gb_per_s_per_sm (one row per N). The per-SM
// ceiling is the slope where bandwidth still grows linearly with N (small N); the plateau is
// the HBM peak. Nothing here changes any GPU setting.
#include <algorithm>
#include <vector>

#include "common.cuh"

namespace {

__global__ void stream_read(const float4* __restrict__ data, std::size_t n, float* out) {
  extern __shared__ float pad[];  // only reserves the SM's shared memory
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float4 acc = make_float4(0, 0, 0, 0);
  for (; i + 3 * stride < n; i += 4 * stride) {
    const float4 a = data[i], b = data[i + stride], c = data[i + 2 * stride],
                 d = data[i + 3 * stride];
    acc.x += a.x + b.x + c.x + d.x;
    acc.y += a.y + b.y + c.y + d.y;
    acc.z += a.z + b.z + c.z + d.z;
    acc.w += a.w + b.w + c.w + d.w;
  }
  for (; i < n; i += stride) acc.x += data[i].x;
  if (threadIdx.x == 0) pad[0] = acc.x;
  if (acc.x + acc.y + acc.z + acc.w == -1.0f) out[0] = pad[0];  // never true for our data
}

}  // namespace

int main(int argc, char** argv) {
  const mb::Args args(argc, argv, 1);
  const std::size_t bytes = static_cast<std::size_t>(args.num("bytes", 2LL << 30));
  const int threads = static_cast<int>(args.num("threads", 1024));
  const int repeats = static_cast<int>(args.num("repeats", 5));
  const std::string out_path = args.str("out", "sm_bandwidth.csv");
  cudaDeviceProp prop{};
  MB_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  // More than half of the SM's shared memory per block: one block per SM.
  const std::size_t shared = prop.sharedMemPerMultiprocessor / 2 + 1024;
  MB_CHECK(cudaFuncSetAttribute(stream_read, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(std::min(shared, prop.sharedMemPerBlockOptin))));
  const std::size_t n = bytes / sizeof(float4);
  float4* data = nullptr;
  float* out = nullptr;
  MB_CHECK(cudaMalloc(&data, n * sizeof(float4)));
  MB_CHECK(cudaMalloc(&out, sizeof(float)));
  MB_CHECK(cudaMemset(data, 0, n * sizeof(float4)));
  std::vector<int> counts;
  for (int c = 1; c < sms; c *= 2) counts.push_back(c);
  counts.push_back(sms);
  cudaEvent_t start, stop;
  MB_CHECK(cudaEventCreate(&start));
  MB_CHECK(cudaEventCreate(&stop));
  FILE* f = std::fopen(out_path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", out_path.c_str());
    return 2;
  }
  std::fprintf(f, "sms,threads,bytes,best_ns,gb_per_s,gb_per_s_per_sm\n");
  for (const int c : counts) {
    const std::size_t smem = std::min(shared, prop.sharedMemPerBlockOptin);
    stream_read<<<c, threads, smem>>>(data, n, out);  // warm-up
    MB_CHECK(cudaGetLastError());
    MB_CHECK(cudaDeviceSynchronize());
    float best_ms = 1e30f;
    for (int r = 0; r < repeats; ++r) {
      MB_CHECK(cudaEventRecord(start));
      stream_read<<<c, threads, smem>>>(data, n, out);
      MB_CHECK(cudaEventRecord(stop));
      MB_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      MB_CHECK(cudaEventElapsedTime(&ms, start, stop));
      best_ms = std::min(best_ms, ms);
    }
    const double gbps = static_cast<double>(n * sizeof(float4)) / (best_ms * 1e6);
    std::fprintf(f, "%d,%d,%zu,%.0f,%.2f,%.3f\n", c, threads, n * sizeof(float4), best_ms * 1e6,
                 gbps, gbps / c);
    std::printf("%3d SMs: %8.1f GB/s (%.2f per SM)\n", c, gbps, gbps / c);
  }
  std::fclose(f);
  MB_CHECK(cudaFree(data));
  MB_CHECK(cudaFree(out));
  return 0;
}
