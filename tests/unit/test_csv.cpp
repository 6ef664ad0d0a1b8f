// The shared quoted-CSV field splitter (sim/util/csv.hpp).
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/util/csv.hpp"

namespace gpumux {
namespace {

using Fields = std::vector<std::string>;

TEST(Csv, PlainFieldsAreTrimmed) {
  EXPECT_EQ(split_csv_line("a,b,c"), (Fields{"a", "b", "c"}));
  EXPECT_EQ(split_csv_line(" a ,\tb\t, c "), (Fields{"a", "b", "c"}));
}

TEST(Csv, QuotedCommasStayInTheField) {
  EXPECT_EQ(split_csv_line("\"1,234\",x"), (Fields{"1,234", "x"}));
  EXPECT_EQ(split_csv_line("name,\"void k<int, 2>(float*, int)\",3"),
            (Fields{"name", "void k<int, 2>(float*, int)", "3"}));
}

TEST(Csv, DoubledQuotesInsideQuotesAreOneQuote) {
  EXPECT_EQ(split_csv_line("\"say \"\"hi\"\"\",b"), (Fields{"say \"hi\"", "b"}));
  EXPECT_EQ(split_csv_line("\"\"\"\""), (Fields{"\""}));
  EXPECT_EQ(split_csv_line("\"\""), (Fields{""}));
}

TEST(Csv, EmptyFields) {
  EXPECT_EQ(split_csv_line(""), (Fields{""}));
  EXPECT_EQ(split_csv_line(","), (Fields{"", ""}));
  EXPECT_EQ(split_csv_line("a,,c"), (Fields{"a", "", "c"}));
  EXPECT_EQ(split_csv_line(",b,"), (Fields{"", "b", ""}));
}

TEST(Csv, TrailingCommaEndsWithAnEmptyField) {
  EXPECT_EQ(split_csv_line("a,b,"), (Fields{"a", "b", ""}));
  EXPECT_EQ(split_csv_line("\"a,\",b,"), (Fields{"a,", "b", ""}));
}

TEST(Csv, UnterminatedQuoteThrows) {
  EXPECT_THROW(split_csv_line("a,\"b"), std::invalid_argument);
  EXPECT_THROW(split_csv_line("\"a\"\""), std::invalid_argument);
  try {
    split_csv_line("\"open");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unterminated quoted field");
  }
}

}  // namespace
}  // namespace gpumux
