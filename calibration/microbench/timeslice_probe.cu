// timeslice_probe: measures default CUDA time-slicing between processes (one CUDA context each).
//
//   timeslice_probe drive  --nproc N [--duration-ms 2000] [--threshold-ns 2000] [--blocks 0]
//                          [--threads 128] [--log-blocks 2] [--warmup-ms 300] --out PREFIX
//       N spinner processes (fork + exec of this binary), started together. Each runs one
//       persistent kernel (default: one block per SM) that reads %globaltimer in a tight loop
//       for --duration-ms and logs every jump larger than --threshold-ns between two
//       consecutive reads (= an interval during which the context was switched out).
//   timeslice_probe shortk --neighbours 0|1 [--duration-ms 3000] [--kernel-us 5]
//                          [--sleep-max-us 5000] [--sync 1] [--batch 32] --out PREFIX
//       One process submitting short kernels (synchronously, after a random sleep, or in
//       queued batches with --sync 0), beside one spinner (--neighbours 1) or alone (the
//       control). Each short kernel records its own %globaltimer start and end.
//   timeslice_probe resolution
//       Prints the %globaltimer tick (min nonzero delta between consecutive reads).
//
// Outputs (merged by the driver from the children's part files):
//   PREFIX_gaps.csv     process_id,block,gap_start_ns,gap_end_ns
//   PREFIX_meta.csv     one row per logged block of every spinner (see kMetaHeader)
//   PREFIX_kernels.csv  process_id,seq,batch,host_submit_ns,host_done_ns,gpu_start_ns,gpu_end_ns
// The driver itself makes no CUDA call before forking (CUDA state must not cross a fork).
// Nothing here changes any GPU setting. calibration/microbench/README.md explains the analysis.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common.cuh"

namespace {

constexpr const char* kGapsHeader = "process_id,block,gap_start_ns,gap_end_ns";
constexpr const char* kMetaHeader =
    "process_id,role,pid,block,kernel_start_ns,kernel_end_ns,reads,changes,min_delta_ns,"
    "backwards,gaps_seen,gaps_logged,grid_blocks,threads,threshold_ns,sm_count,clock_mhz";
constexpr const char* kKernelsHeader =
    "process_id,seq,batch,host_submit_ns,host_done_ns,gpu_start_ns,gpu_end_ns";

struct BlockStats {
  unsigned long long first, last, reads, changes, min_delta, backwards, gaps, cycles;
};

// Every thread of every block spins until its block's start + duration_ns; warp 0 of the
// first log_blocks blocks runs the logging loop instead, and its lane 0 writes the log. (The
// whole warp takes the logging branch: were lane 0 alone to take it, the warp could run the
// other lanes' spin loop to its end before lane 0's loop, and log nothing.) All lanes of a warp
// read the same %globaltimer value, so the loop's branches are warp-uniform.
__global__ void spin_kernel(unsigned long long duration_ns, unsigned long long threshold_ns,
                            unsigned log_blocks, unsigned cap, unsigned long long* log,
                            BlockStats* stats) {
  const unsigned long long t0 = mb::globaltimer();
  const unsigned long long end = t0 + duration_ns;
  if (threadIdx.x >= 32 || blockIdx.x >= log_blocks) {
    while (mb::globaltimer() < end) {
    }
    return;
  }
  const bool lane0 = threadIdx.x == 0;
  const long long c0 = clock64();
  unsigned long long* mine = log + 2ull * cap * blockIdx.x;
  unsigned long long prev = t0, reads = 0, changes = 0, mind = ~0ull, back = 0, n = 0;
  for (;;) {
    const unsigned long long now = mb::globaltimer();
    ++reads;
    if (now < prev) {
      ++back;
    } else if (now != prev) {
      const unsigned long long d = now - prev;
      ++changes;
      if (d < mind) mind = d;
      if (d > threshold_ns) {
        if (lane0 && n < cap) {
          mine[2 * n] = prev;
          mine[2 * n + 1] = now;
        }
        ++n;
      }
    }
    prev = now;
    if (now >= end) break;
  }
  const long long c1 = clock64();
  if (lane0)
    stats[blockIdx.x] = BlockStats{t0,   prev, reads, changes,
                                   mind, back, n,     static_cast<unsigned long long>(c1 - c0)};
}

// A short kernel: spins busy_ns, block 0 thread 0 records (start, end) at rec.
__global__ void short_kernel(unsigned long long busy_ns, unsigned long long* rec) {
  const unsigned long long t0 = mb::globaltimer();
  unsigned long long t = t0;
  while (t - t0 < busy_ns) t = mb::globaltimer();
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    rec[0] = t0;
    rec[1] = mb::globaltimer();
  }
}

