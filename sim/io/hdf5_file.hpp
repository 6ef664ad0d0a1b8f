#pragma once
// A small RAII layer over the HDF5 1.10 C API (no HighFive in Debian): owning handles for files,
// groups, datasets, datatypes, dataspaces and property lists; scalar attributes (strings,
// integers, doubles); scalar string datasets; and packed compound tables written in chunk-sized
// batches (chunked, shuffle + deflate), so a table of 10^7 rows never needs a second full copy.
//
// Every failing HDF5 call throws std::runtime_error naming the operation, the object and the
// innermost message of HDF5's error stack. HDF5's automatic error printing is switched off the
// first time a file is created or opened. Not thread-safe (neither is the serial HDF5 build).
#include <hdf5.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpumux::h5 {

/// Turns off HDF5's printing of its error stack to stderr (we report errors by exception).
void silence_errors();

/// The innermost description on HDF5's current error stack, or "" when it is empty.
std::string last_error();

/// Owns one hid_t and closes it with the matching H5?close on destruction. Move-only.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);

  Handle() = default;
  /// Takes ownership of `id`; throws std::runtime_error("what: <hdf5 message>") when id < 0.
  Handle(hid_t id, Closer closer, std::string_view what);
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept;
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t id() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Closes now and throws when HDF5 reports a failure (used for files, where close flushes).
  void close(std::string_view what);

 private:
  void reset() noexcept;
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

/// Throws std::runtime_error("what: <hdf5 message>") when status < 0.
void check(herr_t status, std::string_view what);

/// Datatype handles. `copy` duplicates a predefined type such as H5T_NATIVE_INT64.
Handle copy_type(hid_t type);
/// Variable-length UTF-8 string type.
Handle vlen_string_type();
/// Fixed-length (NUL-padded) UTF-8 string type of `length` bytes (at least 1).
Handle fixed_string_type(std::size_t length);
/// An enumeration over uint8_t with the given names for values 0, 1, 2, ...
Handle u8_enum_type(const std::vector<std::string>& names);

/// A packed compound type built column by column: each column is placed right after the
/// previous one, so an in-memory row buffer with the same offsets is written without conversion.
class CompoundType {
 public:
  /// Appends a column of the given type (copied) and returns its byte offset in a row.
  std::size_t add(const std::string& name, hid_t type);
  /// Appends a fixed-length string column of `length` bytes (at least 1); returns its offset.
  std::size_t add_fixed_string(const std::string& name, std::size_t length);
  /// Bytes per row (sum of the column sizes, no padding).
  std::size_t row_size() const { return size_; }
  /// The HDF5 compound type; valid for as long as this object lives.
  hid_t id() const;

 private:
  struct Column {
    std::string name;
    Handle type;
    std::size_t offset;
  };
  std::vector<Column> columns_;
  std::size_t size_ = 0;
  mutable Handle built_;
};

/// Copies `value` into a row buffer at `offset` (rows of a CompoundType are unaligned).
template <class T>
inline void put(std::byte* row, std::size_t offset, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::memcpy(row + offset, &value, sizeof(T));
}

/// Copies at most `length` bytes of `text` into a fixed-string column, NUL-padding the rest.
void put_string(std::byte* row, std::size_t offset, std::size_t length, std::string_view text);

/// How a table dataset is laid out on disk.
struct TableOptions {
  /// Rows per chunk (capped by the row count, at least 1). 16,384 rows of the widest record
  /// tables (37-40 B) stay within HDF5's default 1 MiB chunk cache.
  std::size_t chunk_rows = 16384;
  int deflate_level = 1;  ///< 0 disables compression (1: 2x faster than 4, ~2 % larger)
  bool shuffle = true;    ///< byte shuffle before deflate (helps integer columns)
};

class Group;

