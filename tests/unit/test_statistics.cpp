// The streaming quantile sketch (sim/core/statistics.hpp): every quantile within the stated
// relative error of the exact nearest-rank value on random instances of several distributions
// (heavy-tailed included) and sizes; merge == sketch of the union; empty, one sample, huge and
// negative values; the `automatic` method exact up to its cap and equal to `sketch` beyond it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sim/core/statistics.hpp"

namespace gpumux {
namespace {

constexpr double kQs[] = {0.0, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1.0};

std::int64_t exact_nearest_rank(std::vector<std::int64_t> sorted, double q) {
  std::sort(sorted.begin(), sorted.end());
  const auto n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(q * n));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

void expect_within_bound(const QuantileSketch& sketch, const std::vector<std::int64_t>& samples,
                         const std::string& what) {
  std::vector<std::int64_t> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_EQ(sketch.count(), samples.size()) << what;
  for (double q : kQs) {
    const std::int64_t x = exact_nearest_rank(sorted, q);
    const std::int64_t got = sketch.quantile(q);
    // |q^ - x| <= alpha |x|, computed in long double so huge values do not overflow.
    const long double error = std::fabs(static_cast<long double>(got) - x);
    EXPECT_LE(error, QuantileSketch::kRelativeError * std::fabs(static_cast<long double>(x)))
        << what << " q=" << q << " exact " << x << " sketch " << got;
  }
  EXPECT_EQ(sketch.min(), sorted.front()) << what;
  EXPECT_EQ(sketch.max(), sorted.back()) << what;
}

// Random samples of one of several distributions (ns-like magnitudes), including heavy tails.
std::vector<std::int64_t> draw(std::mt19937_64& rng, int kind, std::size_t n) {
  std::vector<std::int64_t> out;
  out.reserve(n);
  std::exponential_distribution<double> expo(1.0 / 2e6);
  std::lognormal_distribution<double> logn(std::log(5e6), 1.5);
  std::uniform_int_distribution<std::int64_t> small(0, 600);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    double v = 0;
    switch (kind) {
      case 0:
        v = expo(rng);
        break;  // exponential
      case 1:
        v = logn(rng);
        break;  // lognormal
      case 2:
        v = 1e4 / std::pow(1.0 - unit(rng), 1.0 / 1.1);
        break;  // Pareto, a = 1.1
      case 3:
        v = static_cast<double>(small(rng));
        break;  // small integers
      case 4:
        v = unit(rng) < 0.5 ? 1e3 : 1e9 + 1e7 * unit(rng);
        break;  // bimodal
      default:
        v = static_cast<double>(small(rng)) - 300.0 + 1e7 * (unit(rng) - 0.5);
        break;
    }
    out.push_back(static_cast<std::int64_t>(std::min(v, 9e18)));
  }
  return out;
}

TEST(QuantileSketch, EveryQuantileWithinTheStatedBoundOnRandomInstances) {
  std::mt19937_64 rng(20261201);
  for (int trial = 0; trial < 60; ++trial) {
    const int kind = trial % 6;
    const std::size_t n = 1 + static_cast<std::size_t>(rng() % (trial < 30 ? 200 : 50000));
    const std::vector<std::int64_t> samples = draw(rng, kind, n);
    QuantileSketch sketch;
    for (std::int64_t v : samples) sketch.add(v);
    expect_within_bound(sketch, samples,
                        "trial " + std::to_string(trial) + " kind " + std::to_string(kind));
  }
}

TEST(QuantileSketch, BucketsTileTheNumberLineAndMeetTheBound) {
  // Every bucket starts where the previous one ends, and its width / low <= 2 alpha.
  std::uint64_t next = 1;
  for (std::size_t i = 1; i < 58 * QuantileSketch::kSubBuckets; ++i) {
    ASSERT_EQ(QuantileSketch::bucket_low(i), next) << i;
    ASSERT_EQ(QuantileSketch::index_of(next), i);
    const std::uint64_t w = QuantileSketch::bucket_width(i);
    ASSERT_EQ(QuantileSketch::index_of(next + w - 1), i);
    EXPECT_LE(static_cast<double>(w / 2),
              QuantileSketch::kRelativeError * static_cast<double>(next));
    next += w;
    if (next == 0) break;  // wrapped past 2^64 - 1: the last bucket
  }
  EXPECT_EQ(next, 0u);  // the buckets cover every uint64 magnitude
}

TEST(QuantileSketch, MergeEqualsTheSketchOfTheUnion) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const std::vector<std::int64_t> a = draw(rng, trial % 6, 1 + rng() % 3000);
    const std::vector<std::int64_t> b = draw(rng, (trial + 1) % 6, rng() % 3000);
    QuantileSketch sa, sb, both;
    for (std::int64_t v : a) sa.add(v), both.add(v);
    for (std::int64_t v : b) sb.add(v), both.add(v);
    sa.merge(sb);
    ASSERT_EQ(sa.count(), both.count());
    EXPECT_EQ(sa.min(), both.min());
    EXPECT_EQ(sa.max(), both.max());
    EXPECT_NEAR(sa.mean(), both.mean(), 1e-9 * std::fabs(both.mean()) + 1e-9);
    for (double q : kQs) EXPECT_EQ(sa.quantile(q), both.quantile(q)) << q;
    std::vector<std::int64_t> all = a;
    all.insert(all.end(), b.begin(), b.end());
    expect_within_bound(sa, all, "merged trial " + std::to_string(trial));
  }
  // Merging into an empty sketch and merging an empty one.
  QuantileSketch empty, one;
  one.add(42);
  empty.merge(one);
  EXPECT_EQ(empty.quantile(0.5), 42);
  one.merge(QuantileSketch{});
  EXPECT_EQ(one.count(), 1u);
}