__global__ void resolution_kernel(unsigned long long n, unsigned long long* out) {
  unsigned long long prev = mb::globaltimer(), first = prev, mind = ~0ull, changes = 0;
  for (unsigned long long i = 0; i < n; ++i) {
    const unsigned long long now = mb::globaltimer();
    if (now > prev) {
      ++changes;
      if (now - prev < mind) mind = now - prev;
    }
    prev = now;
  }
  out[0] = mind;
  out[1] = changes;
  out[2] = prev - first;
}

// ---------------------------------------------------------------- child side

void signal_ready(int fd) {
  if (fd < 0) return;
  const char c = 'r';
  if (write(fd, &c, 1) != 1) std::perror("timeslice_probe: ready pipe");
  close(fd);
}

bool wait_go(int fd) {
  if (fd < 0) return true;
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 120000) <= 0) return false;  // the driver died or never said go
  char c = 0;
  const bool ok = read(fd, &c, 1) == 1 && c == 'g';
  close(fd);
  return ok;
}

int sm_count() {
  int sms = 0;
  MB_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  return sms;
}

int child_spin(const mb::Args& a) {
  const int id = static_cast<int>(a.num("id", 0));
  const std::string prefix = a.str("out", "ts");
  const unsigned long long duration_ns = a.num("duration-ms", 2000) * 1000000ULL;
  const unsigned long long threshold_ns = a.num("threshold-ns", 2000);
  const int threads = static_cast<int>(a.num("threads", 128));
  const unsigned cap = static_cast<unsigned>(a.num("cap", 1 << 16));
  const long long warmup_ms = a.num("warmup-ms", 300);

  MB_CHECK(cudaSetDevice(0));
  MB_CHECK(cudaFree(nullptr));  // create the context now, before the start signal
  const int sms = sm_count();
  int blocks = static_cast<int>(a.num("blocks", 0));
  if (blocks <= 0) blocks = sms;
  const unsigned log_blocks = static_cast<unsigned>(
      std::min<long long>(std::max<long long>(a.num("log-blocks", 2), 1), blocks));

  unsigned long long* d_log = nullptr;
  BlockStats* d_stats = nullptr;
  MB_CHECK(cudaMalloc(&d_log, 2ull * cap * log_blocks * sizeof(unsigned long long)));
  MB_CHECK(cudaMalloc(&d_stats, log_blocks * sizeof(BlockStats)));

  // Warm-up: loads the module and lifts the clocks off idle (345 MHz on an idle H200).
  spin_kernel<<<blocks, threads>>>(warmup_ms * 1000000ULL, threshold_ns, log_blocks, cap, d_log,
                                   d_stats);
  MB_CHECK(cudaGetLastError());
  MB_CHECK(cudaDeviceSynchronize());

  signal_ready(static_cast<int>(a.num("ready-fd", -1)));
  if (!wait_go(static_cast<int>(a.num("go-fd", -1)))) {
    std::fprintf(stderr, "timeslice_probe[%d]: no start signal\n", id);
    return 4;
  }
  spin_kernel<<<blocks, threads>>>(duration_ns, threshold_ns, log_blocks, cap, d_log, d_stats);
  MB_CHECK(cudaGetLastError());
  MB_CHECK(cudaDeviceSynchronize());

  std::vector<unsigned long long> log(2ull * cap * log_blocks);
  std::vector<BlockStats> stats(log_blocks);
  MB_CHECK(cudaMemcpy(log.data(), d_log, log.size() * sizeof(unsigned long long),
                      cudaMemcpyDeviceToHost));
  MB_CHECK(
      cudaMemcpy(stats.data(), d_stats, stats.size() * sizeof(BlockStats), cudaMemcpyDeviceToHost));

  std::ofstream gaps(prefix + "_p" + std::to_string(id) + ".gaps.csv");
  std::ofstream meta(prefix + "_p" + std::to_string(id) + ".meta.csv");
  for (unsigned b = 0; b < log_blocks; ++b) {
    const BlockStats& s = stats[b];
    const unsigned long long logged = std::min<unsigned long long>(s.gaps, cap);
    for (unsigned long long i = 0; i < logged; ++i) {
      gaps << id << ',' << b << ',' << log[2ull * cap * b + 2 * i] << ','
           << log[2ull * cap * b + 2 * i + 1] << '\n';
    }
    // Effective SM clock while running = cycles / (run time); the run time excludes the gaps,
    // during which another context held the SM.
    unsigned long long gap_ns = 0;
    for (unsigned long long i = 0; i < logged; ++i) {
      gap_ns += log[2ull * cap * b + 2 * i + 1] - log[2ull * cap * b + 2 * i];
    }
    const double run_ns = static_cast<double>(s.last - s.first) - static_cast<double>(gap_ns);
    const double mhz = run_ns > 0 ? static_cast<double>(s.cycles) * 1000.0 / run_ns : 0.0;
    meta << id << ",spin," << getpid() << ',' << b << ',' << s.first << ',' << s.last << ','
         << s.reads << ',' << s.changes << ',' << (s.min_delta == ~0ull ? 0 : s.min_delta) << ','
         << s.backwards << ',' << s.gaps << ',' << logged << ',' << blocks << ',' << threads << ','
         << threshold_ns << ',' << sms << ',' << static_cast<long long>(mhz) << '\n';
  }
  std::fprintf(stderr,
               "timeslice_probe[%d]: spin %d x %d on %d SMs, block 0: %llu gaps, tick %llu ns\n",
               id, blocks, threads, sms, stats[0].gaps, stats[0].min_delta);
  return 0;
}

