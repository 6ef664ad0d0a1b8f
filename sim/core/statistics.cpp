#include "sim/core/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace gpumux {

namespace {

constexpr int kSelectBits = 12;
constexpr std::size_t kSelectBuckets = std::size_t{1} << kSelectBits;
// Up to this many samples nth_element on a copy is as fast as any histogram.
constexpr std::size_t kSelectSmall = 4096;
// Buckets up to this width (2^shift values) are counted value by value (count_in_buckets):
// 2 x 16 KiB of counters per wanted bucket at most.
constexpr int kCountedShift = 12;

std::uint64_t offset_of(std::int64_t x, std::int64_t lo) {
  return static_cast<std::uint64_t>(x) - static_cast<std::uint64_t>(lo);
}

// The least and greatest of X[0..n) (n >= 1), without branches (std::minmax_element's
// mispredict on random data). On x86-64 with GCC also compiled for AVX2, chosen when the CPU has
// it (the same extremes either way).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
std::pair<std::int64_t, std::int64_t>
min_max_of(const std::int64_t* x, std::size_t n) {
  std::int64_t lo0 = x[0], lo1 = lo0, hi0 = lo0, hi1 = lo0;
  std::size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    lo0 = std::min(lo0, x[i]);
    hi0 = std::max(hi0, x[i]);
    lo1 = std::min(lo1, x[i + 1]);
    hi1 = std::max(hi1, x[i + 1]);
  }
  if (i < n) {
    lo0 = std::min(lo0, x[i]);
    hi0 = std::max(hi0, x[i]);
  }
  return {std::min(lo0, lo1), std::max(hi0, hi1)};
}

// The least and greatest of `values` (not empty).
template <class Values>
std::pair<std::int64_t, std::int64_t> min_max(const Values& values) {
  return min_max_of(values.data(), values.size());
}

// counts[b] = how many of `values` have (x - lo) >> shift == b (every such b < kSelectBuckets;
// counts has kSelectBuckets entries, overwritten). Four interleaved histograms, summed at the
// end: runs of equal buckets (a queue's many zero waits) would otherwise make each increment
// wait for the previous one's store.
template <class Values>
void fill_histogram(const Values& values, std::int64_t lo, int shift,
                    std::vector<std::uint32_t>& counts) {
  // The lanes are the thread's, reused: a fresh 64 KiB per call was a malloc, its page faults
  // and a memset per series (5 % of a 512-tenant run, perf).
  thread_local std::vector<std::uint32_t> lanes;
  lanes.assign(4 * kSelectBuckets, 0);
  std::uint32_t* const c = lanes.data();
  const std::size_t n = values.size();
  const std::int64_t* const x = values.data();
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    ++c[offset_of(x[i], lo) >> shift];
    ++c[kSelectBuckets + (offset_of(x[i + 1], lo) >> shift)];
    ++c[2 * kSelectBuckets + (offset_of(x[i + 2], lo) >> shift)];
    ++c[3 * kSelectBuckets + (offset_of(x[i + 3], lo) >> shift)];
  }
  for (; i < n; ++i) ++c[offset_of(x[i], lo) >> shift];
  counts.resize(kSelectBuckets);
  for (std::size_t b = 0; b < kSelectBuckets; ++b) {
    counts[b] =
        c[b] + c[kSelectBuckets + b] + c[2 * kSelectBuckets + b] + c[3 * kSelectBuckets + b];
  }
}

