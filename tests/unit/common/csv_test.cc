#include "common/csv.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(CsvQuote, OnlyWhenNeeded) {
  EXPECT_EQ(CsvQuote("plain"), "plain");
  EXPECT_EQ(CsvQuote(""), "");
  EXPECT_EQ(CsvQuote("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvQuote("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvQuote("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvQuote("cr\r"), "\"cr\r\"");
}

TEST(CsvText, FormulaGuard) {
  EXPECT_EQ(CsvText("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  EXPECT_EQ(CsvText("+1"), "'+1");
  EXPECT_EQ(CsvText("-cmd"), "'-cmd");
  EXPECT_EQ(CsvText("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(CsvText("\tx"), "'\tx");
  EXPECT_EQ(CsvText("cache-on"), "cache-on");
  EXPECT_EQ(CsvText("no space left on device"), "no space left on device");
  // Spreadsheets skip leading blanks and line breaks, and read full-width forms.
  EXPECT_EQ(FormulaGuard(" =1+1"), "' =1+1");
  EXPECT_EQ(FormulaGuard("\n=cmd|' /C calc'!A0"), "'\n=cmd|' /C calc'!A0");
  EXPECT_EQ(FormulaGuard("\r\n+1"), "'\r\n+1");
  EXPECT_EQ(FormulaGuard("\xef\xbc\x9d"
                         "1+1"),
            "'\xef\xbc\x9d"
            "1+1");  // U+FF1D
  EXPECT_EQ(FormulaGuard("\xef\xbc\x8b"
                         "1"),
            "'\xef\xbc\x8b"
            "1");  // U+FF0B
  EXPECT_EQ(FormulaGuard("  \xef\xbc\x8d"
                         "1"),
            "'  \xef\xbc\x8d"
            "1");  // U+FF0D after blanks
  EXPECT_EQ(FormulaGuard("\xef\xbc\xa0"
                         "SUM"),
            "'\xef\xbc\xa0"
            "SUM");  // U+FF20
  EXPECT_EQ(FormulaGuard("  plain label"), "  plain label");
  EXPECT_EQ(FormulaGuard("   "), "   ");
  EXPECT_EQ(FormulaGuard(""), "");
}

// Issue 29, row 11: the leading characters spreadsheets also skip, and the small forms.
TEST(CsvText, FormulaGuardSeesPastEveryBlankASpreadsheetSkips) {
  for (std::string blank : {"\v", "\f", "\xc2\xa0", "\xe3\x80\x80", "\xef\xbb\xbf", "\xe2\x80\x8b"}) {
    const std::string cell = blank + "=1+1";
    EXPECT_EQ(FormulaGuard(cell), "'" + cell) << "a formula after a blank of " << blank.size() << " bytes";
    EXPECT_EQ(FormulaGuard(blank + blank + "@SUM"), "'" + blank + blank + "@SUM");
  }
  EXPECT_EQ(FormulaGuard("\v"), "'\v");  // a control blank first is suspect on its own
  EXPECT_EQ(FormulaGuard("\f"), "'\f");
  for (std::string small : {"\xef\xb9\xa6", "\xef\xb9\xa2", "\xef\xb9\xa3"}) {  // U+FE66, U+FE62, U+FE63
    EXPECT_EQ(FormulaGuard(small + "1"), "'" + small + "1");
  }
  EXPECT_EQ(FormulaGuard("\xc2\xa0label"), "\xc2\xa0label");  // a blank alone is no formula
  EXPECT_EQ(FormulaGuard("\xe2\x80\x8b"), "\xe2\x80\x8b");
}

// Issue 42, row 10: every Unicode space, invisible character and direction control
// that may come before a formula character, one at a time and mixed.
std::string Utf8(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
  return out;
}

TEST(CsvText, FormulaGuardSeesPastUnicodeSpacesAndInvisibles) {
  std::vector<char32_t> blanks = {0x09,   0x20,   0x85,   0xa0,   0xad,   0x1680, 0x180e,
                                  0x2028, 0x2029, 0x202f, 0x205f, 0x2060, 0x3000, 0xfeff};
  for (char32_t c = 0x2000; c <= 0x200f; ++c) blanks.push_back(c);  // spaces, zero-widths, LRM, RLM
  for (char32_t c = 0x202a; c <= 0x202e; ++c) blanks.push_back(c);  // embeddings and overrides (U+202E)
  for (char32_t c = 0x2066; c <= 0x2069; ++c) blanks.push_back(c);  // isolates
  for (char32_t blank : blanks) {
    for (const char* formula : {"=1+1", "+1", "-1", "@SUM(A1)",
                                "\xef\xbc\x9d"
                                "1"}) {
      const std::string cell = Utf8(blank) + formula;
      EXPECT_EQ(FormulaGuard(cell), "'" + cell) << "U+" << std::hex << static_cast<uint32_t>(blank) << " " << formula;
    }
    const std::string mixed = Utf8(0x2003) + Utf8(blank) + Utf8(0xad) + " =1";
    EXPECT_EQ(FormulaGuard(mixed), "'" + mixed) << std::hex << static_cast<uint32_t>(blank);
    const std::string text = Utf8(blank) + "label";  // a blank before text is no formula
    EXPECT_EQ(FormulaGuard(text), blank == 0x09 ? "'" + text : text);
  }
  // A broken UTF-8 sequence is not skipped, and what follows it is not a formula start.
  EXPECT_EQ(FormulaGuard("\xe2\x80=1"), "\xe2\x80=1");
  EXPECT_EQ(FormulaGuard("\xe2=1"), "\xe2=1");
  EXPECT_EQ(FormulaGuard("\xe2\x80\x8a"), "\xe2\x80\x8a");  // a blank alone
}

TEST(CsvReader, RoundTripsWhatWeWrite) {
  std::vector<std::string> cells = {"a,b", "q\"uote", "multi\nline", "", "=x", "plain"};
  std::vector<std::string> quoted;
  for (const auto& c : cells) quoted.push_back(CsvQuote(c));
  std::string text = CsvLine(quoted) + CsvLine({"1", "2"});
  CsvReader reader(text);
  std::vector<std::string> fields;
  ASSERT_TRUE(*reader.Next(&fields));
  EXPECT_EQ(fields, cells);
  EXPECT_EQ(reader.line(), 1);
  ASSERT_TRUE(*reader.Next(&fields));
  EXPECT_EQ(fields, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(reader.line(), 3);  // the quoted newline moved the line count
  EXPECT_FALSE(*reader.Next(&fields));
  EXPECT_FALSE(reader.torn());
  EXPECT_EQ(reader.complete_bytes(), text.size());
}

TEST(CsvReader, ReusedCellsCarryNothingOver) {
  // The reader parses into the strings the vector already holds: a narrower or
  // emptier record after a wider one must not keep any of it.
  CsvReader reader("long,cells,three\nx\n,\n\"a\"\"b\",c\rd\n\"\"\n");
  std::vector<std::string> fields;
  const std::vector<std::vector<std::string>> want = {
      {"long", "cells", "three"}, {"x"}, {"", ""}, {"a\"b", "c\rd"}, {""}};
  for (const auto& record : want) {
    ASSERT_TRUE(*reader.Next(&fields));
    EXPECT_EQ(fields, record);
  }
  EXPECT_FALSE(*reader.Next(&fields));
  EXPECT_TRUE(fields.empty());
}

TEST(CsvReader, AcceptsCrlf) {
  CsvReader reader("a,b\r\nc,d\r\n");
  std::vector<std::string> fields;
  ASSERT_TRUE(*reader.Next(&fields));
  EXPECT_EQ(fields, (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(*reader.Next(&fields));
  EXPECT_EQ(fields, (std::vector<std::string>{"c", "d"}));
}

TEST(CsvReader, TornLastRecordIsReportedNotReturned) {
  std::string text = "h1,h2\n1,2\n3,\"unterminated";
  CsvReader reader(text);
  std::vector<std::string> fields;
  ASSERT_TRUE(*reader.Next(&fields));
  ASSERT_TRUE(*reader.Next(&fields));
  EXPECT_FALSE(*reader.Next(&fields));
  EXPECT_TRUE(reader.torn());
  EXPECT_EQ(reader.complete_bytes(), 10u);
}

TEST(CsvReader, MalformedNamesTheLine) {
  CsvReader reader("a,b\nc,d\"e\n");
  std::vector<std::string> fields;
  ASSERT_TRUE(*reader.Next(&fields));
  auto bad = reader.Next(&fields);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos) << bad.status();
  CsvReader after_quote("\"x\"y\n");
  EXPECT_FALSE(after_quote.Next(&fields).ok());
}

}  // namespace
}  // namespace nasperf
