#include "sim/io/table_stream.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpumux::h5 {
namespace {

// One zlib stream state per thread, reset between chunks (deflateInit2 allocates ~268 KiB).
class Deflater {
 public:
  explicit Deflater(int strategy) {
    if (deflateInit2(&z_, 1, Z_DEFLATED, 15, 8, strategy) != Z_OK) {
      throw std::runtime_error("deflate: cannot initialise zlib");
    }
  }
  ~Deflater() { deflateEnd(&z_); }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;

  std::vector<std::byte> deflate(const std::byte* data, std::size_t size) {
    if (deflateReset(&z_) != Z_OK) throw std::runtime_error("deflate: reset failed");
    std::vector<std::byte> out(deflateBound(&z_, static_cast<uLong>(size)));
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(data));
    z_.avail_in = static_cast<uInt>(size);
    z_.next_out = reinterpret_cast<Bytef*>(out.data());
    z_.avail_out = static_cast<uInt>(out.size());
    if (::deflate(&z_, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate failed");
    out.resize(z_.total_out);
    return out;
  }

 private:
  z_stream z_{};
};

// --- Deflate::planes: one deflate block per shuffled byte plane (RFC 1950/1951) ---------------
// After the shuffle a chunk is row_size planes of chunk_rows bytes. A plane is either nearly
// constant (high bytes of times and ids), a few long runs (bytes that change every few rows),
// or close to uniform (low bytes of times). Each plane becomes one block: a fixed-Huffman block
// of literals and distance-1 matches (the runs) when that is smaller, else a stored block (a
// copy). No hashing, no Huffman trees: a scan and a copy per byte.

class BitWriter {
 public:
  // Writes into OUT from byte AT on; OUT must already have room for every byte written
  // (deflate_planes sizes it to a bound first: no capacity check per write).
  BitWriter(std::vector<std::byte>& out, std::size_t at) : out_(out.data()), at_(at) {}
  // COUNT (<= 32) bits of VALUE, least significant first. Whole bytes go out four at a time
  // (the accumulator holds fewer than 32 bits between calls).
  void bits(std::uint32_t value, int count) {
    acc_ |= static_cast<std::uint64_t>(value) << fill_;
    fill_ += count;
    if (fill_ >= 32) {
      // The low byte first, as deflate orders bits, on any host's byte order (one 4-byte store
      // on a little-endian one).
      for (std::size_t i = 0; i < 4; ++i) {
        out_[at_ + i] = static_cast<std::byte>((acc_ >> (8 * i)) & 0xFF);
      }
      at_ += 4;
      acc_ >>= 32;
      fill_ -= 32;
    }
  }
  // Pads to a byte boundary and writes out every whole byte: the output then ends where the
  // bits do (what a stored block's raw bytes and the zlib trailer are appended to).
  void align() {
    if (fill_ % 8 != 0) fill_ += 8 - fill_ % 8;
    for (; fill_ > 0; fill_ -= 8) {
      out_[at_++] = static_cast<std::byte>(acc_ & 0xFF);
      acc_ >>= 8;
    }
  }
  // N raw bytes (after align()).
  void raw(const std::uint8_t* data, std::size_t n) {
    if (n > 0) std::memcpy(out_ + at_, data, n);
    at_ += n;
  }
  // Bytes written so far (after align(): all of them).
  std::size_t size() const { return at_; }