// The element of rank `index` (0-based, ascending) of `values`, by histogram levels: each level
// narrows the value range 4096-fold to the bucket holding the rank (two passes with predictable
// branches), until few elements are left for nth_element. Reorders `values` (the same multiset),
// and never copies it: a bucket that holds most samples (a queue's zero waits, a fixed service
// time) is megabytes, and fresh pages cost more than the selection.
template <class Values>
std::int64_t select_rank(Values& values, std::size_t index) {
  std::vector<std::uint32_t> counts;  // fill_histogram sizes it (a small set never needs it)
  for (;;) {
    if (values.size() <= kSelectSmall) {
      std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index),
                       values.end());
      return values[index];
    }
    const auto [lo, hi] = min_max(values);
    const std::uint64_t span = offset_of(hi, lo);
    if (span == 0) return lo;
    int shift = 0;
    while ((span >> shift) >= kSelectBuckets) ++shift;
    fill_histogram(values, lo, shift, counts);
    std::size_t bucket = 0;
    while (index >= counts[bucket]) index -= counts[bucket++];
    // The bucket's elements to the front, in place; the rest is dropped.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::int64_t x = values[i];
      values[kept] = x;
      kept += (offset_of(x, lo) >> shift) == bucket ? 1 : 0;
    }
    values.resize(kept);
  }
}

// Counted buckets: the counters of samples outside the wanted buckets. The other buckets'
// samples are spread over this many (by their low bits), so that a run of them does not wait on
// one counter's increments.
constexpr std::size_t kScratchCounters = 16;

// The thread's tables of count_in_buckets, by bucket: where a bucket's counters start (the
// scratch counters for an unwanted bucket) and the mask of a sample's offset within them. Kept
// in the unwanted state between calls: a call sets its wanted buckets' entries and resets them
// (filling both tables for every bucket was 10 % of a 512-tenant run's selections, perf).
struct CountTables {
  std::vector<std::uint32_t> base = std::vector<std::uint32_t>(kSelectBuckets, 0);
  std::vector<std::uint32_t> mask =
      std::vector<std::uint32_t>(kSelectBuckets, kScratchCounters - 1);
};

// at_ranks for buckets of width 2^shift <= 2^kCountedShift: instead of gathering each wanted
// bucket's samples and selecting among them (a branch per sample, taken at random when a bucket
// holds most samples: a fixed service time, a queue's zero waits), one branch-free pass counts
// every value of the wanted buckets (a counter per value, two interleaved lanes so that a run of
// equal values does not wait on its own increments; the other buckets' samples go to scratch
// counters), and each rank is read off its bucket's counts (16 values' counts summed a step). The
// same nearest-rank element; no sample moves. VALUES: the samples; LO their minimum; SHIFT the
// buckets' width (select_shift_); BUCKET[i], INNER[i]: the bucket of wanted rank i and its rank
// inside it (BUCKET[i] == kSelectBuckets: not wanted here); SLOT_OF[b]: the wanted buckets
// numbered 0..SLOTS-1, -1 for the others.
template <class Values>
void count_in_buckets(const Values& values, std::int64_t lo, int shift, const std::size_t* bucket,
                      const std::size_t* inner, const int* slot_of, std::size_t slots,
                      std::size_t k, std::int64_t* out) {
  if (shift == 0) {  // a bucket of width 1 holds one value
    for (std::size_t i = 0; i < k; ++i) {
      if (bucket[i] != kSelectBuckets) {
        out[i] = static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + bucket[i]);
      }
    }
    return;
  }
  const std::size_t width = std::size_t{1} << shift;
  // Per lane: the scratch counters, then the wanted buckets' counters, slot by slot. The
  // buffers are the thread's, reused: fresh ones were a mapping, its page faults and a memset
  // per call (4 % of a 512-tenant run, perf).
  const std::size_t lane = kScratchCounters + slots * width;
  thread_local CountTables tables;
  thread_local std::vector<std::uint32_t> counts;
  counts.assign(2 * lane, 0);  // (before the tables change: nothing below throws)
  std::uint32_t* const at = tables.base.data();
  std::uint32_t* const within = tables.mask.data();
  for (std::size_t i = 0; i < k; ++i) {
    if (bucket[i] == kSelectBuckets) continue;
    const std::size_t b = bucket[i];
    at[b] =
        static_cast<std::uint32_t>(kScratchCounters + static_cast<std::size_t>(slot_of[b]) * width);
    within[b] = static_cast<std::uint32_t>(width - 1);
  }
  std::uint32_t* const c0 = counts.data();
  std::uint32_t* const c1 = c0 + lane;
  const std::int64_t* const x = values.data();
  const std::size_t n = values.size();
  std::size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const std::uint64_t a = offset_of(x[i], lo);
    const std::uint64_t b = offset_of(x[i + 1], lo);
    ++c0[at[a >> shift] + (a & within[a >> shift])];
    ++c1[at[b >> shift] + (b & within[b >> shift])];
  }
  if (i < n) {
    const std::uint64_t a = offset_of(x[i], lo);
    ++c0[at[a >> shift] + (a & within[a >> shift])];
  }
  for (std::size_t w = 0; w < k; ++w) {
    if (bucket[w] == kSelectBuckets) continue;
    const std::size_t from =
        kScratchCounters + static_cast<std::size_t>(slot_of[bucket[w]]) * width;
    const std::uint32_t* const a0 = c0 + from;
    const std::uint32_t* const a1 = c1 + from;
    std::size_t r = inner[w];
    std::size_t v = 0;
    // Whole steps of 16 values while the rank lies past them, then value by value.
    constexpr std::size_t kStep = 16;
    for (; v + kStep <= width; v += kStep) {
      std::uint32_t here = 0;
      for (std::size_t j = 0; j < kStep; ++j) here += a0[v + j] + a1[v + j];
      if (r < here) break;
      r -= here;
    }
    for (;;) {
      const std::size_t here = std::size_t{a0[v]} + a1[v];
      if (r < here) break;
      r -= here;
      ++v;
    }
    out[w] = static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + (bucket[w] << shift) + v);
  }
  for (std::size_t w = 0; w < k; ++w) {  // back to the unwanted state
    if (bucket[w] == kSelectBuckets) continue;
    at[bucket[w]] = 0;
    within[bucket[w]] = kScratchCounters - 1;
  }
}

}  // namespace

