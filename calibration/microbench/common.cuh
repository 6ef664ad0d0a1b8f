// Shared helpers of the gpumux calibration microbenchmarks (header-only; CUDA C++17).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>

#define MB_CHECK(call)                                                                    \
  do {                                                                                    \
    cudaError_t mb_err_ = (call);                                                         \
    if (mb_err_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,      \
                   cudaGetErrorString(mb_err_), static_cast<int>(mb_err_));               \
      std::exit(3);                                                                       \
    }                                                                                     \
  } while (0)

namespace mb {

// %globaltimer: the GPU-wide nanosecond timer. Its update granularity depends on the GPU
// (1 us on some parts, 32 ns on others); the probes measure and report it.
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

inline long long host_ns() {  // CLOCK_MONOTONIC, ns
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// --key value arguments (and bare --flag = "1"); positional arguments are ignored.
struct Args {
  std::map<std::string, std::string> kv;
  Args(int argc, char** argv, int first) {
    for (int i = first; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0) continue;
      a = a.substr(2);
      if (i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0) {
        kv[a] = argv[++i];
      } else {
        kv[a] = "1";
      }
    }
  }
  bool has(const std::string& k) const { return kv.count(k) != 0; }
  std::string str(const std::string& k, const std::string& def) const {
    auto it = kv.find(k);
    return it == kv.end() ? def : it->second;
  }
  long long num(const std::string& k, long long def) const {
    auto it = kv.find(k);
    return it == kv.end() ? def : std::strtoll(it->second.c_str(), nullptr, 10);
  }
};

}  // namespace mb