 private:
  std::byte* out_;
  std::size_t at_;
  std::uint64_t acc_ = 0;
  int fill_ = 0;
};

// A fixed Huffman code (RFC 1951 3.2.6) with its bits already reversed for BitWriter::bits.
struct FixedCode {
  std::uint16_t reversed;
  std::uint8_t length;
};

std::uint32_t reverse_bits(std::uint32_t code, int length) {
  std::uint32_t reversed = 0;
  for (int i = 0; i < length; ++i) reversed |= ((code >> i) & 1U) << (length - 1 - i);
  return reversed;
}

// The fixed code of every literal/length symbol 0..287 (RFC 1951 3.2.6), computed once.
const std::array<FixedCode, 288>& fixed_codes() {
  static const std::array<FixedCode, 288> table = [] {
    std::array<FixedCode, 288> t{};
    for (unsigned symbol = 0; symbol < 288; ++symbol) {
      std::uint32_t code = 0;
      int length = 0;
      if (symbol < 144) {
        code = 0x30 + symbol, length = 8;
      } else if (symbol < 256) {
        code = 0x190 + (symbol - 144), length = 9;
      } else if (symbol < 280) {
        code = symbol - 256, length = 7;
      } else {
        code = 0xC0 + (symbol - 280), length = 8;
      }
      t[symbol] = {static_cast<std::uint16_t>(reverse_bits(code, length)),
                   static_cast<std::uint8_t>(length)};
    }
    return t;
  }();
  return table;
}

// Fixed Huffman code of a literal/length symbol (RFC 1951 3.2.6): one look-up in CODES.
void fixed_symbol(BitWriter& w, const std::array<FixedCode, 288>& codes, unsigned symbol) {
  w.bits(codes[symbol].reversed, codes[symbol].length);
}

int fixed_literal_bits(unsigned value) { return value < 144 ? 8 : 9; }

struct LengthCode {
  std::uint16_t symbol;
  std::uint8_t extra_bits;
  std::uint16_t extra;
};

// Length 3..258 -> symbol 257..285 and its extra bits.
const std::array<LengthCode, 259>& length_codes() {
  static const std::array<LengthCode, 259> table = [] {
    constexpr std::array<std::uint16_t, 29> base = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                                    15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                                    67, 83, 99, 115, 131, 163, 195, 227, 258};
    constexpr std::array<std::uint8_t, 29> extra = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                    2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    std::array<LengthCode, 259> t{};
    for (std::size_t i = 0; i < base.size(); ++i) {
      const std::size_t last = i + 1 < base.size() ? base[i + 1] - 1U : 258U;
      for (std::size_t length = base[i]; length <= last && length <= 258; ++length) {
        t[length] = {static_cast<std::uint16_t>(257 + i), extra[i],
                     static_cast<std::uint16_t>(length - base[i])};
      }
    }
    t[258] = {285, 0, 0};
    return t;
  }();
  return table;
}

// The match lengths a run of REST repeated bytes is cut into (each 3..258), literals for 1-2.
template <class Match, class Literal>
void cut_run(std::size_t rest, Match&& match, Literal&& literal) {
  while (rest >= 3) {
    std::size_t length = std::min<std::size_t>(rest, 258);
    if (rest - length > 0 && rest - length < 3) length = rest - 3;  // leave a matchable tail
    match(length);
    rest -= length;
  }
  for (; rest > 0; --rest) literal();
}

// The end of the run of bytes equal to plane[i] (8 bytes compared at a time).
std::size_t run_end(const std::uint8_t* plane, std::size_t i, std::size_t n) {
  const std::uint64_t pattern = 0x0101010101010101ULL * plane[i];
  std::size_t j = i + 1;
  for (; j + 8 <= n; j += 8) {
    std::uint64_t word;
    std::memcpy(&word, plane + j, 8);
    if (const std::uint64_t diff = word ^ pattern; diff != 0) {
      return j + static_cast<std::size_t>(__builtin_ctzll(diff) >> 3);  // little-endian
    }
  }
  while (j < n && plane[j] == plane[i]) ++j;
  return j;
}

// A run of at least 4 equal bytes of a plane (its first byte a literal, the rest distance-1
// matches: cut_run); shorter runs are literals, byte by byte.
struct LongRun {
  std::size_t start, length;
};

// Bits of the matches (and literals: never, for REST >= 3) cut_run gives a run's REST bytes.
std::size_t match_bits(std::size_t rest) {
  const auto& lengths = length_codes();
  std::size_t bits = 0;
  cut_run(
      rest,
      [&](std::size_t length) {
        const LengthCode& c = lengths[length];
        bits += (c.symbol < 280 ? 7U : 8U) + c.extra_bits + 5U;  // + distance code 0
      },
      [&] { bits += 9; });
  return bits;
}

// Whether PLANE is smaller as a fixed-Huffman block of literals and distance-1 matches than as
// a stored block (8 bits per byte), and if so its long runs (RUNS, in order): the block is then
// a literal per byte, but a run of 4 or more equal bytes is its first byte's literal and
// matches for the rest. The symbols are those of a parse run by run (a run's first byte a
// literal, then cut_run), so the choice and the block are those of that parse, which stopped
// (stored) at a run's start where its bits so far exceeded 8 per byte + 256 and otherwise
// compared its total with a stored block's 8 per byte + 32.
//
// Cost: one pass of 16 bytes a step (SSE2: three byte compares for the runs of 4, one for the
// literals of 9 bits) and a step per long run, where the run-by-run parse took a step and a
// mispredicted branch or two per run (2,000 runs of 1-3 bytes in the second byte of an
// interleaved tenant column: the planes of 512 tenants' rows cost 1.5x those of one, perf and
// bench, 2026-12-07).
//
// Exactness. slack = bits - 8 x (bytes parsed), with the block's header and end (10 bits). A
// literal adds 8 bits (9 from byte value 144: slack + 1), so between long runs slack never
// decreases; a long run's matches can lower it. The parse run by run stops at a run start where
// slack > 256; every long run's start is a run start, and between two long runs slack at the
// later one's start is at least slack anywhere before it, so the stop happens iff slack > 256
// at a long run's start or anywhere in the last stretch (and there the total's slack is above
// 256 too, so both choose the stored block). Stopping as soon as slack > 256 at any byte is
// therefore the same choice.
// Set bits of a 16-bit mask, without a library call (the baseline x86-64 target has no popcnt).
int bits_set(unsigned x) {
  x = x - ((x >> 1) & 0x5555U);
  x = (x & 0x3333U) + ((x >> 2) & 0x3333U);
  x = (x + (x >> 4)) & 0x0F0FU;
  return static_cast<int>((x + (x >> 8)) & 0x1FU);
}

bool fixed_block_smaller(const std::uint8_t* plane, std::size_t n, std::vector<LongRun>& runs) {
  runs.clear();
  std::int64_t slack = 3 + 7;  // header, end of block
  std::size_t k = 0;
  // A long run at S (a run start; slack counted up to S): its matches, then on after it.
  const auto long_run = [&](std::size_t s) {
    const std::size_t end = run_end(plane, s, n);
    const std::size_t rest = end - s - 1;
    slack += static_cast<std::int64_t>(fixed_literal_bits(plane[s]) - 8) +
             static_cast<std::int64_t>(match_bits(rest)) - static_cast<std::int64_t>(8 * rest);
    runs.push_back({s, end - s});
    k = end;
  };
#if defined(__SSE2__)
  const __m128i v144 = _mm_set1_epi8(static_cast<char>(144));
  while (k + 19 <= n) {  // bytes k .. k + 18 readable
    const auto* p = reinterpret_cast<const __m128i*>(plane + k);
    const __m128i a = _mm_loadu_si128(p);
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane + k + 1));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane + k + 2));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane + k + 3));
    const auto four = static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(
        _mm_and_si128(_mm_cmpeq_epi8(a, b), _mm_cmpeq_epi8(b, c)), _mm_cmpeq_epi8(c, d))));
    const auto high =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(a, v144), a)));
    if (four == 0) {
      slack += bits_set(high);
      k += 16;
      if (slack > 256) return false;
      continue;
    }
    // The first byte from which 4 are equal: a run's start (k is one, and a run starting
    // before it in this group would have set an earlier bit).
    const unsigned at = static_cast<unsigned>(__builtin_ctz(four));
    slack += bits_set(high & ((1U << at) - 1U));
    if (slack > 256) return false;
    long_run(k + at);
  }