// The first quantile() after add() builds the selection index: the samples' minimum and maximum
// and a histogram of (x - min) >> shift over 4096 buckets. Each quantile() then finds the bucket
// holding its rank, gathers that bucket's samples (one pass, the branch almost never taken) and
// selects among them alone: about 4 passes over the samples for the usual four quantiles and
// the maximum, against nth_element's 2-3 passes per quantile with about half its comparisons
// mispredicted on random data. The value is the nearest-rank element whatever the method; the
// samples are never reordered.
std::int64_t ExactQuantiles::quantile(double q) {
  std::int64_t value = 0;
  quantiles(&q, 1, &value);
  return value;
}

void ExactQuantiles::quantiles(const double* qs, std::size_t k, std::int64_t* out) {
  if (values_.empty()) {
    std::fill(out, out + k, std::int64_t{0});
    return;
  }
  std::vector<std::size_t> index(k);
  for (std::size_t i = 0; i < k; ++i) {
    const double n = static_cast<double>(values_.size());
    std::size_t rank = static_cast<std::size_t>(std::ceil(qs[i] * n));
    if (rank < 1) rank = 1;
    if (rank > values_.size()) rank = values_.size();
    index[i] = rank - 1;
  }
  at_ranks(index.data(), k, out);
}

void ExactQuantiles::at_ranks(const std::size_t* index, std::size_t k, std::int64_t* out) {
  if (values_.size() <= kSelectSmall) {
    // One copy; the ranks in ascending order, each selected among the elements after the
    // previous one (nth_element leaves the larger ones there): about one selection's work for
    // all of them, instead of a copy and a selection each.
    std::vector<std::int64_t> scratch(values_.begin(), values_.end());
    std::vector<std::size_t> order(k);
    for (std::size_t i = 0; i < k; ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return index[a] < index[b]; });
    std::size_t from = 0;  // scratch[0, from) holds the smallest `from` samples, in place
    for (const std::size_t i : order) {
      const std::size_t r = index[i];
      if (r >= from) {
        std::nth_element(scratch.begin() + static_cast<std::ptrdiff_t>(from),
                         scratch.begin() + static_cast<std::ptrdiff_t>(r), scratch.end());
        from = r + 1;
      }
      out[i] = scratch[r];  // (r < from: the rank selected just before)
    }
    return;
  }
  if (!indexed_ || select_counts_.empty()) build_index();
  // Each wanted rank's bucket and its rank inside it; then one pass gathers every wanted bucket
  // (or counts its values, below).
  std::vector<std::size_t> bucket(k, kSelectBuckets), inner(k, 0);
  std::vector<int> slot_of(kSelectBuckets, -1);
  std::size_t slots = 0;
  std::vector<std::size_t> order;  // the ranks to locate, ascending (one walk over the buckets)
  order.reserve(k);
  for (std::size_t i = 0; i < k; ++i) {
    if (index[i] == values_.size() - 1) {
      out[i] = max_;
    } else if (select_shift_ < 0) {
      out[i] = min_;  // every sample equal
    } else {
      order.push_back(i);
    }
  }
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return index[a] < index[b]; });
  std::size_t b = 0, below = 0;  // below: the samples in buckets before b
  for (const std::size_t i : order) {
    while (index[i] - below >= select_counts_[b]) below += select_counts_[b++];
    bucket[i] = b;
    inner[i] = index[i] - below;
    if (slot_of[b] < 0) slot_of[b] = static_cast<int>(slots++);
  }
  if (slots == 0) return;
  if (select_shift_ <= kCountedShift) {
    count_in_buckets(values_, min_, select_shift_, bucket.data(), inner.data(), slot_of.data(),
                     slots, k, out);
    return;
  }
  std::vector<Samples> gathered(slots);  // (huge pages: a bucket may hold most samples)
  for (std::size_t b = 0; b < kSelectBuckets; ++b) {
    if (slot_of[b] >= 0) gathered[static_cast<std::size_t>(slot_of[b])].reserve(select_counts_[b]);
  }
  for (const std::int64_t x : values_) {
    const int slot = slot_of[offset_of(x, min_) >> select_shift_];
    if (slot >= 0) gathered[static_cast<std::size_t>(slot)].push_back(x);
  }
  // A bucket's last wanted rank selects in its gathered copy; an earlier one in a scratch copy
  // (a selection narrows what it is given), whose pages the next such copy reuses.
  std::vector<std::size_t> uses(gathered.size(), 0);
  for (std::size_t i = 0; i < k; ++i) {
    if (bucket[i] != kSelectBuckets) ++uses[static_cast<std::size_t>(slot_of[bucket[i]])];
  }
  Samples scratch;
  for (std::size_t i = 0; i < k; ++i) {
    if (bucket[i] == kSelectBuckets) continue;
    const std::size_t slot = static_cast<std::size_t>(slot_of[bucket[i]]);
    if (--uses[slot] == 0) {
      out[i] = select_rank(gathered[slot], inner[i]);
    } else {
      scratch = gathered[slot];
      out[i] = select_rank(scratch, inner[i]);
    }
  }
}