// add_all (the fold of an automatic series into its sketch) is add() in a loop: on every kind
// of sample set, with zeros mixed in at random (a queue's waits), negative values and the int64
// extremes, into an empty sketch or one holding samples already, the same count, extremes,
// every bucket (each rank's quantile), the same arrays' memory and the same sum bit for bit.
TEST(QuantileSketch, AddAllEqualsAddOneByOne) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<std::int64_t> samples = draw(rng, trial % 6, rng() % 5000);
    const int zeros_percent = static_cast<int>(rng() % 101);
    for (std::int64_t& v : samples) {
      if (static_cast<int>(rng() % 100) < zeros_percent) v = 0;
    }
    if (trial % 7 == 3) samples.push_back(std::numeric_limits<std::int64_t>::max());
    if (trial % 7 == 4) samples.push_back(std::numeric_limits<std::int64_t>::min());
    if (trial % 5 == 2) samples.assign(samples.size(), 0);  // zeros only
    const std::vector<std::int64_t> before = draw(rng, (trial + 1) % 6, trial % 3 == 0 ? 0 : 300);
    QuantileSketch one_by_one, all;
    for (std::int64_t v : before) one_by_one.add(v), all.add(v);
    for (std::int64_t v : samples) one_by_one.add(v);
    all.add_all(samples.data(), samples.size());
    const std::string what = "trial " + std::to_string(trial);
    ASSERT_EQ(all.count(), one_by_one.count()) << what;
    EXPECT_EQ(all.min(), one_by_one.min()) << what;
    EXPECT_EQ(all.max(), one_by_one.max()) << what;
    EXPECT_EQ(all.mean(), one_by_one.mean()) << what;  // the same additions in the same order
    EXPECT_EQ(all.memory_bytes(), one_by_one.memory_bytes()) << what;
    const std::size_t n = all.count();
    for (std::size_t rank = 1; rank <= n; rank += 1 + n / 700) {
      const double q = static_cast<double>(rank) / static_cast<double>(n);
      ASSERT_EQ(all.quantile(q), one_by_one.quantile(q)) << what << " q " << q;
    }
  }
}

TEST(QuantileSketch, EmptyOneSampleAndExtremes) {
  QuantileSketch empty;
  EXPECT_EQ(empty.count(), 0u);
  EXPECT_EQ(empty.quantile(0.5), 0);
  EXPECT_EQ(empty.max(), 0);
  EXPECT_EQ(empty.mean(), 0.0);

  QuantileSketch one;
  one.add(123456789);
  for (double q : kQs) EXPECT_EQ(one.quantile(q), 123456789);
  EXPECT_EQ(one.mean(), 123456789.0);

  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const std::vector<std::int64_t> extremes = {kMax, kMax - 1,  kMin,         kMin + 1, 0,   -1,
                                              1,    1LL << 62, -(1LL << 62), 255,      256, -257};
  QuantileSketch sketch;
  for (std::int64_t v : extremes) sketch.add(v);
  expect_within_bound(sketch, extremes, "extremes");
  EXPECT_LE(sketch.memory_bytes(), 2 * 58 * QuantileSketch::kSubBuckets * sizeof(std::uint64_t));
}

