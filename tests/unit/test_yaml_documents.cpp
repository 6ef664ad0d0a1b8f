// yaml::parse loads the first document and refuses a second one ("several YAML documents"). It
// skips the scan for a second document when the first is a block mapping at column 0 and no
// line starts with '%', "---" or "..." (models/config/yaml_reader.cpp). Property: on random texts
// built from lines that start documents, end them, leave tokens after a flow or scalar root,
// indent the root, or break the syntax, parse gives what the scan of every text gives (the
// reference below: yaml-cpp's Load, then every later document scanned as events): the same
// node, or an error of the same kind at the same line and column.
#include <gtest/gtest.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/config/yaml_reader.hpp"

namespace gpumux {
namespace {

// What a text gives: "ok " and the node's YAML, "several L:C" or "error L:C" (1-based).
struct DocumentCount : YAML::EventHandler {
  int documents = 0;
  bool second_has_content = false;
  YAML::Mark mark;
  void OnDocumentStart(const YAML::Mark&) override { ++documents; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { content(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    content(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    content(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    content(m);
  }
  void OnMapEnd() override {}
  void content(const YAML::Mark& m) {
    if (documents >= 2 && !second_has_content) {
      second_has_content = true;
      mark = m;
    }
  }
};

std::string at(int line, int column) {
  return std::to_string(line >= 0 ? line + 1 : 0) + ":" +
         std::to_string(line >= 0 ? column + 1 : 0);
}

std::string scanned_every_time(const std::string& text) {
  try {
    const YAML::Node first = YAML::Load(text);
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentCount scan;
    for (int d = 0; d < 64 && !scan.second_has_content && parser.HandleNextDocument(scan); ++d) {
    }
    if (scan.second_has_content) return "several " + at(scan.mark.line, scan.mark.column);
    return "ok " + YAML::Dump(first);
  } catch (const YAML::Exception& e) {
    return "error " + at(e.mark.line, e.mark.column);
  }
}

std::string parsed(const std::string& text) {
  try {
    return "ok " + YAML::Dump(yaml::parse(text, "t.yaml"));
  } catch (const InputError& e) {
    const std::string kind =
        std::string(e.what()).find("several YAML documents") != std::string::npos ? "several "
                                                                                  : "error ";
    return kind + std::to_string(e.where().line) + ":" + std::to_string(e.where().column);
  }
}

TEST(YamlDocuments, ParseEqualsScanningEveryTextForASecondDocument) {
  const std::vector<std::string> lines = {"a: 1",     "b:",       "  - x",     "- y",
                                          "[1, 2]",   "{c: 3}",   "  d: 4",    "---",
                                          "--- e: 5", "...",      "%YAML 1.2", "# comment",
                                          "",         "f: |",     "  block",   "---x",
                                          "....",     "--- text", "g: 'q",     "  r'",
                                          "\"s\"",    "h: [",     "  1]",      "? k",
                                          ": v",      "i: &a 1",  "j: *a",     "k: *z",
                                          "-",        "l: m: n",  "plain",     "%TAG ! tag:x,2000:",
                                          " ---",     "m: ---",   "n: '---'"};
  std::mt19937_64 rng(37);
  int fast = 0, several = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::string text;
    const std::size_t count = 1 + rng() % 7;
    const char* newline = rng() % 4 == 0 ? "\r\n" : "\n";
    for (std::size_t i = 0; i < count; ++i) {
      text += lines[rng() % lines.size()];
      if (i + 1 < count || rng() % 2 == 0) text += newline;
    }
    const std::string expected = scanned_every_time(text);
    ASSERT_EQ(parsed(text), expected) << "text: '" << text << "'";
    try {
      const YAML::Node root = YAML::Load(text);
      fast += root.IsMap() && root.Style() == YAML::EmitterStyle::Block && root.Mark().column == 0;
    } catch (const YAML::Exception&) {
    }
    several += expected.rfind("several", 0) == 0 ? 1 : 0;
  }
  EXPECT_GT(fast, 100);  // block mappings (the skipped scan) were among them
  EXPECT_GT(several, 100);
  // The roots that can end before the text: each followed by content at column 0.
  for (const std::string text :
       {"[1]\nkey: 2\n", "- a\nkey: 2\n", "  a: 1\nb: 2\n", "{a: 1}\nb: 2\n", "plain\n--- b\n",
        "a: 1\n---\nb: 2\n", "a: 1\n...\nb: 2\n", "a: 1\n%YAML 1.2\n---\nb: 2\n"}) {
    const std::string expected = scanned_every_time(text);
    EXPECT_NE(expected.rfind("ok", 0), 0u) << text;  // refused, one way or another
    EXPECT_EQ(parsed(text), expected) << text;
  }
  // A lone carriage return is no line break to yaml-cpp: "---" after it is text, one document.
  EXPECT_EQ(parsed("a: 1\r---\r\nb: 2\n"), scanned_every_time("a: 1\r---\r\nb: 2\n"));
}

}  // namespace
}  // namespace gpumux
