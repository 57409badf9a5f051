// WaitJob's paging: a finished job's rows come back in pages that each fit the
// message limit, read the way the lab controller reads them (first_report = rows so
// far), and put back together they are every row once, in order.
#include "lab/agent.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

std::vector<proto::TransferReport> Rows(int n, size_t label_bytes) {
  std::vector<proto::TransferReport> rows(n);
  for (int i = 0; i < n; ++i) {
    rows[i].set_iteration(i + 1);
    rows[i].set_label(std::string(label_bytes, 'x'));
  }
  return rows;
}

TEST(PageOfRows, PagesFitTheLimitAndReassembleEveryRowInOrder) {
  const auto rows = Rows(10, 1000);
  const size_t limit = 3 * rows[0].ByteSizeLong();
  std::vector<proto::TransferReport> got;
  int pages = 0;
  bool done = false;
  while (!done && pages < 20) {
    proto::JobState page;
    done = PageOfRows(rows, static_cast<uint32_t>(got.size()), limit, &page);
    ++pages;
    EXPECT_EQ(page.total_reports(), 10u);
    ASSERT_GT(page.reports_size(), 0);
    EXPECT_LE(page.ByteSizeLong(), limit + 64) << "page " << pages;
    for (const auto& r : page.reports()) got.push_back(r);
  }
  ASSERT_TRUE(done);
  EXPECT_EQ(pages, 4);  // 3 + 3 + 3 + 1
  ASSERT_EQ(got.size(), rows.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].iteration(), static_cast<int>(i + 1));
}

TEST(PageOfRows, ARowLargerThanAPageStillTravelsAlone) {
  const auto rows = Rows(2, 5000);
  proto::JobState page;
  EXPECT_FALSE(PageOfRows(rows, 0, 100, &page));
  EXPECT_EQ(page.reports_size(), 1);
}

TEST(PageOfRows, AFirstRowPastTheEndIsAnEmptyLastPage) {
  const auto rows = Rows(2, 10);
  proto::JobState page;
  EXPECT_TRUE(PageOfRows(rows, 99, 1000, &page));
  EXPECT_EQ(page.reports_size(), 0);
  EXPECT_EQ(page.total_reports(), 2u);
}

}  // namespace
}  // namespace nasperf