TEST(QuantileSketch, MemoryBoundedByTheValueRangeNotTheCount) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<std::int64_t> range(1000, 10'000'000);
  QuantileSketch sketch;
  for (int i = 0; i < 1000; ++i) sketch.add(range(rng));
  for (int i = 0; i < 200000; ++i) sketch.add(range(rng));
  const std::size_t after_many = sketch.memory_bytes();
  // 10^7 < 2^24: at most index_of(2^24) + 1 buckets, whatever the count (capacity may double).
  EXPECT_LE(after_many, 2 * (QuantileSketch::index_of(1u << 24) + 1) * sizeof(std::uint64_t));
}

TEST(Percentiles, ExactMethodIsExactQuantiles) {
  std::mt19937_64 rng(11);
  const std::vector<std::int64_t> samples = draw(rng, 2, 5000);
  Percentiles p(PercentileMethod::exact, 10);  // the cap does not apply to `exact`
  ExactQuantiles e;
  for (std::int64_t v : samples) p.add(v), e.add(v);
  EXPECT_TRUE(p.exact());
  EXPECT_EQ(p.mean(), e.mean());
  for (double q : kQs) EXPECT_EQ(p.quantile(q), e.quantile(q));
}

TEST(Percentiles, AutomaticIsExactUpToTheCapAndTheSketchBeyondIt) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 12; ++trial) {
    const std::size_t cap = 1 + rng() % 500;
    const std::size_t n = rng() % (2 * cap + 2);
    const std::vector<std::int64_t> samples = draw(rng, trial % 6, n);
    Percentiles automatic(PercentileMethod::automatic, cap);
    Percentiles sketch(PercentileMethod::sketch, cap);
    Percentiles exact(PercentileMethod::exact);
    for (std::int64_t v : samples) automatic.add(v), sketch.add(v), exact.add(v);
    EXPECT_FALSE(sketch.exact());
    ASSERT_EQ(automatic.exact(), n <= cap) << "n " << n << " cap " << cap;
    ASSERT_EQ(automatic.count(), n);
    Percentiles& same = n <= cap ? exact : sketch;
    EXPECT_EQ(automatic.mean(), same.mean());  // bit-identical: same additions, same order
    for (double q : kQs) EXPECT_EQ(automatic.quantile(q), same.quantile(q)) << q;
    EXPECT_EQ(automatic.max(), same.max());
  }
}

