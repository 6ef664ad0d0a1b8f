// co_dispatch_probe: how the block scheduler hands SMs to a client of short blocks while another
// client's kernel of long blocks fills every SM (the MPS question of docs/strategies.md, "MPS
// beside a PyTorch trainer": does a server kernel wait for a round of the trainer's blocks and
// then run at full width, as gpumux's law 1b says, or trickle onto slots as single trainer
// blocks retire?).
//
//   co_dispatch_probe --role hog   [--hog-block-us 300] [--hog-waves 8] [--duration-ms 4000]
//                                  [--log-kernels 2] --out PREFIX
//       Kernels of 2 x SMs x waves blocks of 1024 threads (two fill an SM's 2048 threads, so no
//       other block fits beside them), each block spinning --hog-block-us on %globaltimer, back
//       to back for --duration-ms. Logs every block of its first --log-kernels kernels.
//   co_dispatch_probe --role probe [--probe-blocks 0] [--probe-block-us 10] [--kernels 200]
//                                  [--gap-us 100] [--delay-ms 500] --out PREFIX
//       After --delay-ms, --kernels kernels of --probe-blocks blocks (0: 2 x SMs) of 128
//       threads, each block spinning --probe-block-us, one at a time (synchronised), --gap-us
//       of host sleep between them. Logs every block.
//   co_dispatch_probe --role streams [the options of both] --out PREFIX
//       Both in one process, on two streams: the control whose order the sources agree on
//       (equally urgent kernels of one process are dispatched in launch order).
// Run the two roles as two processes under MPS (nvidia-cuda-mps-control -d started by whoever
// owns the GPU), the hog first; without MPS they time-slice instead. Alone (probe only) is the
// control of the probe's own kernel time.
// Output: PREFIX_hog.csv and/or PREFIX_probe.csv: kernel,block,smid,start_ns,end_ns, and
// PREFIX_hog_kernels.csv: kernel,start_ns,end_ns (every hog kernel's span) (%globaltimer, one
// GPU-wide clock, so the files share a timeline). A probe kernel's span
// is max(end) - min(start); its SMs over time show whether it waited for a round or trickled.
// Nothing here changes any GPU setting.
#include <unistd.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "common.cuh"

namespace {

struct BlockLog {
  unsigned long long start, end;
  unsigned int smid, pad;
};

__device__ __forceinline__ unsigned int smid() {
  unsigned int id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// Every block spins `spin_ns` from its own start; thread 0 logs it when `log` is not null and
// widens the kernel's span [*first, *last] when `first` is not null.
__global__ void spin_blocks(unsigned long long spin_ns, BlockLog* log, unsigned long long* first,
                            unsigned long long* last) {
  const unsigned long long t0 = mb::globaltimer();
  while (mb::globaltimer() - t0 < spin_ns) {
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  const unsigned long long t1 = mb::globaltimer();
  if (log != nullptr) log[blockIdx.x] = BlockLog{t0, t1, smid(), 0};
  if (first != nullptr) {
    atomicMin(first, t0);
    atomicMax(last, t1);
  }
}

void write_logs(const std::string& path, const std::vector<std::vector<BlockLog>>& kernels) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(2);
  }
  std::fprintf(f, "kernel,block,smid,start_ns,end_ns\n");
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    for (std::size_t b = 0; b < kernels[k].size(); ++b) {
      const BlockLog& l = kernels[k][b];
      std::fprintf(f, "%zu,%zu,%u,%llu,%llu\n", k, b, l.smid, l.start, l.end);
    }
  }
  std::fclose(f);
}

