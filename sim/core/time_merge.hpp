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
// comparisons per element; from it on a radix sort on time (sort_in_time_order), O(n) with 2
// scattering passes for a window of a second (the top bits of its span only, then a pass that
// puts the rare runs sharing those bits in order). Each element is read twice, once for its key
// and once when it is emitted (fetched a few ahead of its turn). Tried against the radix sort and
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

namespace time_merge_detail {

inline constexpr int kDigitBits = 11;
inline constexpr std::size_t kDigits = std::size_t{1} << kDigitBits;

// Bits needed to write X (0 for 0).
inline int bit_length(std::uint64_t x) { return x == 0 ? 0 : 64 - __builtin_clzll(x); }

// How many of a span's top bits the radix passes sort for TOTAL elements: enough that a
// run of elements sharing them is rare (about 2^5 such values per element: with times spread
// over the span, 1 in 32 elements shares its value with another), so the passes skip the
// low bits that order almost nothing (a window of a second, 30 bits, 2^17 elements: 22
// bits, 2 passes of 11 bits instead of 3). Whatever the times, sort_runs finishes the order.
inline int sorted_time_bits(int span_bits, std::size_t total) {
  return std::min(span_bits, bit_length(total) + 5);
}

// Sorts each run of WORDS[0..n) whose words are equal above bit SHIFT (the runs' order is
// already right): the words are then in ascending order. One pass that compares each word with
// the one before (8.7 instructions a record in all, against 17 comparing the runs' bits:
// cachegrind); a pair out of order shares its high bits, and its whole run is sorted, once.
// A run of m words costs O(m log m) at most, however many there are.
inline void sort_runs(std::uint64_t* words, std::size_t n, int shift) {
  for (std::size_t i = 1; i < n; ++i) {
    if (words[i] >= words[i - 1]) continue;
    const std::uint64_t high = words[i] >> shift;
    std::size_t begin = i - 1;
    while (begin > 0 && (words[begin - 1] >> shift) == high) --begin;
    std::size_t end = i + 1;
    while (end < n && (words[end] >> shift) == high) ++end;
    std::sort(words + begin, words + end);
    i = end - 1;
  }
}

}  // namespace time_merge_detail

