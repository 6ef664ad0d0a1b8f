// Streamed tables (sim/io/table_stream.hpp): the chunk encoder produces what HDF5's shuffle +
// deflate filters decode (checked with zlib's own inflate and by reading back through HDF5), the
// chunk boundaries (0, chunk - 1, chunk, chunk + 1 rows), and the background writer's order and
// failure handling.
#include <unistd.h>
#include <zlib.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/io/hdf5_file.hpp"
#include "sim/io/table_stream.hpp"

namespace gpumux::h5 {
namespace {

// The shuffle filter's layout, written the obvious way.
std::vector<std::uint8_t> shuffled(const std::vector<std::byte>& rows, std::size_t row_size) {
  const std::size_t n = rows.size() / row_size;
  std::vector<std::uint8_t> out(rows.size());
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t b = 0; b < row_size; ++b) {
      out[b * n + i] = static_cast<std::uint8_t>(rows[i * row_size + b]);
    }
  }
  return out;
}

std::vector<std::uint8_t> inflate(const std::vector<std::byte>& encoded, std::size_t size) {
  std::vector<std::uint8_t> out(size + 1);
  uLongf length = static_cast<uLongf>(out.size());
  const int status = uncompress(out.data(), &length, reinterpret_cast<const Bytef*>(encoded.data()),
                                static_cast<uLong>(encoded.size()));
  EXPECT_EQ(status, Z_OK) << "not a valid zlib stream";
  out.resize(length);
  return out;
}

// Random rows whose byte columns are of the kinds a record table has: constant, long runs
// (a slowly rising high byte), short runs, uniform noise, values >= 144 (9-bit literals).
std::vector<std::byte> random_rows(std::mt19937_64& rng, std::size_t rows, std::size_t row_size) {
  std::vector<std::byte> out(rows * row_size);
  for (std::size_t b = 0; b < row_size; ++b) {
    const int kind = static_cast<int>(rng() % 5);
    const std::size_t run = 1 + rng() % 700;
    const auto constant = static_cast<std::uint8_t>(rng());
    std::uint8_t value = constant;
    for (std::size_t i = 0; i < rows; ++i) {
      switch (kind) {
        case 0:
          value = constant;
          break;
        case 1:
          if (i % run == 0) value = static_cast<std::uint8_t>(rng());
          break;
        case 2:
          if (rng() % 4 == 0) value = static_cast<std::uint8_t>(rng());
          break;
        case 3:
          value = static_cast<std::uint8_t>(rng());
          break;
        default:
          value = static_cast<std::uint8_t>(144 + rng() % 112);
          break;
      }
      out[i * row_size + b] = static_cast<std::byte>(value);
    }
  }
  return out;
}

TEST(EncodeChunk, EveryEncoderInflatesToTheShuffledRows) {
  std::mt19937_64 rng(12);
  for (const std::size_t row_size : {1, 2, 5, 37, 40}) {
    for (const std::size_t rows : {1, 2, 3, 7, 100, 259, 1000, 70000}) {
      const std::vector<std::byte> data = random_rows(rng, rows, row_size);
      const std::vector<std::uint8_t> expected = shuffled(data, row_size);
      for (const Deflate deflate : {Deflate::planes, Deflate::rle, Deflate::default1}) {
        const auto encoded = encode_chunk(data.data(), row_size, rows, deflate);
        EXPECT_EQ(inflate(encoded, data.size()), expected)
            << "row_size " << row_size << " rows " << rows << " encoder "
            << static_cast<int>(deflate);
      }
    }
  }
}

TEST(EncodeChunk, RunsOfEveryLengthAroundTheMatchLimits) {
  // Runs of 1..600 equal bytes (the 258-byte match limit and its 1- and 2-byte remainders).
  for (std::size_t run = 1; run <= 600; ++run) {
    std::vector<std::byte> data;
    for (std::size_t i = 0; i < 3 * run + 1; ++i) {
      data.push_back(static_cast<std::byte>(i / run % 2 == 0 ? 7 : 200));
    }
    const auto encoded = encode_chunk(data.data(), 1, data.size(), Deflate::planes);
    ASSERT_EQ(inflate(encoded, data.size()), shuffled(data, 1)) << "run " << run;
  }
}

