// Where the receiver writes (docs/DESIGN.md §4, security: Files): a directory it opened once, or the
// discard target. Files are created only inside that directory, with names the
// receiver makes, O_EXCL and O_NOFOLLOW; nothing from the network becomes a path.
// Also: which write modes the file system accepts, free space, removal. Thread-safe.
#ifndef NASPERF_DATAPATH_TARGET_H_
#define NASPERF_DATAPATH_TARGET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/fd.h"
#include "common/policy.h"
#include "datapath/file_set.h"
#include "datapath/write_pipeline.h"

namespace nasperf {

class Target {
 public:
  // "discard" or a directory that exists. Probes which write modes work there.
  static absl::StatusOr<std::unique_ptr<Target>> Open(const std::string& spec);

  bool discard() const { return discard_; }
  const std::string& path() const { return path_; }
  const std::vector<WriteMode>& write_modes() const { return modes_; }
  bool Supports(WriteMode mode) const;
  // A tmpfs or ramfs: no disks behind the page cache.
  bool in_memory() const { return in_memory_; }
  // Why a mode is missing, for the error a sender sees.
  std::string Unsupported(WriteMode mode) const;

  // Bytes available to an unprivileged writer; 0 for discard.
  absl::StatusOr<uint64_t> FreeBytes() const;
  // The free-space guard every writer into a target uses (the receiver's writes and
  // laid-out read files, a reading client's --local-target): `size` more bytes must
  // fit in what is free after `reserved` (bytes promised to writes in flight) and
  // leave `min_free`. RESOURCE_EXHAUSTED naming the directory and the figures
  // otherwise; always OK for discard.
  absl::Status CheckRoom(uint64_t size, uint64_t reserved, uint64_t min_free) const;

  // Creates `name` (a receiver-made name, no slashes); if it exists, "name.1.dat"...
  // Returns the name actually used and a writer for it.
  absl::StatusOr<std::unique_ptr<BlockWriter>> Create(const std::string& name, WriteMode mode, const SyncPolicy& sync,
                                                      std::string* created_name);
  // A write of many files: a writer that creates SetFilePath(name, i, files_per_dir)
  // for each of `sizes` as the bytes reach it (O_EXCL: an existing name fails the
  // transfer; with files_per_dir, each directory a new one, its files made beneath its
  // descriptor), writes it whole, syncs it (fdatasync) unless sync is none, closes it,
  // and tallies it in *tally; *created lists the names it made, each directory as
  // "DIR/" after its files. Both outlive the writer. Buffered or dsync writes only.
  absl::StatusOr<std::unique_ptr<BlockWriter>> CreateSet(const std::string& name,
                                                         std::shared_ptr<const std::vector<uint64_t>> sizes,
                                                         uint64_t files_per_dir, WriteMode mode, const SyncPolicy& sync,
                                                         FileSetTally* tally, std::vector<std::string>* created);
  // A name Create or CreateSet made: a file, a set's "DIR/FILE" (through DIR's
  // descriptor, no symlink followed) or "DIR/" (an empty directory). Gone already: ok.
  absl::Status Remove(const std::string& name);

  // Reads (docs/DESIGN.md §6, measurement semantics: Reads): a file in the target. `name` is a plain name (no
  // '/', not "." or ".."), opened without following a symlink; only a regular file.
  // *size: its length.
  absl::StatusOr<Fd> OpenForRead(const std::string& name, uint64_t* size) const;
  // Writes a new file `name` of `size` bytes of the generated payload (`seed`) and
  // syncs it; a regular file of that name and size is kept as it is (a read run's
  // later iterations reuse it). *written: whether this call wrote it.
  absl::Status LayOut(const std::string& name, uint64_t size, uint64_t seed, bool* written);

 private:
  Target() = default;
  bool discard_ = false;
  bool in_memory_ = false;
  std::string path_;
  Fd dir_;
  std::vector<WriteMode> modes_;
  std::string direct_refusal_;
};

}  // namespace nasperf

#endif  // NASPERF_DATAPATH_TARGET_H_