/// A one-dimensional dataset of compound rows with an unlimited maximum extent.
class Dataset {
 public:
  explicit Dataset(Handle handle, std::string path) : handle_(std::move(handle)), path_(path) {}
  hid_t id() const { return handle_.id(); }
  /// Writes `count` packed rows (layout of `type`) starting at row `first`. Cost: O(count).
  void write_rows(const void* rows, hid_t type, std::size_t first, std::size_t count);
  void set_attribute(const std::string& name, std::string_view value);

 private:
  Handle handle_;
  std::string path_;
};

/// A group (or the root group of a file). Names are single path components.
class Group {
 public:
  Group(Handle handle, std::string path) : handle_(std::move(handle)), path_(std::move(path)) {}
  hid_t id() const { return handle_.id(); }
  const std::string& path() const { return path_; }

  Group create_group(const std::string& name);
  Group open_group(const std::string& name) const;
  bool exists(const std::string& name) const;

  /// Scalar attributes: variable-length UTF-8 strings, int64, uint64, double.
  void set_attribute(const std::string& name, std::string_view value);
  void set_attribute(const std::string& name, const char* value) {
    set_attribute(name, std::string_view(value));
  }
  void set_attribute(const std::string& name, std::int64_t value);
  void set_attribute(const std::string& name, std::uint64_t value);
  void set_attribute(const std::string& name, int value) {
    set_attribute(name, static_cast<std::int64_t>(value));
  }
  void set_attribute(const std::string& name, double value);

  /// Scalar variable-length UTF-8 string dataset.
  void write_string(const std::string& name, std::string_view value);
  /// Reads a scalar string dataset (variable- or fixed-length).
  std::string read_string(const std::string& name) const;

  /// Creates a chunked, compressed 1-D table of `rows` rows; maxdims unlimited, so zero rows
  /// is a valid (empty) dataset. Chunks of min(rows, chunk_rows) rows; of chunk_rows rows when
  /// created empty (a table to append to, table_stream.hpp).
  Dataset create_table(const std::string& name, hid_t type, std::size_t rows,
                       const TableOptions& options = {});

  /// Creates the table and fills it in batches of one chunk: fill(row_pointer, row_index) is
  /// called once per row with a zeroed row of `type.row_size()` bytes. Peak extra memory: one
  /// chunk. Cost: O(rows) plus compression.
  template <class Fill>
  Dataset write_table(const std::string& name, const CompoundType& type, std::size_t rows,
                      Fill&& fill, const TableOptions& options = {}) {
    Dataset dataset = create_table(name, type.id(), rows, options);
    const std::size_t batch = options.chunk_rows > 0 ? options.chunk_rows : 65536;
    const std::size_t row_size = type.row_size();
    std::vector<std::byte> buffer(std::min(rows, batch) * row_size);
    for (std::size_t first = 0; first < rows; first += batch) {
      const std::size_t count = std::min(batch, rows - first);
      std::fill(buffer.begin(), buffer.begin() + count * row_size, std::byte{0});
      for (std::size_t i = 0; i < count; ++i) fill(buffer.data() + i * row_size, first + i);
      dataset.write_rows(buffer.data(), type.id(), first, count);
    }
    return dataset;
  }

 private:
  Handle handle_;
  std::string path_;
};

/// An HDF5 file. Objects opened from it must be destroyed before close() for a clean close;
/// the file is opened with H5F_CLOSE_STRONG so a close on an error path releases everything.
class File {
 public:
  /// Creates (truncates) `path` for writing. Throws std::runtime_error on failure.
  static File create(const std::string& path);
  /// Opens an existing file read-only. Throws std::runtime_error on failure.
  static File open_read_only(const std::string& path);

  Group root() const;
  /// Flushes and closes; throws std::runtime_error when HDF5 reports a failure.
  void close();
  const std::string& path() const { return path_; }

 private:
  File(Handle handle, std::string path) : handle_(std::move(handle)), path_(std::move(path)) {}
  Handle handle_;
  std::string path_;
};

}  // namespace gpumux::h5