int child_short(const mb::Args& a) {
  const int id = static_cast<int>(a.num("id", 1));
  const std::string prefix = a.str("out", "sk");
  const long long duration_ns = a.num("duration-ms", 3000) * 1000000LL;
  const unsigned long long busy_ns = a.num("kernel-us", 5) * 1000ULL;
  const long long sleep_max_ns = a.num("sleep-max-us", 5000) * 1000LL;
  const long long start_delay_ns = a.num("start-delay-ms", 100) * 1000000LL;
  const bool sync = a.num("sync", 1) != 0;
  const int batch = sync ? 1 : static_cast<int>(std::max<long long>(a.num("batch", 32), 1));
  const int blocks = static_cast<int>(a.num("sk-blocks", 1));
  const int threads = static_cast<int>(a.num("sk-threads", 32));
  const int max_k = static_cast<int>(a.num("max-kernels", 200000));

  // Spin-wait synchronisation: the host sees completion without a sleep/wake-up delay.
  MB_CHECK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
  MB_CHECK(cudaSetDevice(0));
  MB_CHECK(cudaFree(nullptr));
  unsigned long long* d_rec = nullptr;
  MB_CHECK(cudaMalloc(&d_rec, 2ull * max_k * sizeof(unsigned long long)));
  MB_CHECK(cudaMemset(d_rec, 0, 2ull * max_k * sizeof(unsigned long long)));
  cudaStream_t stream;
  MB_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int i = 0; i < 200; ++i) short_kernel<<<blocks, threads, 0, stream>>>(busy_ns, d_rec);
  MB_CHECK(cudaStreamSynchronize(stream));

  signal_ready(static_cast<int>(a.num("ready-fd", -1)));
  if (!wait_go(static_cast<int>(a.num("go-fd", -1)))) {
    std::fprintf(stderr, "timeslice_probe[%d]: no start signal\n", id);
    return 4;
  }
  std::mt19937_64 rng(0x9e3779b97f4a7c15ULL + static_cast<unsigned long long>(id));
  std::uniform_int_distribution<long long> sleep_dist(0, std::max<long long>(sleep_max_ns, 0));
  struct Host {
    long long submit, done;
    int batch;
  };
  std::vector<Host> host;
  host.reserve(static_cast<std::size_t>(max_k));
  const long long t_begin = mb::host_ns() + start_delay_ns;
  while (mb::host_ns() < t_begin) usleep(1000);  // let the neighbour's kernel get going
  const long long t_end = t_begin + duration_ns;
  int seq = 0, nbatch = 0;
  while (mb::host_ns() < t_end && seq + batch <= max_k) {
    const long long s = sleep_dist(rng);
    if (s > 0) {
      const timespec ts{static_cast<time_t>(s / 1000000000LL), static_cast<long>(s % 1000000000LL)};
      nanosleep(&ts, nullptr);
    }
    const std::size_t first = host.size();
    for (int k = 0; k < batch; ++k) {
      host.push_back(Host{mb::host_ns(), 0, nbatch});
      short_kernel<<<blocks, threads, 0, stream>>>(busy_ns, d_rec + 2ull * (seq++));
    }
    MB_CHECK(cudaStreamSynchronize(stream));
    const long long done = mb::host_ns();
    for (std::size_t k = first; k < host.size(); ++k) host[k].done = done;
    ++nbatch;
  }
  MB_CHECK(cudaGetLastError());
  std::vector<unsigned long long> rec(2ull * seq);
  if (seq > 0) {
    MB_CHECK(cudaMemcpy(rec.data(), d_rec, rec.size() * sizeof(unsigned long long),
                        cudaMemcpyDeviceToHost));
  }
  std::ofstream out(prefix + "_p" + std::to_string(id) + ".kernels.csv");
  for (int i = 0; i < seq; ++i) {
    out << id << ',' << i << ',' << host[i].batch << ',' << host[i].submit << ',' << host[i].done
        << ',' << rec[2 * i] << ',' << rec[2 * i + 1] << '\n';
  }
  std::fprintf(stderr, "timeslice_probe[%d]: %d short kernels (%s, batch %d)\n", id, seq,
               sync ? "sync" : "queued", batch);
  return 0;
}