#endif
  while (k < n) {
    if (k + 3 < n && plane[k] == plane[k + 1] && plane[k] == plane[k + 2] &&
        plane[k] == plane[k + 3]) {
      if (slack > 256) return false;
      long_run(k);
      continue;
    }
    slack += fixed_literal_bits(plane[k]) - 8;
    ++k;
    if (slack > 256) return false;
  }
  return slack < 32;
}

// The fixed-Huffman block of PLANE with its long runs RUNS (fixed_block_smaller): literals two
// at a time (at most 18 bits), a long run as its first byte's literal and cut_run's matches.
void fixed_block(BitWriter& w, const std::uint8_t* plane, std::size_t n,
                 const std::vector<LongRun>& runs, bool last) {
  const auto& lengths = length_codes();
  const auto& codes = fixed_codes();
  const auto literals = [&](std::size_t from, std::size_t to) {
    for (; from + 2 <= to; from += 2) {
      const FixedCode& x = codes[plane[from]];
      const FixedCode& y = codes[plane[from + 1]];
      w.bits(static_cast<std::uint32_t>(x.reversed) |
                 (static_cast<std::uint32_t>(y.reversed) << x.length),
             x.length + y.length);
    }
    if (from < to) fixed_symbol(w, codes, plane[from]);
  };
  w.bits(last ? 1U : 0U, 1);
  w.bits(1, 2);  // BTYPE 01: fixed Huffman codes
  std::size_t at = 0;
  for (const LongRun& run : runs) {
    literals(at, run.start + 1);
    cut_run(
        run.length - 1,
        [&](std::size_t length) {
          const LengthCode& c = lengths[length];
          fixed_symbol(w, codes, c.symbol);
          if (c.extra_bits > 0) w.bits(c.extra, c.extra_bits);
          w.bits(0, 5);  // distance code 0 (distance 1): five zero bits
        },
        [&] { fixed_symbol(w, codes, plane[run.start]); });
    at = run.start + run.length;
  }
  literals(at, n);
  fixed_symbol(w, codes, 256);  // end of block
}

