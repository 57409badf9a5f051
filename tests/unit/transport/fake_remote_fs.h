// An in-memory RemoteFs for tests (transport/remote_fs.h): a fake server's files by
// path, and the faults it can be told to show. Not thread-safe: one server per thread.
#ifndef NASPERF_TESTS_UNIT_TRANSPORT_FAKE_REMOTE_FS_H_
#define NASPERF_TESTS_UNIT_TRANSPORT_FAKE_REMOTE_FS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "transport/remote_fs.h"

namespace nasperf {

// The server's side: files by path, and what it can do.
struct FakeServer {
  std::map<std::string, std::string> files;
  std::optional<uint64_t> free_bytes;  // none: it cannot say
  bool can_sync = true;
  int syncs = 0;
  std::optional<uint64_t> full_at;          // a write past this byte fails as a full disk would
  std::optional<uint64_t> flip_at;          // the byte a faulty disk stores wrong
  std::optional<uint64_t> keep;             // what a faulty disk keeps of each file (it loses the rest)
  std::function<void()> on_open, on_close;  // a file opened (to read) or closed
  std::set<std::string> dirs = {"/dir"};    // the directories there are
};

class FakeFile : public RemoteFile {
 public:
  FakeFile(FakeServer& server, std::string path) : server_(server), path_(std::move(path)) {}
  absl::Status PWrite(const uint8_t* data, size_t size, uint64_t offset) override {
    if (server_.full_at && offset + size > *server_.full_at) {
      return absl::ResourceExhaustedError(
          absl::StrCat("write ", path_, " at byte ", offset, " on fake:22: No space left on device"));
    }
    std::string& file = server_.files[path_];
    if (file.size() < offset + size) file.resize(offset + size);
    file.replace(offset, size, reinterpret_cast<const char*>(data), size);
    if (server_.flip_at && *server_.flip_at >= offset && *server_.flip_at < offset + size) file[*server_.flip_at] ^= 1;
    if (server_.keep && file.size() > *server_.keep) file.resize(*server_.keep);
    return absl::OkStatus();
  }
  absl::StatusOr<size_t> PRead(uint8_t* data, size_t size, uint64_t offset) override {
    const std::string& file = server_.files[path_];
    if (offset >= file.size()) return 0;
    return file.copy(reinterpret_cast<char*>(data), size, offset);
  }
  absl::Status Sync() override {
    ++server_.syncs;
    return absl::OkStatus();
  }
  absl::Status Close() override {
    if (server_.on_close) server_.on_close();
    return absl::OkStatus();
  }

 private:
  FakeServer& server_;
  const std::string path_;
};

class FakeFs : public RemoteFs {
 public:
  explicit FakeFs(FakeServer& server) : server_(server) {}
  const std::string& Where() const override { return where_; }
  absl::StatusOr<std::unique_ptr<RemoteFile>> Create(const std::string& path) override {
    if (server_.files.count(path) > 0) return absl::AlreadyExistsError(absl::StrCat(path, " already exists"));
    server_.files[path];
    return std::make_unique<FakeFile>(server_, path);
  }
  absl::StatusOr<std::unique_ptr<RemoteFile>> Open(const std::string& path) override {
    if (server_.files.count(path) == 0) return absl::NotFoundError(path);
    if (server_.on_open) server_.on_open();
    return std::make_unique<FakeFile>(server_, path);
  }
  absl::StatusOr<uint64_t> FreeBytes(const std::string& dir) override {
    if (!server_.free_bytes) return absl::UnimplementedError("no statvfs");
    return *server_.free_bytes;
  }
  absl::Status CanSync() override {
    return server_.can_sync ? absl::OkStatus() : absl::UnimplementedError("the fake offers no fsync");
  }
  absl::Status Unlink(const std::string& path) override {
    if (server_.files.erase(path) == 0) return absl::NotFoundError(absl::StrCat("cleanup: remove ", path));
    return absl::OkStatus();
  }
  absl::Status Mkdir(const std::string& path) override {
    if (server_.dirs.count(path) > 0 || server_.files.count(path) > 0) return absl::AlreadyExistsError(path);
    server_.dirs.insert(path);
    return absl::OkStatus();
  }
  absl::Status Rmdir(const std::string& path) override {
    auto inside = server_.files.lower_bound(path + "/");
    if (inside != server_.files.end() && inside->first.rfind(path + "/", 0) == 0) {
      return absl::FailedPreconditionError(absl::StrCat("cleanup: remove ", path, ": not empty"));
    }
    if (server_.dirs.erase(path) == 0) return absl::NotFoundError(absl::StrCat("cleanup: remove ", path));
    return absl::OkStatus();
  }
  absl::StatusOr<RemoteStat> Stat(const std::string& path) override {
    if (server_.dirs.count(path) > 0) return RemoteStat{true, false, 0};
    auto file = server_.files.find(path);
    if (file == server_.files.end()) return absl::NotFoundError(absl::StrCat(path, " on ", where_, ": no such file"));
    return RemoteStat{false, true, file->second.size()};
  }

 private:
  FakeServer& server_;
  const std::string where_ = "fake:22";
};

}  // namespace nasperf

#endif  // NASPERF_TESTS_UNIT_TRANSPORT_FAKE_REMOTE_FS_H_