void ExactQuantiles::intervals(const double* qs, std::size_t k, double confidence,
                               QuantileInterval* out, const std::int64_t* given_points) {
  const std::size_t n = values_.size();
  std::fill(out, out + k, QuantileInterval{});
  if (n == 0) return;
  std::vector<std::int64_t> points(k);
  if (given_points != nullptr) {
    std::copy(given_points, given_points + k, points.begin());
  } else {
    quantiles(qs, k, points.data());
  }
  // The bounds' ranks of every quantile, then one selection pass for all of them.
  std::vector<std::size_t> wanted;
  std::vector<RankInterval> ranks(k);
  std::vector<double> dependence(k);
  batch_dependences(values_, points, {qs, k}, confidence, dependence);
  for (std::size_t i = 0; i < k; ++i) {
    out[i].dependence = dependence[i];
    ranks[i] = interval_ranks(n, qs[i], out[i].dependence, confidence);
    if (ranks[i].low >= 1) wanted.push_back(ranks[i].low - 1);
    if (ranks[i].high <= n) wanted.push_back(ranks[i].high - 1);
  }
  std::vector<std::int64_t> values(wanted.size());
  at_ranks(wanted.data(), wanted.size(), values.data());
  std::size_t next = 0;
  for (std::size_t i = 0; i < k; ++i) {
    if (ranks[i].low >= 1) {
      out[i].has_low = true;
      out[i].low = values[next++];
    }
    if (ranks[i].high <= n) {
      out[i].has_high = true;
      out[i].high = values[next++];
    }
  }
  // The summary's last selection (summarize: quantiles, then intervals, then max): the bucket
  // counts go back to the heap for the next series, which then reuses their 16 KiB instead of
  // faulting in fresh pages (a 512-tenant run's 1,024 series: 16 MiB, 4k page faults; perf,
  // 2026-12-07). The extremes stay (max() is O(1)); a later selection rebuilds the counts.
  std::vector<std::uint32_t>().swap(select_counts_);
}