void stored_blocks(BitWriter& w, const std::uint8_t* plane, std::size_t n, bool last) {
  do {
    const std::size_t length = std::min<std::size_t>(n, 65535);
    n -= length;
    w.bits(last && n == 0 ? 1U : 0U, 1);
    w.bits(0, 2);  // BTYPE 00: stored
    w.align();
    w.bits(static_cast<std::uint32_t>(length), 16);
    w.bits(static_cast<std::uint32_t>(~length & 0xFFFF), 16);
    w.align();  // LEN and NLEN out: the raw bytes follow them
    w.raw(plane, length);
    plane += length;
  } while (n > 0);
}

// Adler-32 (RFC 1950) without zlib's byte-serial dependency chain and without a 64-bit multiply
// per byte. Per block of n <= 5,552 bytes (the sums stay below 2^32 before the modulo):
// s1 += sum(p[i]) and s2 += n * s1 + sum((n - i) * p[i]). The block's first G = n / 16 groups
// of 16 bytes: byte l of group g has the weight n - 16 g - l = 16 (G - 1 - g) + (16 - l) +
// (n - 16 G), so over the groups
//   sum((n - i) p[i]) = 16 before + sum over groups of sum((16 - l) p[16 g + l]) + (n - 16 G) total
// where before = sum over g of (G - 1 - g) sum(group g): the running total of the groups so far,
// added up before each group is added. The rest, fewer than 16 bytes, one at a time. With SSE2
// a group is one psadbw (its sum) and two pmaddwd (its weighted sum); elsewhere 16 columns of
// 32-bit sums. 4-5x faster than the 8 lanes of a 64-bit multiply-add per byte before (those
// were a third of the encoder's time at 512 tenants, perf, 2026-12-07).
std::uint32_t adler32_of(const std::uint8_t* p, std::size_t size) {
  constexpr std::uint32_t kMod = 65521;
  constexpr std::size_t kLanes = 16;
  constexpr std::size_t kBlock = 5552 / kLanes * kLanes;
  std::uint64_t s1 = 1, s2 = 0;
  while (size > 0) {
    const std::size_t n = std::min(size, kBlock);
    const std::size_t groups = n / kLanes;
    std::uint64_t total = 0, weight = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const __m128i weights_low = _mm_setr_epi16(16, 15, 14, 13, 12, 11, 10, 9);
    const __m128i weights_high = _mm_setr_epi16(8, 7, 6, 5, 4, 3, 2, 1);
    __m128i running = zero, before = zero, weighted = zero;  // 2 x u64, 2 x u64, 4 x i32
    for (std::size_t g = 0; g < groups; ++g) {
      const __m128i group = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + g * kLanes));
      before = _mm_add_epi64(before, running);
      running = _mm_add_epi64(running, _mm_sad_epu8(group, zero));
      weighted = _mm_add_epi32(
          weighted, _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(group, zero), weights_low),
                                  _mm_madd_epi16(_mm_unpackhi_epi8(group, zero), weights_high)));
    }
    alignas(16) std::uint64_t running_lanes[2], before_lanes[2];
    alignas(16) std::uint32_t weighted_lanes[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(running_lanes), running);
    _mm_store_si128(reinterpret_cast<__m128i*>(before_lanes), before);
    _mm_store_si128(reinterpret_cast<__m128i*>(weighted_lanes), weighted);
    total = running_lanes[0] + running_lanes[1];
    weight = kLanes * (before_lanes[0] + before_lanes[1]) + weighted_lanes[0] + weighted_lanes[1] +
             weighted_lanes[2] + weighted_lanes[3];