// A series as bytes (Percentiles::encode / decode: what a cluster's workload pod hands back from
// another process): on random instances of every kind, method and size (around the automatic
// cap), the decoded series has the same count, mean, max and every quantile bit for bit, its
// bytes re-encode to the same bytes, and every proper prefix is refused (never a read past the
// end). merge: exact + exact is the exact series of the union; with a sketch, the sketch of
// the union (same buckets, so the same quantiles).
TEST(Percentiles, EncodedSeriesGivesEveryQuantileBitForBit) {
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 36; ++trial) {
    const std::size_t cap = 1 + rng() % 300;
    const std::size_t n = rng() % (2 * cap + 2);
    const std::vector<std::int64_t> samples = draw(rng, trial % 6, n);
    const PercentileMethod method = trial % 3 == 0   ? PercentileMethod::exact
                                    : trial % 3 == 1 ? PercentileMethod::sketch
                                                     : PercentileMethod::automatic;
    Percentiles p(method, cap);
    for (std::int64_t v : samples) p.add(v);
    std::string bytes;
    p.encode(bytes);
    std::size_t at = 0;
    Percentiles back = Percentiles::decode(bytes, at);
    ASSERT_EQ(at, bytes.size());
    EXPECT_EQ(back.exact(), p.exact());
    ASSERT_EQ(back.count(), p.count());
    EXPECT_EQ(back.mean(), p.mean());
    for (double q : kQs)
      EXPECT_EQ(back.quantile(q), p.quantile(q)) << "trial " << trial << " q " << q;
    for (int k = 0; k < 20; ++k) {
      const double q = std::uniform_real_distribution<double>(0, 1)(rng);
      EXPECT_EQ(back.quantile(q), p.quantile(q)) << q;
    }
    EXPECT_EQ(back.max(), p.max());
    std::string again;
    back.encode(again);
    EXPECT_EQ(again, bytes);
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
      std::size_t from = 0;
      EXPECT_THROW(Percentiles::decode(bytes.substr(0, cut), from), std::runtime_error) << cut;
    }
  }
  // Merging: two halves of one sample set.
  for (int trial = 0; trial < 12; ++trial) {
    const std::vector<std::int64_t> a = draw(rng, trial % 6, 1 + rng() % 3000);
    const std::vector<std::int64_t> b = draw(rng, (trial + 1) % 6, 1 + rng() % 3000);
    const bool sketched = trial % 2 == 1;
    Percentiles left(PercentileMethod::exact),
        right(sketched ? PercentileMethod::sketch : PercentileMethod::exact);
    Percentiles exact_union(PercentileMethod::exact), sketch_union(PercentileMethod::sketch);
    for (std::int64_t v : a) left.add(v), exact_union.add(v), sketch_union.add(v);
    for (std::int64_t v : b) right.add(v), exact_union.add(v), sketch_union.add(v);
    left.merge(right);
    EXPECT_EQ(left.exact(), !sketched);
    ASSERT_EQ(left.count(), a.size() + b.size());
    Percentiles& expected = sketched ? sketch_union : exact_union;
    for (double q : kQs) EXPECT_EQ(left.quantile(q), expected.quantile(q)) << trial << " " << q;
  }
  // A sketch's bytes: its nonzero buckets only, 1-3 B each, against 8 B per bucket of its
  // arrays from index 0 (1e5 lognormal latencies around 5 ms).
  Percentiles wide(PercentileMethod::sketch);
  for (std::int64_t v : draw(rng, 1, 100000)) wide.add(v);
  std::string bytes;
  wide.encode(bytes);
  EXPECT_LT(bytes.size(), wide.memory_bytes() / 3);
}

}  // namespace
}  // namespace gpumux