double ExactQuantiles::dependence(double q) {
  double tau = 1;
  dependences(&q, 1, &tau);
  return tau;
}

void ExactQuantiles::dependences(const double* qs, std::size_t k, double* out) {
  std::fill(out, out + k, 1.0);
  if (values_.empty()) return;
  std::vector<std::int64_t> points(k);
  quantiles(qs, k, points.data());
  batch_dependences(values_, points, {qs, k}, kDefaultConfidence, {out, k});
}

void ExactQuantiles::build_index() {
  std::tie(min_, max_) = min_max(values_);
  const std::uint64_t span = offset_of(max_, min_);
  select_shift_ = -1;
  if (span != 0) {
    select_shift_ = 0;
    while ((span >> select_shift_) >= kSelectBuckets) ++select_shift_;
    fill_histogram(values_, min_, select_shift_, select_counts_);
  } else {
    select_counts_.assign(kSelectBuckets, 0);
  }
  indexed_ = true;
}

std::int64_t ExactQuantiles::max() {
  if (values_.empty()) return 0;
  if (values_.size() <= kSelectSmall) return *std::max_element(values_.begin(), values_.end());
  if (!indexed_) build_index();
  return max_;
}

namespace {

constexpr std::size_t kMaxBuckets =
    (65 - QuantileSketch::kMantissaBits) * QuantileSketch::kSubBuckets;

// The nearest rank of q among n >= 1 samples, in [1, n] (ExactQuantiles' definition).
std::uint64_t nearest_rank(double q, std::uint64_t n) {
  const double r = std::ceil(q * static_cast<double>(n));
  if (!(r >= 1)) return 1;
  if (r >= static_cast<double>(n)) return n;
  return static_cast<std::uint64_t>(r);
}

}  // namespace

std::uint64_t QuantileSketch::bucket_low(std::size_t index) {
  if (index < 2 * kSubBuckets) return index;
  const std::uint64_t shift = index / kSubBuckets - 1;
  return (index - shift * kSubBuckets) << shift;
}

std::uint64_t QuantileSketch::bucket_width(std::size_t index) {
  if (index < 2 * kSubBuckets) return 1;
  return std::uint64_t{1} << (index / kSubBuckets - 1);
}

void QuantileSketch::grow(std::vector<std::uint64_t>& buckets, std::size_t index) {
  // Whole octaves (M buckets, 1 KiB) at a time: at most 58 growths per sketch, so amortized O(1)
  // per add, and never more than one octave beyond the largest index seen.
  const std::size_t octaves = index / QuantileSketch::kSubBuckets + 1;
  const std::size_t size = std::min(kMaxBuckets, octaves * QuantileSketch::kSubBuckets);
  buckets.reserve(size);
  buckets.resize(size, 0);
}

