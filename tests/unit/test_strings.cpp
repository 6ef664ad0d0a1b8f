// sim/util/strings: split and join are inverses, trim strips only spaces and tabs.
#include <gtest/gtest.h>

#include <random>

#include "sim/util/strings.hpp"

namespace gpumux {
namespace {

TEST(Split, KeepsEmptyItemsAtEitherEndAndBetween) {
  EXPECT_EQ(split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(split("", ','), (std::vector<std::string>{""}));
  EXPECT_EQ(split(",", ','), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(split("abc", ','), (std::vector<std::string>{"abc"}));
}

TEST(Split, JoinUndoesSplitOnRandomText) {
  std::mt19937 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::string text;
    const int length = static_cast<int>(rng() % 12);
    for (int c = 0; c < length; ++c) text += "ab;"[rng() % 3];
    const std::vector<std::string> items = split(text, ';');
    EXPECT_EQ(join(items, ";"), text);
    for (const std::string& item : items) EXPECT_EQ(item.find(';'), std::string::npos);
  }
}

TEST(Trim, StripsSpacesAndTabsOnly) {
  EXPECT_EQ(trim(" \ta b\t "), "a b");
  EXPECT_EQ(trim("  "), "");
  EXPECT_EQ(trim("x\n"), "x\n");
}

}  // namespace
}  // namespace gpumux