// Launches hog kernels on `stream` for `duration_ms`; logs the blocks of the first `log_kernels`.
void run_hog(const mb::Args& args, int sms, cudaStream_t stream, const std::string& prefix) {
  const int blocks = 2 * sms * static_cast<int>(args.num("hog-waves", 8));
  const unsigned long long spin =
      1000ULL * static_cast<unsigned long long>(args.num("hog-block-us", 300));
  const long long duration_ns = 1000000LL * args.num("duration-ms", 4000);
  const int log_kernels = static_cast<int>(args.num("log-kernels", 2));
  BlockLog* log = nullptr;
  MB_CHECK(cudaMalloc(&log, sizeof(BlockLog) * blocks * std::max(1, log_kernels)));
  // Every kernel's span (first block start, last block end), for the probe's analysis.
  const int max_kernels = 1 << 20;
  unsigned long long *first = nullptr, *last = nullptr;
  MB_CHECK(cudaMalloc(&first, sizeof(unsigned long long) * max_kernels));
  MB_CHECK(cudaMalloc(&last, sizeof(unsigned long long) * max_kernels));
  MB_CHECK(cudaMemset(first, 0xff, sizeof(unsigned long long) * max_kernels));
  MB_CHECK(cudaMemset(last, 0, sizeof(unsigned long long) * max_kernels));
  const long long t0 = mb::host_ns();
  int launched = 0;
  while (mb::host_ns() - t0 < duration_ns && launched < max_kernels) {
    BlockLog* slot =
        launched < log_kernels ? log + static_cast<std::size_t>(launched) * blocks : nullptr;
    spin_blocks<<<blocks, 1024, 0, stream>>>(spin, slot, first + launched, last + launched);
    MB_CHECK(cudaGetLastError());
    ++launched;
    MB_CHECK(cudaStreamSynchronize(stream));
  }
  std::vector<unsigned long long> firsts(launched), lasts(launched);
  MB_CHECK(cudaMemcpy(firsts.data(), first, sizeof(unsigned long long) * launched,
                      cudaMemcpyDeviceToHost));
  MB_CHECK(cudaMemcpy(lasts.data(), last, sizeof(unsigned long long) * launched,
                      cudaMemcpyDeviceToHost));
  FILE* spans = std::fopen((prefix + "_hog_kernels.csv").c_str(), "w");
  if (spans == nullptr) {
    std::fprintf(stderr, "cannot write %s_hog_kernels.csv\n", prefix.c_str());
    std::exit(2);
  }
  std::fprintf(spans, "kernel,start_ns,end_ns\n");
  for (int k = 0; k < launched; ++k) std::fprintf(spans, "%d,%llu,%llu\n", k, firsts[k], lasts[k]);
  std::fclose(spans);
  MB_CHECK(cudaFree(first));
  MB_CHECK(cudaFree(last));
  std::vector<std::vector<BlockLog>> out(std::min(launched, log_kernels),
                                         std::vector<BlockLog>(blocks));
  for (std::size_t k = 0; k < out.size(); ++k) {
    MB_CHECK(cudaMemcpy(out[k].data(), log + k * blocks, sizeof(BlockLog) * blocks,
                        cudaMemcpyDeviceToHost));
  }
  write_logs(prefix + "_hog.csv", out);
  MB_CHECK(cudaFree(log));
}

// Launches the probe's short kernels one at a time on `stream`, each block logged.
void run_probe(const mb::Args& args, int sms, cudaStream_t stream, const std::string& prefix) {
  const int asked = static_cast<int>(args.num("probe-blocks", 0));
  const int blocks = asked > 0 ? asked : 2 * sms;
  const unsigned long long spin =
      1000ULL * static_cast<unsigned long long>(args.num("probe-block-us", 10));
  const int kernels = static_cast<int>(args.num("kernels", 200));
  const long long gap_us = args.num("gap-us", 100);
  usleep(static_cast<useconds_t>(1000 * args.num("delay-ms", 500)));
  BlockLog* log = nullptr;
  MB_CHECK(cudaMalloc(&log, sizeof(BlockLog) * blocks * kernels));
  for (int k = 0; k < kernels; ++k) {
    spin_blocks<<<blocks, 128, 0, stream>>>(spin, log + static_cast<std::size_t>(k) * blocks,
                                            nullptr, nullptr);
    MB_CHECK(cudaGetLastError());
    MB_CHECK(cudaStreamSynchronize(stream));
    usleep(static_cast<useconds_t>(gap_us));
  }
  std::vector<std::vector<BlockLog>> out(kernels, std::vector<BlockLog>(blocks));
  for (int k = 0; k < kernels; ++k) {
    MB_CHECK(cudaMemcpy(out[k].data(), log + static_cast<std::size_t>(k) * blocks,
                        sizeof(BlockLog) * blocks, cudaMemcpyDeviceToHost));
  }
  write_logs(prefix + "_probe.csv", out);
  MB_CHECK(cudaFree(log));
}

}  // namespace

int main(int argc, char** argv) {
  const mb::Args args(argc, argv, 1);
  const std::string role = args.str("role", "");
  const std::string prefix = args.str("out", "co_dispatch");
  if (role != "hog" && role != "probe" && role != "streams") {
    std::fprintf(stderr, "co_dispatch_probe: --role hog|probe|streams required\n");
    return 2;
  }
  cudaDeviceProp prop{};
  MB_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  if (prop.maxThreadsPerMultiProcessor != 2048) {
    std::fprintf(stderr,
                 "co_dispatch_probe: %d threads per SM; two 1024-thread hog blocks do "
                 "not fill an SM here\n",
                 prop.maxThreadsPerMultiProcessor);
  }
  cudaStream_t hog_stream, probe_stream;
  MB_CHECK(cudaStreamCreateWithFlags(&hog_stream, cudaStreamNonBlocking));
  MB_CHECK(cudaStreamCreateWithFlags(&probe_stream, cudaStreamNonBlocking));
  spin_blocks<<<1, 32>>>(1000, nullptr, nullptr,
                         nullptr);  // context and module load before any timing
  MB_CHECK(cudaDeviceSynchronize());
  if (role == "hog") run_hog(args, sms, hog_stream, prefix);
  if (role == "probe") run_probe(args, sms, probe_stream, prefix);
  if (role == "streams") {
    // One host thread per stream: each synchronises only its own stream.
    std::thread hog([&] { run_hog(args, sms, hog_stream, prefix); });
    run_probe(args, sms, probe_stream, prefix);
    hog.join();
  }
  MB_CHECK(cudaStreamDestroy(hog_stream));
  MB_CHECK(cudaStreamDestroy(probe_stream));
  return 0;
}