// The extremes first (no branch per sample), so each array grows once, to what the largest
// magnitude needs, as add() would have left it; then one pass. A zero or positive value counts
// in positive_ at index_of(u) computed without its small-value branch (u < 2M is its own index,
// and 0 lands at index 0, which add() never uses: moved to zero_ after the pass). A queue's
// waits are zero or not at random, so add()'s branches mispredicted about half of them.
void QuantileSketch::add_all(const std::int64_t* values, std::size_t n) {
  if (n == 0) return;
  std::int64_t lo = values[0], hi = values[0];
  for (std::size_t i = 1; i < n; ++i) {
    lo = std::min(lo, values[i]);
    hi = std::max(hi, values[i]);
  }
  if (hi > 0) {
    const std::size_t top = index_of(static_cast<std::uint64_t>(hi));
    if (top >= positive_.size()) grow(positive_, top);
  }
  if (lo < 0) {
    const std::size_t top = index_of(std::uint64_t{0} - static_cast<std::uint64_t>(lo));
    if (top >= negative_.size()) grow(negative_, top);
  }
  double sum = sum_;
  if (positive_.empty()) {  // no positive sample yet: nothing to borrow index 0 of
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t v = values[i];
      sum += static_cast<double>(v);
      if (v < 0) {
        ++negative_[index_of(std::uint64_t{0} - static_cast<std::uint64_t>(v))];
      } else {
        ++zero_;  // (hi <= 0 here)
      }
    }
  } else {
    std::uint64_t* const positive = positive_.data();
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t v = values[i];
      sum += static_cast<double>(v);
      if (v < 0) [[unlikely]] {
        ++negative_[index_of(std::uint64_t{0} - static_cast<std::uint64_t>(v))];
        continue;
      }
      const std::uint64_t u = static_cast<std::uint64_t>(v);
      const int top_bit = 63 - __builtin_clzll(u | 1);
      const int shift = top_bit > kMantissaBits ? top_bit - kMantissaBits : 0;
      ++positive[static_cast<std::uint64_t>(shift) * kSubBuckets + (u >> shift)];
    }
    zero_ += positive_[0];
    positive_[0] = 0;
  }
  sum_ = sum;
  if (count_ == 0 || lo < min_) min_ = lo;
  if (count_ == 0 || hi > max_) max_ = hi;
  count_ += n;
}

void QuantileSketch::merge(const QuantileSketch& other) {
  if (other.count_ == 0) return;
  for (auto [mine, theirs] :
       {std::pair{&positive_, &other.positive_}, std::pair{&negative_, &other.negative_}}) {
    if (theirs->size() > mine->size()) grow(*mine, theirs->size() - 1);
    for (std::size_t i = 0; i < theirs->size(); ++i) (*mine)[i] += (*theirs)[i];
  }
  zero_ += other.zero_;
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
}

std::int64_t QuantileSketch::quantile(double q) const {
  if (count_ == 0) return 0;
  return at_rank(nearest_rank(q, count_));
}

std::int64_t QuantileSketch::at_rank(std::uint64_t rank) const {
  if (count_ == 0) return 0;
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  if (rank == 1) return min_;
  if (rank == count_) return max_;
  // The middle of the bucket holding the rank-th smallest sample, clamped to [min, max] (which
  // holds that sample too, so the clamp only brings the answer closer).
  auto clamp = [this](std::int64_t v) { return std::clamp(v, min_, max_); };
  std::uint64_t seen = 0;
  for (std::size_t i = negative_.size(); i-- > 0;) {  // most negative first
    seen += negative_[i];
    if (seen >= rank) {
      const std::uint64_t middle = bucket_low(i) + bucket_width(i) / 2;
      if (middle > std::uint64_t{1} << 63) return min_;  // beyond int64: clamped to min
      return clamp(static_cast<std::int64_t>(std::uint64_t{0} - middle));
    }
  }
  seen += zero_;
  if (seen >= rank) return 0;
  for (std::size_t i = 0; i < positive_.size(); ++i) {
    seen += positive_[i];
    if (seen >= rank) {
      const std::uint64_t middle = bucket_low(i) + bucket_width(i) / 2;
      return middle > static_cast<std::uint64_t>(max_) ? max_
                                                       : clamp(static_cast<std::int64_t>(middle));
    }
  }
  return max_;  // unreachable: the counts add up to count_
}

