#include "sim/util/utf8.hpp"

#include <cstdio>

namespace gpumux {

namespace {

// The length of the UTF-8 sequence at `i` (1..4), or 0 when the bytes there are not one
// (overlong forms, surrogates and code points beyond U+10FFFF are invalid too).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
  };
  const unsigned c = byte(0);
  const auto tail = [&](std::size_t k) { return (byte(k) & 0xC0u) == 0x80u; };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return tail(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!tail(1) || !tail(2)) return 0;
    if (c == 0xE0 && byte(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && byte(1) >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!tail(1) || !tail(2) || !tail(3)) return 0;
    if (c == 0xF0 && byte(1) < 0x90) return 0;
    if (c == 0xF4 && byte(1) >= 0x90) return 0;
    return 4;
  }
  return 0;
}

}  // namespace

std::string Utf8Error::message() const {
  if (hdf5) {
    return "an HDF5 file (a gpumux result?), not text: `gpumux report FILE` reads a result; "
           "this command reads a YAML or CSV text file";
  }
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(byte));
  return "not UTF-8 text (byte " + std::string(hex) +
         "; a Latin-1 or Windows-1252 file?): gpumux reads UTF-8: save the file as UTF-8";
}

std::optional<Utf8Error> find_invalid_utf8(std::string_view text) {
  int line = 1;
  int column = 1;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_length(text, i);
    if (length == 0) {
      // The start of HDF5's format signature, \x89 H D F \r \n \x1a \n (the HDF5 file format
      // specification, "Format Signature"): a result file given where text is read.
      const bool hdf5 = i == 0 && text.substr(0, 4) == std::string_view("\x89HDF", 4);
      return Utf8Error{line, column, static_cast<unsigned char>(text[i]), hdf5};
    }
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += length;
  }
  return std::nullopt;
}

}  // namespace gpumux