namespace gpumux {
namespace {

// ExactQuantiles selects through a histogram index (statistics.cpp): on every kind of sample set
// (heavy tails, few distinct values, negative and extreme values, all equal, one far outlier, a
// fixed value holding most samples beside a short tail: buckets narrow enough to be counted
// value by value, wide ones gathered;
// sizes around the small-set cut-off) each quantile is the nearest-rank element nth_element
// gives, one at a time or many at once in any order, also after more samples are added, and the
// samples stay in arrival order.
TEST(ExactQuantiles, IndexedSelectionIsTheNearestRankElement) {
  std::mt19937_64 rng(17);
  // Sizes with every remainder mod 4 (the histogram counts four samples per step).
  const std::size_t sizes[] = {1, 2, 7, 4095, 4096, 4097, 9000, 9003, 70000, 70002};
  for (int kind = 0; kind < 10; ++kind) {
    for (const std::size_t n : sizes) {
      std::vector<std::int64_t> samples;
      if (kind < 6) {
        samples = draw(rng, kind, n);
      } else if (kind == 6) {  // the full int64 span, extremes included
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint64_t r = rng();
          samples.push_back(r % 5 == 0   ? std::numeric_limits<std::int64_t>::min()
                            : r % 5 == 1 ? std::numeric_limits<std::int64_t>::max()
                                         : static_cast<std::int64_t>(r));
        }
      } else if (kind == 7) {  // one value, one outlier far away
        for (std::size_t i = 0; i < n; ++i) samples.push_back(i == n / 2 ? 1'000'000'000'000 : 7);
      } else if (kind == 9) {  // a fixed service time, most samples, and a queue's short waits
        std::exponential_distribution<double> wait(1.0 / 2e4);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        for (std::size_t i = 0; i < n; ++i) {
          samples.push_back(1'000'000 + (unit(rng) < 0.6 ? 0 : std::llround(wait(rng))));
        }
      } else {  // all equal
        samples.assign(n, -3);
      }
      ExactQuantiles e;
      const std::size_t first = n / 2;  // quantiles, then the rest added, then quantiles again
      for (std::size_t i = 0; i < first; ++i) e.add(samples[i]);
      for (const std::size_t have : {first, n}) {
        if (have == n) {
          for (std::size_t i = first; i < n; ++i) e.add(samples[i]);
        }
        if (have == 0) continue;
        std::vector<std::int64_t> sorted(samples.begin(),
                                         samples.begin() + static_cast<std::ptrdiff_t>(have));
        std::sort(sorted.begin(), sorted.end());
        for (const double q : kQs) {
          std::size_t rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(have)));
          rank = std::clamp<std::size_t>(rank, 1, have);
          ASSERT_EQ(e.quantile(q), sorted[rank - 1])
              << "kind " << kind << " n " << have << " q " << q;
        }
        EXPECT_EQ(e.max(), sorted.back()) << "kind " << kind << " n " << have;
        // All at once (one gathering pass; two of them may share a bucket): the same values.
        std::int64_t batch[std::size(kQs)];
        e.quantiles(kQs, std::size(kQs), batch);
        for (std::size_t i = 0; i < std::size(kQs); ++i) {
          std::size_t rank =
              static_cast<std::size_t>(std::ceil(kQs[i] * static_cast<double>(have)));
          rank = std::clamp<std::size_t>(rank, 1, have);
          ASSERT_EQ(batch[i], sorted[rank - 1])
              << "kind " << kind << " n " << have << " batch " << i;
        }
        // Out of order and repeated (a small set selects the ranks in ascending order, each
        // after the one before): the same values.
        const double shuffled[] = {0.99, 0.5, 0.0001, 0.5, 1.0, 0.0, 0.9, 0.999, 0.25, 0.99};
        std::int64_t mixed[std::size(shuffled)];
        e.quantiles(shuffled, std::size(shuffled), mixed);
        for (std::size_t i = 0; i < std::size(shuffled); ++i) {
          std::size_t rank =
              static_cast<std::size_t>(std::ceil(shuffled[i] * static_cast<double>(have)));
          rank = std::clamp<std::size_t>(rank, 1, have);
          ASSERT_EQ(mixed[i], sorted[rank - 1])
              << "kind " << kind << " n " << have << " shuffled " << i;
        }
      }
      EXPECT_EQ(std::vector<std::int64_t>(e.values().begin(), e.values().end()), samples)
          << "kind " << kind << " n " << n;  // left in place
    }
  }
}

// intervals() frees the selection index's bucket counts (the summary's last selection): every
// selection after it (quantiles, intervals again, max, at_ranks, after more samples too) equals
// the same query on a fresh series of the same samples, on random series of random sizes
// (every kind of draw, a fixed service time with short waits, all equal).
TEST(ExactQuantiles, SelectionsAfterIntervalsEqualAFreshSeries) {
  std::mt19937_64 rng(41);
  const double reported[] = {0.5, 0.9, 0.99, 0.999};
  const auto same = [](const QuantileInterval& a, const QuantileInterval& b) {
    return a.has_low == b.has_low && a.has_high == b.has_high && a.dependence == b.dependence &&
           (!a.has_low || a.low == b.low) && (!a.has_high || a.high == b.high);
  };
  for (int trial = 0; trial < 60; ++trial) {
    const int kind = trial % 8;
    const std::size_t n = 1 + rng() % 60000;
    std::vector<std::int64_t> samples;
    if (kind < 6) {
      samples = draw(rng, kind, n);
    } else if (kind == 6) {
      for (std::size_t i = 0; i < n; ++i)
        samples.push_back(1'000'000 + (rng() % 5 < 3 ? 0 : rng() % 40000));
    } else {
      samples.assign(n, 11);
    }
    const auto fresh = [&](std::size_t count) {
      ExactQuantiles f;
      for (std::size_t i = 0; i < count; ++i) f.add(samples[i]);
      return f;
    };
    const std::size_t first = std::max<std::size_t>(1, n / 2);
    ExactQuantiles e = fresh(first);
    std::int64_t points[4], again[std::size(kQs)];
    QuantileInterval iv[4], expected[4];
    e.quantiles(reported, 4, points);
    e.intervals(reported, 4, 0.95, iv, points);  // frees the counts
    for (int round = 0; round < 2; ++round) {
      const std::size_t have = e.count();
      ExactQuantiles f = fresh(have);
      ASSERT_EQ(e.max(), f.max()) << trial;
      e.quantiles(kQs, std::size(kQs), again);
      for (std::size_t i = 0; i < std::size(kQs); ++i)
        ASSERT_EQ(again[i], f.quantile(kQs[i])) << trial;
      e.intervals(reported, 4, 0.9, iv);  // again, without the points
      ExactQuantiles g = fresh(have);
      g.intervals(reported, 4, 0.9, expected);
      for (int i = 0; i < 4; ++i) ASSERT_TRUE(same(iv[i], expected[i])) << trial << " " << i;
      const std::size_t ranks[] = {0, have / 3, have - 1};
      std::int64_t at[3];
      e.at_ranks(ranks, 3, at);
      std::vector<std::int64_t> sorted(samples.begin(),
                                       samples.begin() + static_cast<std::ptrdiff_t>(have));
      std::sort(sorted.begin(), sorted.end());
      for (int i = 0; i < 3; ++i) ASSERT_EQ(at[i], sorted[ranks[i]]) << trial;
      for (std::size_t i = have; i < n; ++i) e.add(samples[i]);  // the rest, then once more
    }
  }
}