Percentiles::Percentiles(PercentileMethod method, std::size_t exact_cap)
    : cap_(method == PercentileMethod::exact ? std::numeric_limits<std::size_t>::max() : exact_cap),
      exact_active_(method != PercentileMethod::sketch) {}

void Percentiles::reserve(std::size_t n) {
  if (exact_active_) exact_.reserve(std::min(n, cap_));
}

void Percentiles::intervals(const double* qs, std::size_t k, double confidence,
                            QuantileInterval* out, const std::int64_t* points) {
  if (exact_active_) {
    exact_.intervals(qs, k, confidence, out, points);
    return;
  }
  const std::size_t n = sketch_.count();
  for (std::size_t i = 0; i < k; ++i) {
    out[i] = QuantileInterval{};
    if (n == 0) continue;
    double tau = 1;
    for (std::size_t j = 0; j < kReportedQuantiles.size(); ++j) {
      if (kReportedQuantiles[j] == qs[i]) tau = folded_dependence_[j];
    }
    const RankInterval r = interval_ranks(n, qs[i], tau, confidence);
    out[i].dependence = tau;
    out[i].has_low = r.low >= 1;
    if (out[i].has_low) out[i].low = sketch_.at_rank(r.low);
    out[i].has_high = r.high <= n;
    if (out[i].has_high) out[i].high = sketch_.at_rank(r.high);
  }
}

void Percentiles::fold() {
  // The dependence of the reported quantiles, measured while the samples are still here.
  exact_.dependences(kReportedQuantiles.data(), kReportedQuantiles.size(),
                     folded_dependence_.data());
  sketch_.add_all(exact_.values().data(), exact_.values().size());
  exact_.clear();
  exact_active_ = false;
}

