// The CSV files users' spreadsheets depend on (docs/DESIGN.md §5, the CSV contract): transfers.csv and
// samples.csv in one directory. A report's transfer row is appended with one write,
// its sample rows in whole-line batches of 64 KiB (never all of them in memory), and
// both are synced before Append returns; a report already written (same run id, role,
// host, iteration, stream and transfer id) is skipped, also across restarts: Open
// reads transfers.csv in 1 MiB pieces and keeps a 16-byte digest of each row's key.
// A torn last line (crash mid-write) is moved aside to a .torn file. Thread-safe.
#ifndef NASPERF_COLLECTOR_CSV_SINK_H_
#define NASPERF_COLLECTOR_CSV_SINK_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/numeric/int128.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/fd.h"
#include "proto/nasperf.pb.h"
#include "wire/report_sink.h"

namespace nasperf {

// The names of wire/columns.h's TransferColumnTable(), in order: the header.
const std::vector<std::string>& TransferColumns();
const std::vector<std::string>& SampleColumns();

// One transfers.csv line (with "\n") for a report, a FormatCell per column, and its
// samples.csv lines.
std::string TransferRow(const proto::TransferReport& report);
std::string SampleRows(const proto::TransferReport& report);

class CsvSink : public ReportSink {
 public:
  struct OpenInfo {
    size_t rows_found = 0;               // transfer rows already in the file
    std::vector<std::string> set_aside;  // files that received torn lines
    size_t columns_added = 0;            // an older nasperf's transfers.csv was given this version's columns
  };

  // Creates dir if needed; opens or creates both files. max_bytes > 0: refuse a
  // report (FAILED_PRECONDITION) when the two files could grow past it: its rows'
  // size is bounded from above before any is formatted.
  static absl::StatusOr<std::unique_ptr<CsvSink>> Open(const std::string& dir, uint64_t max_bytes = 0);

  absl::Status Submit(const proto::TransferReport& report) override;
  // Like Submit; *duplicate tells whether the report was already there.
  absl::Status Append(const proto::TransferReport& report, bool* duplicate);

  const OpenInfo& open_info() const { return open_info_; }
  std::string transfers_path() const { return dir_ + "/transfers.csv"; }
  std::string samples_path() const { return dir_ + "/samples.csv"; }

 private:
  CsvSink() = default;
  // transfers.csv: read in pieces, for the keys of the rows already there.
  absl::Status OpenTransfers(const std::string& path, const std::vector<std::string>& columns, Fd* fd);
  // Reads the file again, piece by piece, into a new one with this version's columns.
  absl::Status RewriteWithColumns(const std::string& path, size_t old_width, const std::vector<std::string>& columns,
                                  Fd* fd);
  // The report's sample rows, formatted and written in batches; counts what it wrote.
  absl::Status WriteSamples(const proto::TransferReport& report, absl::string_view prefix)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // samples.csv, which can grow to gigabytes: only its header and its end are read.
  absl::Status OpenSamples(const std::string& path, const std::vector<std::string>& columns, Fd* fd);
  // Moves `torn` (the file's last bytes, a crash's partial row) to path.torn-TIME
  // and cuts the file to `keep` bytes.
  absl::Status SetAsideTorn(int fd, const std::string& path, absl::string_view torn, uint64_t keep);

  std::string dir_;
  OpenInfo open_info_;
  absl::Mutex mu_;
  Fd transfers_ ABSL_GUARDED_BY(mu_);
  Fd samples_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<absl::uint128> seen_ ABSL_GUARDED_BY(mu_);  // KeyDigest of each row
  uint64_t written_ ABSL_GUARDED_BY(mu_) = 0;                     // rows written so far
  uint64_t max_bytes_ = 0;                                        // 0 = no limit
  uint64_t stored_bytes_ ABSL_GUARDED_BY(mu_) = 0;                // both files' sizes
  absl::Mutex sync_mu_;                                           // taken before mu_, never while holding it
  uint64_t synced_ ABSL_GUARDED_BY(sync_mu_) = 0;                 // rows known to be on disk
};

}  // namespace nasperf

#endif  // NASPERF_COLLECTOR_CSV_SINK_H_
