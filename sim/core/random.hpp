#pragma once
// Random streams by stable name. Each stream's seed is derived from the master seed and the
// stream's name (FNV-1a 64 of the name, mixed with splitmix64), never from creation order, so
// adding a tenant does not change another tenant's numbers. The engine is xoshiro256** (below,
// 32 bytes of state); the distributions are Boost.Random's. Both are exact integer / IEEE
// arithmetic, so a stream gives the same numbers on every platform and compiler.
#include <array>
#include <cstdint>
#include <string_view>

#include <boost/random/exponential_distribution.hpp>

#include "sim/core/time.hpp"
#include "sim/util/strings.hpp"  // fnv1a64

namespace gpumux {

/// xoshiro256** 1.0: D. Blackman and S. Vigna, "Scrambled linear pseudorandom number
/// generators", ACM Transactions on Mathematical Software 47(4), 2021 (source:
/// https://prng.di.unimi.it/). 256 bits of state, period 2^256 - 1, every 64-bit output value
/// equidistributed over a period (4-dimensionally), passes BigCrush and PractRand (source: the
/// paper, section 10). Replaces mt19937_64 (2,504 bytes of state, 3 streams per tenant: 7.5 KB
/// that a run with hundreds of tenants walks through the caches) — issue 12. A
/// UniformRandomBitGenerator for Boost.Random's distributions. Cost: ~10 instructions per call,
/// no table refill.
class Xoshiro256StarStar {
 public:
  using result_type = std::uint64_t;
  /// The state is four successive splitmix64 outputs from `seed` (the authors' recommended
  /// seeding; never all zero).
  explicit Xoshiro256StarStar(std::uint64_t seed);
  /// A given state (not all zero): for the reference test vectors.
  explicit Xoshiro256StarStar(const std::array<std::uint64_t, 4>& state) : s_(state) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~std::uint64_t{0}; }
  result_type operator()() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<std::uint64_t, 4> s_;
};

/// splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA
/// 2014): the generator's next output from state x (it adds the golden gamma 0x9e37...7c15 to
/// x, then mixes). A bijection of 64-bit words; used to derive seeds and initial states.
std::uint64_t splitmix64(std::uint64_t x);

class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed) : engine_(seed) {}

  /// Uniform in [0, 1).
  double uniform01();
  /// Exponential with the given mean (> 0), in the mean's units.
  double exponential(double mean);
  /// The same draw as exponential(1.0 / rate) (the distribution's parameter is the rate), for a
  /// caller that keeps the rate instead of dividing on every draw.
  /// Inline: a Poisson arrival process draws one per request.
  double exponential_of_rate(double rate) {
    return boost::random::exponential_distribution<double>(rate)(engine_);
  }
  /// Lognormal with the given median (> 0) and sigma of the underlying normal.
  double lognormal(double median, double sigma);
  /// Uniform in [low, high).
  double uniform(double low, double high);
  std::uint64_t next_u64() { return engine_(); }

 private:
  Xoshiro256StarStar engine_;
};

class RandomStreams {
 public:
  explicit RandomStreams(std::uint64_t master_seed) : master_seed_(master_seed) {}
  /// A fresh stream for `name` ("tenant/chat/arrivals"); same name + seed = same numbers.
  RandomStream stream(std::string_view name) const;
  std::uint64_t master_seed() const { return master_seed_; }

 private:
  std::uint64_t master_seed_;
};

}  // namespace gpumux
