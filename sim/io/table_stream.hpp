#pragma once
// Tables written while their rows are still arriving (records streamed to a result file during a
// run): rows are packed into a chunk buffer; each full chunk is encoded as HDF5's filter pipeline
// would store it (shuffle, then deflate) and written with H5Dwrite_chunk, optionally on a
// background thread. Memory: the chunk being filled plus the chunks waiting for the writer
// (bounded), whatever the number of rows.
//
// The file is an ordinary HDF5 file: the dataset declares the shuffle and deflate filters, so
// h5py, h5dump and every HDF5 reader decode it with the standard filters. Only the encoder is
// ours: zlib's run-length strategy (Z_RLE), a valid deflate stream that after the shuffle costs
// about half of zlib's default level 1 for ~9 % more bytes on request tables (bench/
// bench_result_io.cpp, BM_EncodeChunk).
//
// Threads: HDF5 (the serial build) is not thread-safe. While a BackgroundWriter has work, only
// its thread calls HDF5; the owner calls HDF5 again only after drain() (or stop()) returns.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/io/hdf5_file.hpp"

namespace gpumux::h5 {

/// Rows per chunk of the streamed tables: 4,096 rows of a 37-byte request record are 148 KiB,
/// well within HDF5's default 1 MiB chunk cache (readers decode each chunk once), and the last,
/// partial chunk of a short table is padded with at most 4,095 zero rows (~1 KiB encoded).
inline constexpr std::size_t kStreamChunkRows = 4096;

/// How a chunk is deflated (after the shuffle). Both are standard deflate streams.
enum class Deflate : std::uint8_t {
  planes,   ///< ours: per byte plane a stored block or fixed-Huffman runs (what tables use)
  rle,      ///< zlib level 1, Z_RLE (literals and distance-1 matches, dynamic Huffman codes)
  default1  ///< zlib level 1, default strategy (what H5Pset_deflate(1) would write)
};

/// One chunk as the filter pipeline shuffle + deflate stores it: ROWS (chunk_rows x row_size
/// bytes) transposed by byte position within a row, then one zlib stream. Cost: O(bytes).
std::vector<std::byte> encode_chunk(const std::byte* rows, std::size_t row_size,
                                    std::size_t chunk_rows, Deflate deflate = Deflate::planes);

/// Runs jobs one at a time, in submission order, on one background thread. At most `capacity`
/// jobs wait: submit() blocks while the queue is full, which bounds the memory held by waiting
/// chunks. The first job that throws keeps its exception and the jobs after it are dropped
/// (submit() then discards new ones at once); drain() rethrows it. capacity 0: no thread, a job
/// runs inside submit() (its exception is kept the same way).
class BackgroundWriter {
 public:
  explicit BackgroundWriter(std::size_t capacity);
  /// stop().
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  void submit(std::function<void()> job);
  /// Waits until every submitted job has run or been dropped; rethrows the first failure.
  void drain();
  /// Drops the waiting jobs, waits for the running one and ends the thread. Idempotent.
  void stop() noexcept;
  /// Whether a job has failed (the rest are being dropped).
  bool failed() const;

 private:
  void loop();
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<std::function<void()>> jobs_;
  bool busy_ = false, stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

/// A 1-D compound table of unknown length, appended row by row. Created empty (maxdims
/// unlimited, chunks of chunk_rows rows, shuffle + deflate declared); each full chunk is handed
/// to WRITER, which encodes it, extends the dataset and writes the chunk. The table must not
/// outlive WRITER's jobs: drain() or stop() the writer first.
class TableStream {
 public:
  TableStream(Group& group, const std::string& name, const CompoundType& type,
              BackgroundWriter& writer, std::size_t chunk_rows = kStreamChunkRows);

  /// A zeroed row of type.row_size() bytes to fill with put()/put_string(). Cost: amortized
  /// O(row size); a full chunk is handed to the writer (which may block while its queue is full).
  std::byte* next_row() {
    if (filled_ == chunk_rows_) hand_over();
    return buffer_.data() + (filled_++) * row_size_;
  }
  /// Rows appended so far.
  std::uint64_t rows() const { return first_ + filled_; }
  /// Hands the last, partial chunk (padded with zero rows beyond the extent) to the writer.
  /// Drain the writer before reading the dataset back or closing the file.
  void finish();
  Dataset& dataset() { return dataset_; }

 private:
  void hand_over();
  Dataset dataset_;
  BackgroundWriter& writer_;
  std::size_t row_size_, chunk_rows_;
  std::vector<std::byte> buffer_;
  std::size_t filled_ = 0;
  std::uint64_t first_ = 0;  // rows handed over before the current chunk
};

}  // namespace gpumux::h5