// ---- A series as bytes (encode / decode) -------------------------------------------------------
namespace {

// LEB128: 7 bits a byte, low first, the high bit set on every byte but the last.
void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
std::uint64_t take_varint(const std::string& in, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at >= in.size()) throw std::runtime_error("latency series: short buffer");
    const auto byte = static_cast<std::uint8_t>(in[at++]);
    v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return v;
  }
  throw std::runtime_error("latency series: corrupt number");
}
// Zigzag: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ... (small magnitudes stay short either sign).
void put_signed(std::string& out, std::int64_t v) {
  put_varint(out, (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
}
std::int64_t take_signed(const std::string& in, std::size_t& at) {
  const std::uint64_t u = take_varint(in, at);
  return static_cast<std::int64_t>((u >> 1) ^ (std::uint64_t{0} - (u & 1)));
}
// A double's bits, low byte first (a sum: the mean comes back bit for bit).
void put_double(std::string& out, double v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}
double take_double(const std::string& in, std::size_t& at) {
  if (in.size() - std::min(at, in.size()) < 8) {
    throw std::runtime_error("latency series: short buffer");
  }
  std::uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) {
    bits |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(in[at + i])) << (8 * i);
  }
  at += 8;
  double v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace

void QuantileSketch::encode(std::string& out) const {
  put_varint(out, count_);
  put_varint(out, zero_);
  put_signed(out, min_);
  put_signed(out, max_);
  put_double(out, sum_);
  for (const std::vector<std::uint64_t>* buckets : {&positive_, &negative_}) {
    std::size_t first = 0, last = buckets->size();  // the nonzero buckets: [first, last)
    while (first < last && (*buckets)[first] == 0) ++first;
    while (last > first && (*buckets)[last - 1] == 0) --last;
    put_varint(out, first);
    put_varint(out, last - first);
    for (std::size_t i = first; i < last; ++i) put_varint(out, (*buckets)[i]);
  }
}

QuantileSketch QuantileSketch::decode(const std::string& in, std::size_t& at) {
  QuantileSketch s;
  s.count_ = take_varint(in, at);
  s.zero_ = take_varint(in, at);
  s.min_ = take_signed(in, at);
  s.max_ = take_signed(in, at);
  s.sum_ = take_double(in, at);
  std::uint64_t total = s.zero_;
  for (std::vector<std::uint64_t>* buckets : {&s.positive_, &s.negative_}) {
    const std::uint64_t first = take_varint(in, at);
    const std::uint64_t length = take_varint(in, at);
    if (first > kMaxBuckets || length > kMaxBuckets - first || length > in.size() - at) {
      throw std::runtime_error("latency series: corrupt sketch buckets");
    }
    if (length == 0) continue;
    grow(*buckets, static_cast<std::size_t>(first + length - 1));
    for (std::uint64_t i = first; i < first + length; ++i) {
      const std::uint64_t n = take_varint(in, at);
      (*buckets)[static_cast<std::size_t>(i)] = n;
      total += n;
    }
  }
  if (total != s.count_ || (s.count_ > 0 && s.min_ > s.max_)) {
    throw std::runtime_error("latency series: corrupt sketch counts");
  }
  return s;
}

void ExactQuantiles::encode(std::string& out) const {
  std::vector<std::int64_t> sorted(values_.begin(), values_.end());
  std::sort(sorted.begin(), sorted.end());
  put_varint(out, sorted.size());
  put_double(out, sum_);
  std::int64_t previous = 0;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i == 0) {
      put_signed(out, sorted[0]);
    } else {
      put_varint(out, static_cast<std::uint64_t>(sorted[i]) - static_cast<std::uint64_t>(previous));
    }
    previous = sorted[i];
  }
}

ExactQuantiles ExactQuantiles::decode(const std::string& in, std::size_t& at) {
  ExactQuantiles e;
  const std::uint64_t n = take_varint(in, at);
  const double sum = take_double(in, at);
  if (n > in.size() - at) throw std::runtime_error("latency series: corrupt sample count");
  e.values_.reserve(static_cast<std::size_t>(n));
  std::int64_t value = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    value =
        i == 0 ? take_signed(in, at)
               : static_cast<std::int64_t>(static_cast<std::uint64_t>(value) + take_varint(in, at));
    e.values_.push_back(value);
  }
  e.sum_ = sum;
  return e;
}

void Percentiles::encode(std::string& out) const {
  if (exact_active_) {
    out.push_back('e');
    exact_.encode(out);
  } else {
    out.push_back('s');
    sketch_.encode(out);
  }
}

Percentiles Percentiles::decode(const std::string& in, std::size_t& at) {
  if (at >= in.size()) throw std::runtime_error("latency series: short buffer");
  const char kind = in[at++];
  if (kind == 'e') {
    Percentiles p(PercentileMethod::exact);
    p.exact_ = ExactQuantiles::decode(in, at);
    return p;
  }
  if (kind != 's') throw std::runtime_error("latency series: unknown kind");
  Percentiles p(PercentileMethod::sketch);
  p.sketch_ = QuantileSketch::decode(in, at);
  return p;
}

void Percentiles::merge(const Percentiles& other) {
  if (exact_active_ && other.exact_active_) {
    for (const std::int64_t v : other.exact_.values()) exact_.add(v);
    return;
  }
  if (exact_active_) {
    sketch_.add_all(exact_.values().data(), exact_.values().size());
    exact_.clear();
    exact_active_ = false;
    folded_dependence_ = {1, 1, 1, 1};
  }
  if (other.exact_active_) {
    sketch_.add_all(other.exact_.values().data(), other.exact_.values().size());
  } else {
    sketch_.merge(other.sketch_);
  }
}

}  // namespace gpumux