// ---------------------------------------------------------------- driver side

struct Child {
  pid_t pid = -1;
  int ready_r = -1, go_w = -1;
  int id = 0;
};

Child spawn(const std::vector<std::string>& args, int id) {
  int ready[2], go[2];
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) {
    std::perror("pipe2");
    std::exit(2);
  }
  std::vector<std::string> full = args;
  full.insert(full.begin(), "/proc/self/exe");
  full.insert(full.begin() + 1, "child");
  full.push_back("--id");
  full.push_back(std::to_string(id));
  full.push_back("--ready-fd");
  full.push_back(std::to_string(ready[1]));
  full.push_back("--go-fd");
  full.push_back(std::to_string(go[0]));
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(2);
  }
  if (pid == 0) {
    fcntl(ready[1], F_SETFD, 0);  // keep exactly these two across exec
    fcntl(go[0], F_SETFD, 0);
    std::vector<char*> argv;
    for (auto& s : full) argv.push_back(s.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    std::perror("execv /proc/self/exe");
    _exit(127);
  }
  close(ready[1]);
  close(go[0]);
  return Child{pid, ready[0], go[1], id};
}

// Reaps the children, killing any still running at the deadline. Returns the number that failed.
int reap(std::vector<Child>& kids, long long deadline_ns) {
  int failed = 0;
  std::vector<bool> done(kids.size(), false);
  std::size_t left = kids.size();
  while (left > 0) {
    for (std::size_t i = 0; i < kids.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      const pid_t r = waitpid(kids[i].pid, &status, WNOHANG);
      if (r == kids[i].pid) {
        done[i] = true;
        --left;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          ++failed;
          std::fprintf(stderr, "timeslice_probe: child %d (pid %d) failed, status %d\n", kids[i].id,
                       kids[i].pid, status);
        }
      }
    }
    if (left == 0) break;
    if (mb::host_ns() > deadline_ns) {
      for (std::size_t i = 0; i < kids.size(); ++i) {
        if (!done[i]) {
          std::fprintf(stderr, "timeslice_probe: killing child %d (pid %d) at deadline\n",
                       kids[i].id, kids[i].pid);
          kill(kids[i].pid, SIGKILL);
          waitpid(kids[i].pid, nullptr, 0);
          done[i] = true;
          ++failed;
        }
      }
      break;
    }
    usleep(5000);
  }
  return failed;
}

