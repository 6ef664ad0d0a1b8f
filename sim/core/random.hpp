#pragma once
// Random streams by stable name. Each stream's seed is derived from the master seed and the
// stream's name (FNV-1a 64 of the name, mixed with splitmix64), never from creation order, so
// adding a tenant does not change another tenant's numbers. Engines and distributions are
// Boost.Random's, which produce the same sequence on every platform and compiler.
#include <cstdint>
#include <string_view>

#include <boost/random/mersenne_twister.hpp>

#include "sim/core/time.hpp"
#include "sim/util/strings.hpp"  // fnv1a64

namespace gpumux {

class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed) : engine_(seed) {}

  /// Uniform in [0, 1).
  double uniform01();
  /// Exponential with the given mean (> 0), in the mean's units.
  double exponential(double mean);
  /// Lognormal with the given median (> 0) and sigma of the underlying normal.
  double lognormal(double median, double sigma);
  /// Uniform in [low, high).
  double uniform(double low, double high);
  std::uint64_t next_u64() { return engine_(); }

 private:
  boost::random::mt19937_64 engine_;
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
