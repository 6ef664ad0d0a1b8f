#pragma once
// The records of several independent parts of a run (components.cpp: a window's request, kernel
// and event records, each component's in the order it made them) handed on in one time order.
//
// Order. Every element of every source, by time_of(element); ties by source, then by position
// within the source: the order of a stable merge of the sources, and the order of a stable sort
// on time of the sources' elements taken source by source (the two are the same when every
// source is in time order, which the sort checks: a merge never reorders a source, a sort would).
//
// Cost, n elements from k sources: below kSortFromSources a tournament (loser) tree, log2(k)
// comparisons per element; from it on a radix sort on time (sort_in_time_order), O(n) with 3
// scattering passes for a window of a second. Each element is read twice, once for its key and
// once when it is emitted (fetched a few ahead of its turn). Tried against the radix sort and
// not taken (2026-12-07, a 512-source bench of 80-byte records evicted from the caches between
// windows): a bucket sort (n / 2 buckets, one scatter, an insertion sort within buckets), 8-30 %
// slower: its scatter and the insertion sort's mispredicted branches cost more than the two
// passes it saves.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/time.hpp"

namespace gpumux {

/// From this many sources, merge_in_time_order sorts (sort_in_time_order) instead of merging.
inline constexpr std::size_t kSortFromSources = 16;

// The order merge_in_time_order gives, by a stable sort on time of every element of SOURCES
// taken source by source (so ties stay by source, then position): a least-significant-digit
// radix sort of (time - earliest, element) pairs, 11 bits a pass over the window's span of time
// (3 passes for a window of a second), about 15 instructions per element against the tournament
// tree's log2(sources) matches of 128-bit keys and their branches (9 at 512 components:
// Run::flush_records was 18 % of a 512-GPU `run -o`, perf, 2026-12-06). The same order only if
// every source is already in time order (a merge never reorders a source, a sort would): false,
// with nothing emitted, when one is not. Clears the sources when done.
template <class T, class TimeOf, class Emit>
bool sort_in_time_order(const std::vector<std::vector<T>*>& sources, TimeOf time_of, Emit emit) {
  struct Entry {
    std::uint64_t key;  // time - earliest
    T* element;
  };
  constexpr int kDigitBits = 11;
  constexpr std::size_t kDigits = std::size_t{1} << kDigitBits;
  // The span from the sources' ends (a source out of order is caught below, before any use of
  // a key), then one pass over the elements that both checks each source's order and takes the
  // keys: the elements are read once here and once when emitted (a separate check pass was a
  // third read of a window's records, most of them out of the caches by then).
  Nanos earliest = time_of(sources.front()->front()), latest = earliest;
  std::size_t total = 0;
  for (std::vector<T>* source : sources) {
    earliest = std::min(earliest, time_of(source->front()));
    latest = std::max(latest, time_of(source->back()));
    total += source->size();
  }
  // The thread's buffers, reused from window to window (fresh ones were megabytes of new pages
  // per window at 512 components).
  thread_local std::vector<Entry> from, to;
  from.resize(total);
  to.resize(total);
  {
    Entry* at = from.data();
    for (std::vector<T>* source : sources) {
      Nanos previous = earliest;
      for (T& x : *source) {
        const Nanos time = time_of(x);
        if (time < previous) return false;
        previous = time;
        *at++ = {static_cast<std::uint64_t>(time) - static_cast<std::uint64_t>(earliest), &x};
      }
    }
  }
  const std::uint64_t span =
      static_cast<std::uint64_t>(latest) - static_cast<std::uint64_t>(earliest);
  std::vector<std::size_t> start(kDigits);
  for (int shift = 0; shift < 64 && (span >> shift) != 0; shift += kDigitBits) {
    std::fill(start.begin(), start.end(), std::size_t{0});
    for (const Entry& e : from) ++start[(e.key >> shift) & (kDigits - 1)];
    std::size_t at = 0;
    for (std::size_t& d : start) {
      const std::size_t count = d;
      d = at;
      at += count;
    }
    for (const Entry& e : from) to[start[(e.key >> shift) & (kDigits - 1)]++] = e;
    from.swap(to);
  }
  // The elements were written while the window ran and have left the caches since: each is
  // fetched a few ahead of its turn (half of this function's time was that miss, perf).
  // Both lines of an element that straddles two (a request's outcome is 80 bytes).
  constexpr std::size_t kAhead = 16;
  for (std::size_t i = 0; i < total; ++i) {
    if (i + kAhead < total) {
      const T* ahead = from[i + kAhead].element;
      __builtin_prefetch(ahead);
      __builtin_prefetch(reinterpret_cast<const char*>(ahead) + sizeof(T) - 1);
    }
    emit(*from[i].element);
  }
  for (std::vector<T>* source : sources) source->clear();
  return true;
}

/// Hands every element of SOURCES to EMIT in order of time_of(element), ties by source, then by
/// position within the source; clears the sources. Empty sources are allowed.
template <class T, class TimeOf, class Emit>
void merge_in_time_order(std::vector<std::vector<T>*> sources, TimeOf time_of, Emit emit) {
  std::erase_if(sources, [](const std::vector<T>* s) { return s->empty(); });
  if (sources.empty()) return;
  if (sources.size() == 1) {
    for (T& x : *sources.front()) emit(x);
    sources.front()->clear();
    return;
  }
  if (sources.size() >= kSortFromSources && sort_in_time_order(sources, time_of, emit)) return;
  // A tournament (loser) tree over the sources' next elements: leaves k..2k-1 are the sources,
  // internal node i (1..k-1) holds the loser of the match between its children's winners,
  // node 0 the overall winner. A node is the element's key, (time, source) in one 128-bit
  // number (the time's bits offset to unsigned order above the source), so a match is one
  // comparison and the source is the key's low half; an exhausted source is all ones, after
  // every element. Each element: emitted, then its source's next key replays its matches up
  // to the root, log2(k) comparisons (a binary heap's pop and push make about twice that).
  __extension__ typedef unsigned __int128 Key;
  const std::size_t k = sources.size();
  const Key exhausted = ~Key{0};
  auto key_of = [](Nanos time, std::size_t source) {
    const std::uint64_t ordered = static_cast<std::uint64_t>(time) ^ (std::uint64_t{1} << 63);
    return (static_cast<Key>(ordered) << 64) | source;
  };
  std::vector<Key> node(k), winner(2 * k);
  std::vector<std::size_t> position(k, 0);
  std::size_t total = 0;
  for (std::size_t s = 0; s < k; ++s) {
    winner[k + s] = key_of(time_of((*sources[s])[0]), s);
    total += sources[s]->size();
  }
  for (std::size_t i = k - 1; i >= 1; --i) {
    const Key a = winner[2 * i], b = winner[2 * i + 1];
    winner[i] = std::min(a, b);
    node[i] = std::max(a, b);
  }
  node[0] = winner[1];
  for (; total > 0; --total) {
    const auto s = static_cast<std::size_t>(static_cast<std::uint64_t>(node[0]));
    std::vector<T>& source = *sources[s];
    emit(source[position[s]]);
    Key w = ++position[s] < source.size() ? key_of(time_of(source[position[s]]), s) : exhausted;
    for (std::size_t i = (k + s) / 2; i >= 1; i /= 2) {
      if (node[i] < w) std::swap(node[i], w);
    }
    node[0] = w;
  }
  for (std::vector<T>* source : sources) source->clear();
}

}  // namespace gpumux