// Concatenates the children's part files PREFIX_p<id>.<kind>.csv into PREFIX_<kind>.csv.
void merge(const std::string& prefix, const std::string& kind, const char* header,
           const std::vector<Child>& kids) {
  std::ofstream out(prefix + "_" + kind + ".csv");
  out << header << '\n';
  for (const Child& c : kids) {
    const std::string part = prefix + "_p" + std::to_string(c.id) + "." + kind + ".csv";
    std::ifstream in(part);
    if (!in) continue;
    out << in.rdbuf();
    in.close();
    std::remove(part.c_str());
  }
}

int run_children(std::vector<Child>& kids, long long run_ns, const std::string& prefix) {
  // 1. wait until every child has its context, its buffers and its warm-up behind it
  const long long ready_deadline = mb::host_ns() + 120000000000LL;
  std::size_t ready = 0;
  std::vector<bool> is_ready(kids.size(), false);
  while (ready < kids.size()) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < kids.size(); ++i) {
      if (!is_ready[i]) {
        fds.push_back(pollfd{kids[i].ready_r, POLLIN, 0});
        which.push_back(i);
      }
    }
    const long long left_ms = (ready_deadline - mb::host_ns()) / 1000000;
    if (left_ms <= 0 || poll(fds.data(), fds.size(), static_cast<int>(left_ms)) <= 0) break;
    bool broken = false;
    for (std::size_t j = 0; j < fds.size(); ++j) {
      if (fds[j].revents == 0) continue;
      char c = 0;
      if (read(fds[j].fd, &c, 1) == 1 && c == 'r') {
        is_ready[which[j]] = true;
        ++ready;
      } else {
        std::fprintf(stderr, "timeslice_probe: child %d exited before it was ready\n",
                     kids[which[j]].id);
        broken = true;
      }
    }
    if (broken) break;
  }
  if (ready < kids.size()) {
    for (Child& c : kids) close(c.go_w);  // children see EOF and exit
    reap(kids, mb::host_ns() + 10000000000LL);
    return 5;
  }
  // 2. start everyone at once
  for (Child& c : kids) {
    const char g = 'g';
    if (write(c.go_w, &g, 1) != 1) std::perror("go pipe");
  }
  for (Child& c : kids) {
    close(c.go_w);
    close(c.ready_r);
  }
  const int failed = reap(kids, mb::host_ns() + run_ns + 60000000000LL);
  merge(prefix, "gaps", kGapsHeader, kids);
  merge(prefix, "meta", kMetaHeader, kids);
  merge(prefix, "kernels", kKernelsHeader, kids);
  return failed == 0 ? 0 : 6;
}

std::vector<std::string> pass(const mb::Args& a, std::initializer_list<const char*> keys) {
  std::vector<std::string> out;
  for (const char* k : keys) {
    if (a.has(k)) {
      out.push_back(std::string("--") + k);
      out.push_back(a.str(k, ""));
    }
  }
  return out;
}

