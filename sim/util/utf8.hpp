#pragma once
// The one UTF-8 check of every text input reader (YAML, CSV traces, openb): names and model
// strings go into JSON and HDF5 results, which must be UTF-8. Cost: O(length).
#include <optional>
#include <string>
#include <string_view>

namespace gpumux {

/// Where a text stops being UTF-8: the first byte that does not start a valid UTF-8 sequence
/// (overlong forms, surrogates and code points beyond U+10FFFF are invalid too), at 1-based
/// LINE and COLUMN (columns count code points).
struct Utf8Error {
  int line = 1;
  int column = 1;
  unsigned char byte = 0;
  bool hdf5 = false;  ///< the text starts with HDF5's signature: a binary result, not text
  /// "not UTF-8 text (byte 0x95; a Latin-1 or Windows-1252 file?): gpumux reads UTF-8: save the
  /// file as UTF-8" (for an HDF5 file: "an HDF5 file (a gpumux result?), not text: ..."); the
  /// caller adds the file and line.
  std::string message() const;
};

/// The first invalid UTF-8 byte of TEXT, or nullopt when TEXT is UTF-8.
std::optional<Utf8Error> find_invalid_utf8(std::string_view text);

}  // namespace gpumux