TEST(EncodeChunk, ConstantPlanesShrinkAndNoisyOnesStayNearTheirSize) {
  const std::size_t rows = 16384;
  std::vector<std::byte> constant(rows * 8, std::byte{0x5A});
  // 13 bits (a 258-byte match at distance 1) per 258 bytes: under 1 % of the raw size.
  EXPECT_LT(encode_chunk(constant.data(), 8, rows).size(), rows * 8 / 100);
  std::mt19937_64 rng(3);
  std::vector<std::byte> noise(rows);
  for (std::byte& b : noise) b = static_cast<std::byte>(rng());
  // Stored: the bytes plus block headers and the zlib wrapper, never the 9-bit literals.
  EXPECT_LE(encode_chunk(noise.data(), 1, rows).size(), rows + 16);
}

// Deflate::planes written the plain way, run by run (the parse the encoder's one-pass scan
// replaces): per plane, each maximal run of equal bytes is its first byte's literal and, for
// the rest, distance-1 matches of 3..258 bytes (never leaving 1-2 bytes: those are literals);
// fixed-Huffman codes (RFC 1951 3.2.6); the parse gives up (stored block) at a run's start
// once its bits exceed 8 per byte so far + 256, else takes the fixed block when its bits are
// under 8 per byte + 32. Bits are written one at a time.
std::vector<std::uint8_t> reference_planes(const std::vector<std::byte>& rows,
                                           std::size_t row_size) {
  const std::size_t n = row_size == 0 ? 0 : rows.size() / row_size;
  const std::vector<std::uint8_t> data = shuffled(rows, row_size);
  std::vector<std::uint8_t> out = {0x78, 0x01};
  std::uint64_t bit = 0;
  const auto put = [&](std::uint32_t value, int count) {  // least significant first
    for (int i = 0; i < count; ++i, ++bit) {
      if (bit % 8 == 0) out.push_back(0);
      out.back() |= static_cast<std::uint8_t>(((value >> i) & 1U) << (bit % 8));
    }
  };
  const auto huffman = [&](std::uint32_t code, int length) {  // most significant first
    for (int i = length - 1; i >= 0; --i) put((code >> i) & 1U, 1);
  };
  const auto symbol = [&](unsigned s) {
    if (s < 144) return huffman(0x30 + s, 8);
    if (s < 256) return huffman(0x190 + s - 144, 9);
    if (s < 280) return huffman(s - 256, 7);
    huffman(0xC0 + s - 280, 8);
  };
  const unsigned base[] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                           31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
  const int extra[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                       2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
  // A match of LENGTH at distance 1: (symbol, extra bits, extra value).
  const auto match_code = [&](unsigned length) {
    int code = 28;
    while (base[code] > length) --code;
    return std::tuple{257U + static_cast<unsigned>(code), extra[code], length - base[code]};
  };
  // Each maximal run as (position, value, lengths of its matches).
  const auto match_lengths = [](std::size_t rest) {
    std::vector<unsigned> lengths;
    while (rest >= 3) {
      std::size_t length = std::min<std::size_t>(rest, 258);
      if (rest - length > 0 && rest - length < 3) length = rest - 3;
      lengths.push_back(static_cast<unsigned>(length));
      rest -= length;
    }
    return std::pair{lengths, rest};
  };
  if (row_size == 0 || n == 0) {
    put(1, 1), put(0, 2), bit = (bit + 7) / 8 * 8, put(0, 16), put(0xFFFF, 16);
  }
  for (std::size_t p = 0; p < row_size; ++p) {
    const std::uint8_t* plane = data.data() + p * n;
    const bool last = p + 1 == row_size;
    std::uint64_t bits = 10;
    bool fixed = true;
    for (std::size_t i = 0; i < n && fixed;) {
      if (bits > 8 * i + 256) fixed = false;
      std::size_t j = i + 1;
      while (j < n && plane[j] == plane[i]) ++j;
      const int literal = plane[i] < 144 ? 8 : 9;
      const auto [lengths, left] = match_lengths(j - i - 1);
      bits += static_cast<std::uint64_t>(literal) * (1 + left);
      for (const unsigned length : lengths) {
        const auto [s, e, v] = match_code(length);
        bits += (s < 280 ? 7U : 8U) + static_cast<unsigned>(e) + 5U;
      }
      i = j;
    }
    if (fixed && bits < 8 * n + 32) {
      put(last ? 1 : 0, 1), put(1, 2);
      for (std::size_t i = 0; i < n;) {
        std::size_t j = i + 1;
        while (j < n && plane[j] == plane[i]) ++j;
        symbol(plane[i]);
        const auto [lengths, left] = match_lengths(j - i - 1);
        for (const unsigned length : lengths) {
          const auto [s, e, v] = match_code(length);
          symbol(s), put(v, e), put(0, 5);
        }
        for (std::size_t k = 0; k < left; ++k) symbol(plane[i]);
        i = j;
      }
      symbol(256);
      continue;
    }
    for (std::size_t at = 0; at < n || at == 0;) {
      const std::size_t length = std::min<std::size_t>(n - at, 65535);
      put(last && at + length == n ? 1 : 0, 1), put(0, 2);
      bit = (bit + 7) / 8 * 8;
      put(static_cast<std::uint32_t>(length), 16),
          put(static_cast<std::uint32_t>(~length & 0xFFFF), 16);
      out.insert(out.end(), plane + at, plane + at + length);
      bit += 8 * length;
      at += length;
      if (at == n) break;
    }
  }
  const auto checksum = static_cast<std::uint32_t>(
      adler32(adler32(0, nullptr, 0), data.data(), static_cast<uInt>(data.size())));
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back((checksum >> shift) & 0xFF);
  return out;
}

// Planes whose fixed block's size lands on either side of the two thresholds (8 bits per byte
// + 32 at the end, + 256 at a run's start): literal stretches of 9-bit values (each + 1 bit)
// paid back by runs of 4-300 bytes (each - 3 to - 2,000), in random proportions.
std::vector<std::byte> threshold_rows(std::mt19937_64& rng, std::size_t rows,
                                      std::size_t row_size) {
  std::vector<std::byte> out(rows * row_size);
  for (std::size_t b = 0; b < row_size; ++b) {
    const std::size_t literal_stretch = 1 + rng() % 400, run_max = 4 + rng() % 300;
    const unsigned high_share = static_cast<unsigned>(rng() % 101);
    std::size_t i = 0;
    std::uint8_t previous = 0;
    while (i < rows) {
      for (std::size_t k = rng() % literal_stretch; k > 0 && i < rows; --k, ++i) {
        std::uint8_t v;
        do {
          v = static_cast<std::uint8_t>(rng() % 100 < high_share ? 144 + rng() % 112 : rng() % 144);
        } while (v == previous);
        out[i * row_size + b] = static_cast<std::byte>(previous = v);
      }
      const std::uint8_t v = static_cast<std::uint8_t>(previous + 1 + rng() % 200);
      for (std::size_t k = 1 + rng() % run_max; k > 0 && i < rows; --k, ++i) {
        out[i * row_size + b] = static_cast<std::byte>(previous = v);
      }
    }
  }
  return out;
}

TEST(EncodeChunk, PlanesEqualAPlainRunByRunParse) {
  std::mt19937_64 rng(2026);
  std::size_t fixed_and_stored[2] = {0, 0};
  for (int round = 0; round < 300; ++round) {
    const std::size_t row_size = 1 + rng() % 40;
    const std::size_t rows = round % 3 == 0 ? 1 + rng() % 40 : 1 + rng() % 5000;
    const std::vector<std::byte> data =
        round % 2 == 0 ? threshold_rows(rng, rows, row_size) : random_rows(rng, rows, row_size);
    const auto encoded = encode_chunk(data.data(), row_size, rows, Deflate::planes);
    const std::vector<std::uint8_t> expected = reference_planes(data, row_size);
    ASSERT_EQ(encoded.size(), expected.size()) << "round " << round;
    ASSERT_EQ(std::memcmp(encoded.data(), expected.data(), expected.size()), 0)
        << "round " << round;
    // Both kinds of block occur (the second byte of the stream: BFINAL/BTYPE of the first
    // plane's block after the 2-byte header).
    ++fixed_and_stored[(expected[2] >> 1 & 3U) == 1 ? 0 : 1];
  }
  EXPECT_GT(fixed_and_stored[0], 30U);
  EXPECT_GT(fixed_and_stored[1], 30U);
}

TEST(BackgroundWriter, RunsJobsInOrderAndBoundsTheQueue) {
  for (const std::size_t capacity : {0, 1, 3}) {
    BackgroundWriter writer(capacity);
    std::vector<int> order;
    for (int i = 0; i < 200; ++i) writer.submit([&order, i] { order.push_back(i); });
    writer.drain();
    ASSERT_EQ(order.size(), 200u);
    for (int i = 0; i < 200; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
  }
}

TEST(BackgroundWriter, TheFirstFailureDropsTheRestAndIsRethrown) {
  for (const std::size_t capacity : {0, 2}) {
    BackgroundWriter writer(capacity);
    std::atomic<int> ran{0};
    for (int i = 0; i < 50; ++i) {
      writer.submit([&ran, i] {
        if (i == 10) throw std::runtime_error("disk full at 10");
        ++ran;
      });
    }
    EXPECT_THROW(
        {
          try {
            writer.drain();
          } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "disk full at 10");
            throw;
          }
        },
        std::runtime_error);
    EXPECT_EQ(ran.load(), 10);  // the jobs before it ran, none after
    EXPECT_TRUE(writer.failed());
  }
}

class TableStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("gpumux_table_stream_" + std::to_string(::getpid()) + ".h5"))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // Writes N rows (u32 id, i64 value = id * 1000 - 7, u8 flag = id % 3) through a TableStream
  // with CHUNK rows per chunk and reads them back with H5Dread (the filter pipeline).
  void round_trip(std::size_t n, std::size_t chunk, std::size_t capacity) {
    CompoundType type;
    const std::size_t id = type.add("id", H5T_NATIVE_UINT32);
    const std::size_t value = type.add("value", H5T_NATIVE_INT64);
    const std::size_t flag = type.add("flag", H5T_NATIVE_UINT8);
    {
      File file = File::create(path_);
      {
        Group root = file.root();
        BackgroundWriter writer(capacity);
        TableStream table(root, "t", type, writer, chunk);
        for (std::size_t i = 0; i < n; ++i) {
          std::byte* row = table.next_row();
          put(row, id, static_cast<std::uint32_t>(i));
          put(row, value, static_cast<std::int64_t>(i) * 1000 - 7);
          put(row, flag, static_cast<std::uint8_t>(i % 3));
        }
        EXPECT_EQ(table.rows(), n);
        table.finish();
        writer.drain();
      }
      file.close();
    }
    const hid_t file = H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    const hid_t dataset = H5Dopen2(file, "t", H5P_DEFAULT);
    const hid_t space = H5Dget_space(dataset);
    hsize_t rows = 0;
    H5Sget_simple_extent_dims(space, &rows, nullptr);
    EXPECT_EQ(rows, n) << "chunk " << chunk;
    const hid_t dcpl = H5Dget_create_plist(dataset);
    hsize_t chunk_dims = 0;
    EXPECT_EQ(H5Pget_chunk(dcpl, 1, &chunk_dims), 1);
    EXPECT_EQ(chunk_dims, chunk);
    EXPECT_EQ(H5Pget_nfilters(dcpl), 2);  // shuffle, deflate: what readers apply
    std::vector<std::byte> back(n * type.row_size());
    if (n > 0) {
      ASSERT_GE(H5Dread(dataset, type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
    }
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t got_id;
      std::int64_t got_value;
      std::uint8_t got_flag;
      const std::byte* row = back.data() + i * type.row_size();
      std::memcpy(&got_id, row + id, 4);
      std::memcpy(&got_value, row + value, 8);
      std::memcpy(&got_flag, row + flag, 1);
      wrong +=
          got_id != i || got_value != static_cast<std::int64_t>(i) * 1000 - 7 || got_flag != i % 3;
    }
    EXPECT_EQ(wrong, 0u) << "n " << n << " chunk " << chunk;
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Dclose(dataset);
    H5Fclose(file);
  }

  std::string path_;
};

TEST_F(TableStreamTest, ChunkBoundariesReadBackUnchanged) {
  for (const std::size_t capacity : {0, 2}) {
    for (const std::size_t chunk : {1, 8, 100}) {
      for (const std::size_t n : {std::size_t{0}, chunk - 1, chunk, chunk + 1, 3 * chunk + 5}) {
        round_trip(n, chunk, capacity);
      }
    }
  }
}

TEST_F(TableStreamTest, FullSizeChunksReadBackUnchanged) {
  round_trip(kStreamChunkRows - 1, kStreamChunkRows, 4);
  round_trip(kStreamChunkRows + 1, kStreamChunkRows, 4);
  round_trip(5 * kStreamChunkRows + 17, kStreamChunkRows, 4);
}

}  // namespace
}  // namespace gpumux::h5