int drive(const mb::Args& a) {
  const int n = static_cast<int>(a.num("nproc", 2));
  const std::string prefix = a.str("out", "ts");
  if (n < 1 || n > 64) {
    std::fprintf(stderr, "timeslice_probe: --nproc must be 1..64\n");
    return 2;
  }
  std::vector<std::string> args{"--role", "spin", "--out", prefix};
  for (auto& s : pass(a, {"duration-ms", "threshold-ns", "blocks", "threads", "log-blocks",
                          "warmup-ms", "cap"})) {
    args.push_back(s);
  }
  std::vector<Child> kids;
  for (int i = 0; i < n; ++i) kids.push_back(spawn(args, i));
  const int rc = run_children(kids, a.num("duration-ms", 2000) * 1000000LL, prefix);
  std::fprintf(stderr, "timeslice_probe drive: %d process(es), rc %d%s%s\n", n, rc,
               rc == 0 ? ", wrote " : "", rc == 0 ? (prefix + "_{gaps,meta}.csv").c_str() : "");
  return rc;
}

int shortk(const mb::Args& a) {
  const int neighbours = static_cast<int>(a.num("neighbours", 1));
  const std::string prefix = a.str("out", "sk");
  const long long dur_ms = a.num("duration-ms", 3000);
  const long long delay_ms = a.num("start-delay-ms", 100);
  std::vector<Child> kids;
  // The spinners outlive the short-kernel process: start delay + its duration + margin.
  std::vector<std::string> spin{"--role", "spin",          "--out",
                                prefix,   "--duration-ms", std::to_string(dur_ms + delay_ms + 500)};
  for (auto& s : pass(a, {"threshold-ns", "blocks", "threads", "log-blocks", "warmup-ms", "cap"})) {
    spin.push_back(s);
  }
  for (int i = 0; i < neighbours; ++i) kids.push_back(spawn(spin, i));
  std::vector<std::string> sk{"--role", "short", "--out", prefix};
  for (auto& s : pass(a, {"duration-ms", "kernel-us", "sleep-max-us", "sync", "batch", "sk-blocks",
                          "sk-threads", "max-kernels", "start-delay-ms"})) {
    sk.push_back(s);
  }
  kids.push_back(spawn(sk, neighbours));
  const int rc = run_children(kids, (dur_ms + delay_ms + 500) * 1000000LL, prefix);
  std::fprintf(stderr, "timeslice_probe shortk: %d neighbour(s), rc %d%s%s\n", neighbours, rc,
               rc == 0 ? ", wrote " : "", rc == 0 ? (prefix + "_*.csv").c_str() : "");
  return rc;
}

int resolution() {
  MB_CHECK(cudaSetDevice(0));
  unsigned long long* d = nullptr;
  MB_CHECK(cudaMalloc(&d, 3 * sizeof(unsigned long long)));
  unsigned long long h[3] = {0, 0, 0};
  resolution_kernel<<<1, 1>>>(1000, d);  // warm-up
  resolution_kernel<<<1, 1>>>(2000000, d);
  MB_CHECK(cudaDeviceSynchronize());
  MB_CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
  std::printf("globaltimer_min_delta_ns,%llu\nglobaltimer_changes,%llu\nglobaltimer_span_ns,%llu\n",
              h[0], h[1], h[2]);
  return 0;
}

void usage() {
  std::fprintf(stderr,
               "usage: timeslice_probe drive --nproc N --out PREFIX [--duration-ms 2000] ...\n"
               "       timeslice_probe shortk --neighbours 0|1 --out PREFIX [--sync 1] ...\n"
               "       timeslice_probe resolution\n"
               "(see the comment at the top of timeslice_probe.cu)\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage();
    return 2;
  }
  const std::string mode = argv[1];
  const mb::Args a(argc, argv, 2);
  if (mode == "child") {
    return a.str("role", "spin") == "short" ? child_short(a) : child_spin(a);
  }
  if (mode == "drive") return drive(a);
  if (mode == "shortk") return shortk(a);
  if (mode == "resolution") return resolution();
  usage();
  return 2;
}