#else
    std::uint32_t column[kLanes] = {}, before[kLanes] = {};
    for (std::size_t g = 0; g < groups; ++g) {
      for (std::size_t l = 0; l < kLanes; ++l) before[l] += column[l];
      for (std::size_t l = 0; l < kLanes; ++l) column[l] += p[g * kLanes + l];
    }
    for (std::size_t l = 0; l < kLanes; ++l) {
      total += column[l];
      weight += kLanes * std::uint64_t{before[l]} + (kLanes - l) * std::uint64_t{column[l]};
    }
#endif
    weight += (n - groups * kLanes) * total;
    for (std::size_t i = groups * kLanes; i < n; ++i) {
      total += p[i];
      weight += static_cast<std::uint64_t>(n - i) * p[i];
    }
    s2 = (s2 + n * s1 + weight) % kMod;
    s1 = (s1 + total) % kMod;
    p += n;
    size -= n;
  }
  return static_cast<std::uint32_t>((s2 << 16) | s1);
}

std::vector<std::byte> deflate_planes(const std::byte* data, std::size_t plane_size,
                                      std::size_t planes) {
  // A bound on the stream: per plane a fixed block under plane_size * 8 + 32 bits (else stored)
  // or stored blocks of at most 65,535 bytes, 5 bytes of header each; header, trailer, slack.
  const std::size_t bound = 2 + 4 + 16 + planes * (plane_size + 5 * (plane_size / 65535 + 1) + 16);
  std::vector<std::byte> out(bound);
  out[0] = std::byte{0x78};  // zlib header: deflate, 32 KiB window
  out[1] = std::byte{0x01};  // no preset dictionary, fastest; (0x7801 % 31 == 0)
  BitWriter w(out, 2);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(data);
  if (planes == 0 || plane_size == 0) {
    stored_blocks(w, bytes, 0, true);
  }
  thread_local std::vector<LongRun> runs;
  for (std::size_t p = 0; p < planes; ++p) {
    const std::uint8_t* plane = bytes + p * plane_size;
    const bool last = p + 1 == planes;
    if (fixed_block_smaller(plane, plane_size, runs)) {
      fixed_block(w, plane, plane_size, runs, last);
    } else {
      stored_blocks(w, plane, plane_size, last);
    }
  }
  w.align();
  std::size_t size = w.size();
  const std::uint32_t checksum =
      adler32_of(reinterpret_cast<const std::uint8_t*>(data), plane_size * planes);
  for (int shift = 24; shift >= 0; shift -= 8) {
    out[size++] = static_cast<std::byte>((checksum >> shift) & 0xFF);
  }
  out.resize(size);
  return out;
}

}  // namespace