// The order merge_in_time_order gives, by a stable sort on time of every element of SOURCES
// taken source by source (so ties stay by source, then position): a least-significant-digit
// radix sort of (time - earliest, element) pairs, at most 11 bits a pass over the window's span
// of time (2 passes for a window of a second: sorted_time_bits), about 15 instructions per
// element against the tournament
// tree's log2(sources) matches of 128-bit keys and their branches (9 at 512 components:
// Run::flush_records was 18 % of a 512-GPU `run -o`, perf, 2026-12-06). The same order only if
// every source is already in time order (a merge never reorders a source, a sort would): false,
// with nothing emitted, when one is not. Clears the sources when done.
//
// The radix sort's two forms. Packed (when it fits: bits of the window's span + bits of the
// source number + bits of the longest source's positions <= 64, e.g. 29 + 9 + 8 at 512
// components with a window of 0.3 s): each element one 64-bit word, (time - earliest) above
// (source, position); sorting the words on the time bits alone, stably, from the order taken
// source by source, is the order above (ties by source, then position), and the element is
// found again from the word's low bits. The three digits' counts are taken in the same pass
// as the keys. Else the element's 64-bit key beside a pointer to it (16 bytes). The packed
// form halves what the passes move (a window of 65k records: 512 KB instead of 1 MB, within
// this machine's 1 MB L2) and drops the counting pass before each scatter.
template <class T, class TimeOf, class Emit>
bool sort_in_time_order(const std::vector<std::vector<T>*>& sources, TimeOf time_of, Emit emit) {
  using namespace time_merge_detail;
  // The span from the sources' ends (a source out of order is caught below, before any use of
  // a key), then one pass over the elements that both checks each source's order and takes the
  // keys: the elements are read once here and once when emitted (a separate check pass was a
  // third read of a window's records, most of them out of the caches by then).
  Nanos earliest = time_of(sources.front()->front()), latest = earliest;
  std::size_t total = 0, longest = 0;
  for (std::vector<T>* source : sources) {
    earliest = std::min(earliest, time_of(source->front()));
    latest = std::max(latest, time_of(source->back()));
    total += source->size();
    longest = std::max(longest, source->size());
  }
  const std::uint64_t span =
      static_cast<std::uint64_t>(latest) - static_cast<std::uint64_t>(earliest);
  const int span_bits = bit_length(span);
  const int position_bits = bit_length(longest - 1);
  const int index_bits = position_bits + bit_length(sources.size() - 1);
  // The elements were written while the window ran and have left the caches since: each is
  // fetched a few ahead of its turn (half of this function's time was that miss, perf).
  // Both lines of an element that straddles two (a request's outcome is 80 bytes).
  constexpr std::size_t kAhead = 16;
  const auto prefetch = [](const T* ahead) {
    __builtin_prefetch(ahead);
    __builtin_prefetch(reinterpret_cast<const char*>(ahead) + sizeof(T) - 1);
  };
  if (span_bits + index_bits <= 64) {
    // The digits sort the top `sorted_bits` of the span only; the words that share those bits
    // (a run) are put in order by a sort of the run after the passes (nearly always a run of
    // one: see sorted_time_bits).
    const int sorted_bits = sorted_time_bits(span_bits, total);
    const int passes = (sorted_bits + kDigitBits - 1) / kDigitBits;
    const int digit_bits = passes == 0 ? 0 : (sorted_bits + passes - 1) / passes;
    const std::size_t digits = std::size_t{1} << digit_bits;
    const int unsorted_bits = span_bits - sorted_bits;
    // The thread's buffers, reused from window to window (fresh ones were megabytes of new
    // pages per window at 512 components).
    thread_local std::vector<std::uint64_t> from, to;
    thread_local std::vector<std::size_t> counts;
    from.resize(total);
    to.resize(total);
    counts.assign(static_cast<std::size_t>(passes) * digits, 0);
    {
      std::uint64_t* at = from.data();
      std::uint64_t source_index = 0;
      for (std::size_t s = 0; s < sources.size(); ++s) {
        std::vector<T>& source = *sources[s];
        // The next source's first lines while this one is read (each source is read in
        // order, but its start is a miss the hardware's stream prefetch does not foresee).
        if (s + 1 < sources.size()) {
          const auto next = reinterpret_cast<std::uintptr_t>(sources[s + 1]->data());
          for (std::uintptr_t line = 0; line < 4; ++line) {
            __builtin_prefetch(reinterpret_cast<const void*>(next + 64 * line));
          }
        }
        Nanos previous = earliest;
        std::uint64_t index = source_index << position_bits;
        // An address, not a pointer: it runs past the source's end (a prefetch never faults).
        std::uintptr_t ahead = reinterpret_cast<std::uintptr_t>(source.data()) + 256;
        for (T& x : source) {
          __builtin_prefetch(reinterpret_cast<const void*>(ahead));
          ahead += sizeof(T);
          const Nanos time = time_of(x);
          if (time < previous) return false;
          previous = time;
          const std::uint64_t key =
              static_cast<std::uint64_t>(time) - static_cast<std::uint64_t>(earliest);
          *at++ = index_bits < 64 ? (key << index_bits) | index : index;
          const std::uint64_t sorted_key = key >> unsorted_bits;
          for (int p = 0; p < passes; ++p) {
            ++counts[static_cast<std::size_t>(p) * digits +
                     ((sorted_key >> (p * digit_bits)) & (digits - 1))];
          }
          ++index;
        }
        ++source_index;
      }
    }
    for (int p = 0; p < passes; ++p) {
      std::size_t* start = counts.data() + static_cast<std::size_t>(p) * digits;
      std::size_t at = 0;
      for (std::size_t d = 0; d < digits; ++d) {
        const std::size_t count = start[d];
        start[d] = at;
        at += count;
      }
      const int shift = index_bits + unsorted_bits + p * digit_bits;
      for (const std::uint64_t word : from) to[start[(word >> shift) & (digits - 1)]++] = word;
      from.swap(to);
    }
    // The runs of words equal in their sorted bits, each sorted whole: the word's order is
    // (time, source, position), the order wanted.
    if (unsorted_bits > 0) sort_runs(from.data(), total, index_bits + unsorted_bits);
    const std::uint64_t index_mask =
        index_bits < 64 ? (std::uint64_t{1} << index_bits) - 1 : ~std::uint64_t{0};
    const std::uint64_t position_mask = (std::uint64_t{1} << position_bits) - 1;
    // The sources' first elements side by side (a 512-component window's 4 KiB stay in L1;
    // through each source's vector they were a dependent load from its component per element).
    thread_local std::vector<T*> base;
    base.resize(sources.size());
    for (std::size_t s = 0; s < sources.size(); ++s) base[s] = sources[s]->data();
    const auto element = [&](std::uint64_t word) -> T& {
      const std::uint64_t index = word & index_mask;
      return base[index >> position_bits][index & position_mask];
    };
    for (std::size_t i = 0; i < total; ++i) {
      if (i + kAhead < total) prefetch(&element(from[i + kAhead]));
      emit(element(from[i]));
    }
    for (std::vector<T>* source : sources) source->clear();
    return true;
  }
  struct Entry {
    std::uint64_t key;  // time - earliest
    T* element;
  };
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
  for (std::size_t i = 0; i < total; ++i) {
    if (i + kAhead < total) prefetch(from[i + kAhead].element);
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
