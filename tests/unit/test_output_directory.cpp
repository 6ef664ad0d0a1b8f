// A folder written all or nothing (sim/io/output_directory.hpp, `gpumux plan -o DIR`): the
// checks before any work (a file in the way, a foreign entry, . and .., a missing parent, a name
// too long for its temporary sibling), the whole replacement of an earlier folder, and a failed
// write that leaves the earlier folder as it was with no temporary folder beside it.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/io/output_directory.hpp"
#include "tests/support/scratch_folder.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

// What the tests' writer writes: a.txt, sub/ and the .txt files in it.
bool owned(const std::string& relative) {
  return relative == "a.txt" || relative == "sub/" ||
         (relative.starts_with("sub/") && relative.ends_with(".txt") &&
          relative.find('/', 4) == std::string::npos);
}

class OutputDirectoryTest : public ScratchFolderTest {
 protected:
  OutputDirectoryTest() : ScratchFolderTest("gpumux_output_directory_") {}
  /// Every path under ROOT (relative, sorted; folders end in '/').
  static std::vector<std::string> tree(const fs::path& root) {
    std::vector<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      std::string name = fs::relative(entry.path(), root).generic_string();
      if (entry.is_directory()) name += '/';
      names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  static void put(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  static std::string contents(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  /// The OutputError message of check_output_directory(P), or "" when it passed.
  static std::string refusal(const std::string& p) {
    try {
      check_output_directory(p, owned);
      return "";
    } catch (const OutputError& e) {
      return e.what();
    }
  }
};

TEST_F(OutputDirectoryTest, NewFolderIsWrittenWhole) {
  const std::string out = path("out");
  replace_directory_atomically(out, owned, [](const std::string& temp) {
    put(fs::path(temp) / "a.txt", "one");
    put(fs::path(temp) / "sub" / "b.txt", "two");
  });
  EXPECT_EQ(tree(out), (std::vector<std::string>{"a.txt", "sub/", "sub/b.txt"}));
  EXPECT_EQ(contents(fs::path(out) / "sub" / "b.txt"), "two");
  EXPECT_EQ(tree(dir_),
            (std::vector<std::string>{"out/", "out/a.txt", "out/sub/", "out/sub/b.txt"}));
}

TEST_F(OutputDirectoryTest, EarlierFolderIsReplacedWholeNoStaleFiles) {
  const std::string out = path("out");
  put(fs::path(out) / "a.txt", "old");
  put(fs::path(out) / "sub" / "stale.txt", "old");
  replace_directory_atomically(
      out + "/", owned, [](const std::string& temp) { put(fs::path(temp) / "a.txt", "new"); });
  EXPECT_EQ(tree(out), (std::vector<std::string>{"a.txt"}));
  EXPECT_EQ(contents(fs::path(out) / "a.txt"), "new");
  EXPECT_EQ(tree(dir_).size(), 2u);  // out/ and out/a.txt: no temporary or old folder left
}

TEST_F(OutputDirectoryTest, FailedWriteLeavesTheEarlierFolderAndNoTemporary) {
  const std::string out = path("out");
  put(fs::path(out) / "a.txt", "old");
  try {
    replace_directory_atomically(out, owned, [](const std::string& temp) {
      put(fs::path(temp) / "a.txt", "half");
      throw OutputError("cannot write " + temp + "/sub/b.txt: No space left on device");
    });
    FAIL() << "the failed write was not reported";
  } catch (const OutputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
    EXPECT_EQ(message.find(".tmp."), std::string::npos) << message;  // names out, not its temp
  }
  EXPECT_EQ(tree(dir_), (std::vector<std::string>{"out/", "out/a.txt"}));
  EXPECT_EQ(contents(fs::path(out) / "a.txt"), "old");
  // Any other exception from the writer is an OutputError too, the folder unchanged.
  EXPECT_THROW(replace_directory_atomically(
                   out, owned, [](const std::string&) { throw std::runtime_error("boom"); }),
               OutputError);
  EXPECT_EQ(tree(dir_), (std::vector<std::string>{"out/", "out/a.txt"}));
}

TEST_F(OutputDirectoryTest, RefusedBeforeAnyWork) {
  put(dir_ / "file", "x");
  EXPECT_NE(refusal(path("file")).find("is a regular file"), std::string::npos);
  put(dir_ / "mine" / "notes.md", "keep");
  EXPECT_NE(refusal(path("mine")).find("holds notes.md, which gpumux did not write"),
            std::string::npos);
  put(dir_ / "odd" / "sub", "a file where a folder is written");
  EXPECT_NE(refusal(path("odd")).find("holds sub,"), std::string::npos);
  EXPECT_NE(refusal(path("missing/out")).find("does not exist"), std::string::npos);
  EXPECT_NE(refusal(std::string(300, 'n')).find("File name too long"), std::string::npos);
  // The temporary sibling's name (NAME.tmp.PID) must fit too.
  EXPECT_NE(refusal(path(std::string(250, 'n'))).find("cannot create a folder"), std::string::npos);
  for (const std::string name : {".", "..", "/", ""}) {
    EXPECT_FALSE(refusal(name).empty()) << name;
  }
  EXPECT_EQ(tree(dir_),
            (std::vector<std::string>{"file", "mine/", "mine/notes.md", "odd/", "odd/sub"}));
  // An empty folder and an earlier write are accepted.
  fs::create_directories(dir_ / "empty");
  EXPECT_EQ(refusal(path("empty")), "");
}

TEST_F(OutputDirectoryTest, SymlinkToAFolderIsFollowed) {
  const fs::path real = dir_ / "real";
  put(real / "a.txt", "old");
  fs::create_directory_symlink(real, dir_ / "link");
  replace_directory_atomically(
      path("link"), owned, [](const std::string& temp) { put(fs::path(temp) / "a.txt", "new"); });
  EXPECT_TRUE(fs::is_symlink(dir_ / "link"));
  EXPECT_EQ(contents(real / "a.txt"), "new");
}

}  // namespace
}  // namespace gpumux