std::vector<std::byte> encode_chunk(const std::byte* rows, std::size_t row_size,
                                    std::size_t chunk_rows, Deflate deflate) {
  // The shuffle filter's layout: byte b of row i goes to b * chunk_rows + i. Blocks of 64 rows
  // keep the rows being read in L1 while each byte plane is written 64 bytes at a time. The
  // thread's buffer, reused from chunk to chunk (every byte of it is written below).
  thread_local std::vector<std::byte> shuffled;
  shuffled.resize(row_size * chunk_rows);
  constexpr std::size_t kBlock = 64;
  for (std::size_t first = 0; first < chunk_rows; first += kBlock) {
    const std::size_t count = std::min(kBlock, chunk_rows - first);
    const auto* in = reinterpret_cast<const std::uint8_t*>(rows + first * row_size);
    for (std::size_t b = 0; b < row_size; ++b) {
      std::byte* out = shuffled.data() + b * chunk_rows + first;
      std::size_t i = 0;
      for (; i + 8 <= count; i += 8) {  // 8 rows' bytes gathered into one 8-byte store
        std::uint64_t word = 0;
        for (std::size_t k = 0; k < 8; ++k) {
          word |= static_cast<std::uint64_t>(in[(i + k) * row_size + b]) << (8 * k);
        }
        std::memcpy(out + i, &word, 8);  // little-endian: row i + k at byte k
      }
      for (; i < count; ++i) out[i] = static_cast<std::byte>(in[i * row_size + b]);
    }
  }
  if (deflate == Deflate::planes) return deflate_planes(shuffled.data(), chunk_rows, row_size);
  if (deflate == Deflate::rle) {
    thread_local Deflater rle(Z_RLE);
    return rle.deflate(shuffled.data(), shuffled.size());
  }
  thread_local Deflater standard(Z_DEFAULT_STRATEGY);
  return standard.deflate(shuffled.data(), shuffled.size());
}

BackgroundWriter::BackgroundWriter(std::size_t capacity) : capacity_(capacity) {
  if (capacity_ > 0) thread_ = std::thread([this] { loop(); });
}

BackgroundWriter::~BackgroundWriter() { stop(); }

void BackgroundWriter::loop() {
  silence_errors();  // HDF5 keeps its error stack and printing settings per thread
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    done_.notify_all();  // room in the queue
    if (!error_) {
      lock.unlock();
      std::exception_ptr error;
      try {
        job();
      } catch (...) {
        error = std::current_exception();
      }
      job = nullptr;  // free the chunk outside the lock
      lock.lock();
      if (error && !error_) error_ = error;
    }
    if (error_) jobs_.clear();
    busy_ = false;
    done_.notify_all();
  }
}

void BackgroundWriter::submit(std::function<void()> job) {
  if (capacity_ == 0) {
    if (error_) return;
    try {
      job();
    } catch (...) {
      error_ = std::current_exception();
    }
    return;
  }
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return jobs_.size() < capacity_ || error_ || stopping_; });
  if (error_ || stopping_) return;
  jobs_.push_back(std::move(job));
  wake_.notify_one();
}

void BackgroundWriter::drain() {
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return jobs_.empty() && !busy_; });
  if (error_) std::rethrow_exception(error_);
}

void BackgroundWriter::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    jobs_.clear();
  }
  wake_.notify_all();
  done_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool BackgroundWriter::failed() const {
  std::lock_guard lock(mutex_);
  return error_ != nullptr;
}

TableStream::TableStream(Group& group, const std::string& name, const CompoundType& type,
                         BackgroundWriter& writer, std::size_t chunk_rows)
    : dataset_(group.create_table(name, type.id(), 0,
                                  TableOptions{std::max<std::size_t>(chunk_rows, 1), 1, true})),
      writer_(writer),
      row_size_(type.row_size()),
      chunk_rows_(std::max<std::size_t>(chunk_rows, 1)),
      buffer_(row_size_ * chunk_rows_) {}

void TableStream::hand_over() {
  if (filled_ == 0) return;
  std::vector<std::byte> chunk(row_size_ * chunk_rows_);  // the next chunk, zeroed
  chunk.swap(buffer_);
  const hsize_t first = first_;
  const hsize_t end = first_ + filled_;
  first_ = end;
  filled_ = 0;
  writer_.submit([dataset = dataset_.id(), rows = std::move(chunk), row_size = row_size_,
                  chunk_rows = chunk_rows_, first, end] {
    const std::vector<std::byte> encoded = encode_chunk(rows.data(), row_size, chunk_rows);
    const std::string what = fmt::format("writing rows {}..{}", first, end);
    const hsize_t extent[1] = {end};
    check(H5Dset_extent(dataset, extent), what);
    const hsize_t offset[1] = {first};
    check(H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, offset, encoded.size(), encoded.data()), what);
  });
}

void TableStream::finish() { hand_over(); }

}  // namespace gpumux::h5
