#include "sim/core/random.hpp"

#include <cmath>

#include <boost/random/exponential_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_real_distribution.hpp>

namespace gpumux {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Xoshiro256StarStar::Xoshiro256StarStar(std::uint64_t seed) {
  // splitmix64's sequence from `seed`: state word i is the mix of seed + (i + 1) * gamma
  // (splitmix64() adds one gamma itself).
  for (std::size_t i = 0; i < s_.size(); ++i) {
    s_[i] = splitmix64(seed);
    seed += 0x9e3779b97f4a7c15ULL;
  }
}

RandomStream RandomStreams::stream(std::string_view name) const {
  return RandomStream(splitmix64(master_seed_ ^ splitmix64(fnv1a64(name))));
}

double RandomStream::uniform01() { return boost::random::uniform_01<double>()(engine_); }

double RandomStream::exponential(double mean) { return exponential_of_rate(1.0 / mean); }

double RandomStream::lognormal(double median, double sigma) {
  // median * exp(sigma * Z), Z standard normal.
  if (sigma <= 0) return median;
  return std::exp(std::log(median) + sigma * boost::random::normal_distribution<double>()(engine_));
}

double RandomStream::uniform(double low, double high) {
  return boost::random::uniform_real_distribution<double>(low, high)(engine_);
}

}  // namespace gpumux