// at_ranks on buckets counted value by value (spans of 2^12 .. 2^24 values over the 4096
// buckets: every bucket width from 1 to 2^12) and gathered (wider): many ranks at once, in any
// order, repeated, several in one bucket, a bucket's first and last rank, on samples spread
// evenly, in a few dense clusters, mostly one value with a tail (a queue's zero waits), and
// negative; each equals the element of that rank in a sorted copy. The counted path's scratch
// counters and its tables' reset between calls (the tables are the thread's) are exercised by
// consecutive series of different widths.
TEST(ExactQuantiles, ManyRanksAtOnceEqualASortedCopyAtEveryBucketWidth) {
  std::mt19937_64 rng(2026);
  for (int trial = 0; trial < 120; ++trial) {
    const int span_bits = 12 + trial % 15;  // 12 .. 26: shift 0 .. 14
    const std::int64_t span = std::int64_t{1} << span_bits;
    const std::size_t n = 4097 + rng() % 30000;
    const int shape = (trial / 15) % 4;
    std::vector<std::int64_t> samples(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t u = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(span));
      switch (shape) {
        case 0:
          samples[i] = u;  // even
          break;
        case 1:  // three clusters of 64 values
          samples[i] = (u % 3) * (span / 3) + static_cast<std::int64_t>(rng() % 64);
          break;
        case 2:  // mostly zero
          samples[i] = rng() % 10 < 6 ? 0 : u;
          break;
        default:
          samples[i] = u - span / 2 - 1'000'000'000;  // negative
          break;
      }
    }
    samples[rng() % n] = 0;  // the extremes of the span (the bucket index's ends)
    samples[rng() % n] = span - 1;
    ExactQuantiles e;
    for (const std::int64_t x : samples) e.add(x);
    std::vector<std::int64_t> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::size_t> ranks;
    for (int j = 0; j < 12; ++j) ranks.push_back(rng() % n);
    const std::size_t r = rng() % n;  // neighbours: one bucket, or a bucket's edge
    for (const std::size_t d : {0, 1, 2, 3, 17}) ranks.push_back(std::min(n - 1, r + d));
    ranks.push_back(ranks.front());  // repeated
    ranks.push_back(0);
    ranks.push_back(n - 1);
    std::shuffle(ranks.begin(), ranks.end(), rng);
    std::vector<std::int64_t> at(ranks.size());
    e.at_ranks(ranks.data(), ranks.size(), at.data());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      ASSERT_EQ(at[i], sorted[ranks[i]]) << "trial " << trial << " rank " << ranks[i];
    }
    // Again, a few at a time (the tables reset between calls).
    for (std::size_t i = 0; i + 3 <= ranks.size(); i += 3) {
      std::int64_t three[3];
      e.at_ranks(&ranks[i], 3, three);
      for (std::size_t j = 0; j < 3; ++j) ASSERT_EQ(three[j], sorted[ranks[i + j]]) << trial;
    }
  }
}

}  // namespace
}  // namespace gpumux
