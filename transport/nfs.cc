#include "transport/nfs.h"

// libnfs's headers use these types without including their headers.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
// clang-format off
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>      // rpc_nfs3_read_async, nfs_get_fh
#include <nfsc/libnfs-raw-nfs.h>  // NFS_V3, READ3res
// clang-format on

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/policy.h"
#include "common/units.h"
#include "datapath/rows.h"
#include "datapath/write_pipeline.h"
#include "transport/remote_fs.h"
#include "transport/share.h"
#include "transport/share_config.h"
#include "transport/share_url.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

constexpr uint64_t kMaxWriteSize = 1 << 20;  // a WRITE's payload: the kernel client's largest wsize
constexpr uint64_t kMinTransferSize = 4096;  // a smaller wsize or rsize is a million RPCs per GB: refused
constexpr int kServicePollMs = 100;          // libnfs times RPCs out only when serviced
constexpr size_t kMaxErrorChars = 300;

std::string Joined(const std::vector<std::string>& parts, size_t count) {
  std::string path;
  for (size_t i = 0; i < count; ++i) absl::StrAppend(&path, "/", parts[i]);
  return path.empty() ? "/" : path;
}

}  // namespace

absl::StatusOr<NfsUrl> ParseNfsUrl(absl::string_view url) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("not an nfs://host[:port]/export[/dir] URL: ", why));
  };
  if (absl::Status scheme = ConsumeShareUrlScheme(&url, "nfs://"); !scheme.ok()) return bad(scheme.message());
  NfsUrl out;
  absl::string_view query;
  if (size_t q = url.find('?'); q != absl::string_view::npos) {
    query = url.substr(q + 1);
    url = url.substr(0, q);
  }
  const size_t slash = url.find('/');
  if (slash == absl::string_view::npos) return bad("no export path after the host");
  const absl::string_view authority = url.substr(0, slash);
  if (authority.find('@') != absl::string_view::npos) return bad("NFSv3 has no user@ (use ?uid=N&gid=N)");
  if (absl::Status host = ParseShareUrlHost(authority, &out.host, &out.port); !host.ok()) return bad(host.message());
  absl::StatusOr<std::vector<std::string>> parts = ShareUrlPathParts(url.substr(slash));
  if (!parts.ok()) return bad(parts.status().message());
  if (parts->empty()) return bad("no export path after the host");
  out.path = Joined(*parts, parts->size());
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    uint32_t value = 0;
    const bool number = absl::SimpleAtoi(kv.second, &value) && value <= 0x7fffffff;
    if (kv.first == "uid" && number) {
      out.uid = value;
    } else if (kv.first == "gid" && number) {
      out.gid = value;
    } else if (kv.first == "version" && kv.second == "3") {
    } else if (kv.first == "version") {
      return absl::InvalidArgumentError(
          "NFSv4 is not offered: Debian's libnfs 4.0 encodes NFSv4 writes over ~3.9 KB wrongly; use NFSv3 "
          "(the default)");
    } else {
      return bad(absl::StrCat("unknown or bad query \"", TerminalSafe(pair.substr(0, 40)), "\" (uid=N, gid=N)"));
    }
  }
  return out;
}

absl::Status RefuseNfsIdentity(absl::string_view url) {
  absl::StatusOr<NfsUrl> parsed = ParseNfsUrl(url);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->uid && !parsed->gid) return absl::OkStatus();
  return absl::PermissionDeniedError(
      "an agent takes no uid= or gid= in a job's nfs:// URL: its NFS requests carry the agent's own user "
      "(give them to `nasperf sender --transport nfs` on the client, or run the agent as that user)");
}

// libnfs 4.0's XDR array decoder, replaced (this definition interposes on the one
// libnfs.so calls through its PLT). Its own sized the array as count * elsize in 32
// bits, taking count off the wire: a MOUNT reply saying 2^30 + 1 auth flavours had it
// allocate 4 bytes and write every flavour sent into them, a heap overflow driven by
// the server. As upstream's fix (libnfs 7b3c72a) does, a count that would overflow,
// or that the bytes left could not hold (nothing encodes in under 4), is refused.
// The static build links libnfs.a's own too, so there this one is ld's --wrap of it.
#ifdef NASPERF_WRAP_ZDR_ARRAY
#define NASPERF_ZDR_ARRAY __wrap_libnfs_zdr_array
#else
#define NASPERF_ZDR_ARRAY libnfs_zdr_array
#endif
extern "C" void* zdr_malloc(ZDR* zdrs, uint32_t size);  // exported, not declared, by libnfs 4.0
extern "C" bool_t NASPERF_ZDR_ARRAY(ZDR* zdrs, char** arrp, uint32_t* size, uint32_t /*maxsize*/, uint32_t elsize,
                                    zdrproc_t proc) {
  if (!libnfs_zdr_u_int(zdrs, size)) return FALSE;
  if (elsize == 0 || *size > UINT32_MAX / elsize) return FALSE;
  if (zdrs->x_op == ZDR_DECODE) {
    const int64_t left = std::max<int64_t>(0, int64_t{zdrs->size} - zdrs->pos);
    if (*size > left / 4) return FALSE;
    *arrp = static_cast<char*>(zdr_malloc(zdrs, *size * elsize));
    if (*arrp == nullptr) return FALSE;
    std::memset(*arrp, 0, size_t{*size} * elsize);
  }
  for (uint32_t i = 0; i < *size; ++i) {
    if (!proc(zdrs, *arrp + size_t{i} * elsize)) return FALSE;
  }
  return TRUE;
}

namespace {

std::string ErrorText(const char* text) {
  if (text == nullptr || *text == '\0') return "no reason given";
  std::string s(text, strnlen(text, kMaxErrorChars));
  return TerminalSafe(s);
}

// One NFS context, mounted: one TCP connection to the server and the stream's
// pipelined WRITEs on it. The slots of writes in flight belong to the session, not
// to a file, so libnfs's callbacks (run inside nfs_service, and by
// nfs_destroy_context for requests it cancels) always find them.
class NfsSession {
 public:
  static absl::StatusOr<std::unique_ptr<NfsSession>> Mount(const NfsUrl& url, const ShareOptions& options);
  ~NfsSession() {
    if (nfs_ != nullptr) nfs_destroy_context(nfs_);  // cancels what is in flight, through OnWrite
  }

  nfs_context* nfs() const { return nfs_; }
  const std::string& where() const { return where_; }
  // The directory inside the export that --to named, as libnfs paths ("/" = the export).
  const std::string& dir() const { return dir_; }
  uint64_t write_size() const { return write_size_; }
  bool broken() const { return broken_; }
  // Requests may still be owed: the connection is not used again.
  void MarkBroken() { broken_ = true; }
  // A handle on a connection that is gone: its CLOSE is queued and never sent, so that
  // nfs_destroy_context, cancelling it, frees the handle (libnfs 4.0 keeps no list of
  // open handles of its own).
  void Abandon(nfsfh* fh) { (void)nfs_close_async(nfs_, fh, &NfsSession::Ignore, nullptr); }

  // A failed call: the server's reason (libnfs's words), what was done, on what.
  absl::Status Failure(absl::string_view what, int rc) {
    const int err = rc < 0 ? -rc : EIO;
    // libnfs's sync calls say EINTR for a request that timed out: the server is not
    // asked again on this connection (each call would wait out --nfs-timeout anew).
    if (err == EINTR || nfs_get_fd(nfs_) < 0) broken_ = true;
    const std::string text = ErrorText(nfs_get_error(nfs_));
    if (err == ENOSPC || err == EDQUOT) {
      return absl::ResourceExhaustedError(
          absl::StrCat(what, " on ", where_, ": ", std::strerror(err), " (", text, ")"));
    }
    return absl::UnavailableError(absl::StrCat(what, " on ", where_, ": ", std::strerror(err), " (", text, ")"));
  }

  // Queues a WRITE of data[0, size) (size <= write_size()) at offset, FILE_SYNC or
  // UNSTABLE; waits first while in_flight WRITEs are unanswered. The data is copied:
  // the caller's buffer is free when this returns. A failed earlier WRITE shows here
  // or at Drain. An answer counts only when its count is what was sent (OnWrite).
  absl::Status Write(nfsfh* fh, const std::string& path, const uint8_t* data, size_t size, uint64_t offset,
                     bool file_sync);
  // Waits for every WRITE in flight.
  absl::Status Drain(const std::string& path);
  // Drain, then COMMIT: an error unless the server answers with the write verifier its
  // UNSTABLE WRITEs carried (another says it restarted: what they wrote may be lost).
  absl::Status Commit(nfsfh* fh, const std::string& path);
  // UNSTABLE WRITEs answered since the last COMMIT.
  bool uncommitted() const { return uncommitted_; }
  // Forgets the first write error and the verifier (a new file starts clean).
  void ResetWrites() {
    write_error_ = absl::OkStatus();
    verifier_.clear();
    uncommitted_ = false;
  }

  // Reads: queues a READ of `size` bytes (at most read_size()) at offset; answers are
  // taken in the order queued, whatever order they arrive in.
  absl::Status QueueRead(nfsfh* fh, const std::string& path, uint64_t offset, size_t size);
  // The oldest queued READ's bytes once answered (valid until the next call), or why
  // it failed; a short answer is the caller's to judge.
  absl::StatusOr<absl::Span<const uint8_t>> NextRead(const std::string& path);
  size_t reads_queued() const { return reads_.size(); }
  uint64_t read_size() const { return read_size_; }

 private:
  struct Slot {
    NfsSession* session = nullptr;
    std::vector<uint8_t> buffer;
    size_t size = 0;
    uint64_t offset = 0;
    bool file_sync = false;  // a WRITE asked FILE_SYNC
    // Reads: set by OnRead.
    bool answered = false;
    size_t got = 0;
    absl::Status error;
  };
  NfsSession() = default;
  Slot* TakeSlot();
  static void OnWrite(rpc_context* rpc, int status, void* data, void* private_data);
  static void OnCommit(rpc_context* rpc, int status, void* data, void* private_data);
  // A WRITE's answer, checked: status, count, what it says it made stable, its verifier.
  absl::Status CheckWrite(const Slot& slot, const WRITE3res& res);
  static void Ignore(int, nfs_context*, void*, void*) {}
  static void OnRead(rpc_context* rpc, int status, void* data, void* private_data);
  // Turns the loop until done() holds, or a request has gone unanswered for the
  // timeout (the server stopped, the path went away).
  absl::Status WaitUntil(const std::function<bool()>& done, const std::string& what);
  // One turn of libnfs's event loop: up to kServicePollMs of poll, then nfs_service
  // (also with no events: that is where libnfs times requests out).
  absl::Status ServiceOnce();

  nfs_context* nfs_ = nullptr;
  std::string where_, export_, dir_;
  uint64_t write_size_ = kMaxWriteSize;
  uint64_t read_size_ = kMaxWriteSize;
  size_t depth_ = 16;
  int64_t timeout_ns_ = 0;
  bool broken_ = false;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<Slot*> free_;
  size_t in_flight_ = 0;
  absl::Status write_error_;
  std::string verifier_;  // the UNSTABLE WRITEs' write verifier; empty: none yet
  bool uncommitted_ = false;
  std::deque<Slot*> reads_;    // queued READs, oldest first
  Slot* last_read_ = nullptr;  // the one NextRead handed out, freed at the next call
};

// libnfs 4.0's struct nfs_fh is private; its layout (libnfs-private.h) is a length
// and the handle's bytes. An NFSv3 handle is 1 to 64 bytes (FHSIZE3), which libnfs
// does not check of what LOOKUP or CREATE hand it: a longer one is refused here.
struct HandleView {
  int len;
  char* val;
};

// libnfs 4.0 exports nfs_get_rootfh (the mounted root's handle, a struct nfs_fh as
// above) without declaring it. libnfs takes MOUNT's fhandle3 at any length.
extern "C" struct nfs_fh* nfs_get_rootfh(struct nfs_context* nfs);

// The root handle MNT handed out, refused unless 1 to 64 bytes long.
absl::Status CheckRootHandle(nfs_context* nfs, absl::string_view where) {
  const auto* root = reinterpret_cast<const HandleView*>(nfs_get_rootfh(nfs));
  if (root == nullptr || root->val == nullptr || root->len < 1 || root->len > 64) {
    return absl::DataLossError(absl::StrCat("nfs mount ", where, ": the server's root file handle is ",
                                            root == nullptr ? 0 : root->len, " bytes (NFSv3: 1 to 64)"));
  }
  return absl::OkStatus();
}

// Why a mount failed, in words: libnfs says EFAULT ("Bad address") for a portmapper
// or MOUNT call that failed (a reply it could not decode or use, a connection lost),
// and may print a reason it lacks as "(null)".
std::string MountFailure(int rc, const char* libnfs_text) {
  const std::string text = absl::StrReplaceAll(ErrorText(libnfs_text), {{"(null)", "no reason given"}});
  if (rc == -EFAULT) return absl::StrCat("the portmapper or MOUNT call failed (", text, ")");
  return absl::StrCat(std::strerror(rc < 0 ? -rc : EIO), " (", text, ")");
}

absl::StatusOr<std::unique_ptr<NfsSession>> NfsSession::Mount(const NfsUrl& url, const ShareOptions& options) {
  std::vector<std::string> parts = absl::StrSplit(url.path, '/', absl::SkipEmpty());
  absl::Status first;
  // The export is the longest leading part of the path the server mounts; the rest
  // is a directory inside it (NFSv3's MOUNT takes only an export's own path).
  for (size_t count = parts.size(); count >= 1; --count) {
    std::unique_ptr<NfsSession> s(new NfsSession);
    s->nfs_ = nfs_init_context();
    if (s->nfs_ == nullptr) return absl::ResourceExhaustedError("libnfs: nfs_init_context failed");
    if (url.port != 0) {
      // libnfs 4.0 sets the NFS port only from a URL's nfsport= argument.
      nfs_url* applied =
          nfs_parse_url_incomplete(s->nfs_, absl::StrCat("nfs://", url.host, "/?nfsport=", url.port).c_str());
      if (applied == nullptr) return absl::InternalError(absl::StrCat("libnfs: ", ErrorText(nfs_get_error(s->nfs_))));
      nfs_destroy_url(applied);
    }
    nfs_set_version(s->nfs_, NFS_V3);
    nfs_set_autoreconnect(s->nfs_, 0);  // a lost server fails the transfer; libnfs would otherwise retry forever
    nfs_set_timeout(s->nfs_, options.timeout_s * 1000);
    nfs_set_tcp_syncnt(s->nfs_, 3);  // an unreachable host fails its connect in seconds
    if (url.uid) nfs_set_uid(s->nfs_, static_cast<int>(*url.uid));
    if (url.gid) nfs_set_gid(s->nfs_, static_cast<int>(*url.gid));
    s->export_ = Joined(parts, count);
    s->where_ = TerminalSafe(absl::StrCat(url.host, url.port ? absl::StrCat(":", url.port) : "", ":", s->export_));
    const int rc = nfs_mount(s->nfs_, url.host.c_str(), s->export_.c_str());
    if (rc == 0) {
      if (absl::Status root = CheckRootHandle(s->nfs_, s->where_); !root.ok()) return root;
      s->dir_ = "/";
      for (size_t i = count; i < parts.size(); ++i) absl::StrAppend(&s->dir_, s->dir_ == "/" ? "" : "/", parts[i]);
      s->write_size_ = std::min<uint64_t>(nfs_get_writemax(s->nfs_), kMaxWriteSize);
      s->read_size_ = std::min<uint64_t>(nfs_get_readmax(s->nfs_), kMaxWriteSize);
      if (s->write_size_ < kMinTransferSize || s->read_size_ < kMinTransferSize) {
        return absl::UnavailableError(absl::StrCat(s->where_, ": the server offers wsize ", s->write_size_,
                                                   " and rsize ", s->read_size_, " (under 4 KiB: refused)"));
      }
      s->depth_ = static_cast<size_t>(options.in_flight);
      s->timeout_ns_ = int64_t{options.timeout_s} * 1000000000;
      return s;
    }
    // The full path's own refusal says most ("no such export"), not the last prefix's.
    if (first.ok()) {
      first =
          absl::UnavailableError(absl::StrCat("nfs mount ", s->where_, ": ", MountFailure(rc, nfs_get_error(s->nfs_))));
    }
    // Only "no such export" or "not allowed" makes a shorter path worth a try.
    if (rc != -ENOENT && rc != -EACCES && rc != -EPERM && rc != -EINVAL) break;
  }
  return first;
}

absl::StatusOr<const HandleView*> HandleOf(nfsfh* fh, absl::string_view what) {
  const auto* handle = reinterpret_cast<const HandleView*>(nfs_get_fh(fh));
  if (handle == nullptr || handle->val == nullptr) {
    return absl::InternalError(absl::StrCat(what, ": libnfs gave no file handle"));
  }
  if (handle->len < 1 || handle->len > 64) {
    return absl::DataLossError(
        absl::StrCat(what, ": the server's file handle is ", handle->len, " bytes (NFSv3: 1 to 64)"));
  }
  return handle;
}

std::string RpcFailure(rpc_context* rpc, int status) {
  return status == RPC_STATUS_TIMEOUT  ? "no answer (--nfs-timeout)"
         : status == RPC_STATUS_CANCEL ? "cancelled"
                                       : ErrorText(rpc_get_error(rpc));
}

// WRITEs are sent at the RPC level, as READs are: libnfs 4.0's pwrite hands its
// callback neither the verifier nor what the server said it made stable, and a
// count of its own. Here an answer counts only when its count is what was sent.
absl::Status NfsSession::CheckWrite(const Slot& slot, const WRITE3res& res) {
  if (res.status != NFS3_OK) {
    // libnfs's own words, which the lab's tests and docs quote.
    const std::string why =
        absl::StrFormat("NFS: Write failed with %s(%d)", nfsstat3_to_str(res.status), nfsstat3_to_errno(res.status));
    if (res.status == NFS3ERR_NOSPC || res.status == NFS3ERR_DQUOT) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the server refused a write at byte ", slot.offset, ": disk full or over quota (", why, ")"));
    }
    return absl::UnavailableError(absl::StrCat("a write at byte ", slot.offset, " failed: ", why));
  }
  const WRITE3resok& ok = res.WRITE3res_u.resok;
  if (ok.count != slot.size) {
    return absl::DataLossError(absl::StrCat("the server said it wrote ", ok.count, " of ", slot.size,
                                            " bytes at offset ", slot.offset, ok.count == 0 ? " (disk full?)" : ""));
  }
  if (slot.file_sync && ok.committed != FILE_SYNC) {
    return absl::DataLossError(
        absl::StrCat("the server answered a FILE_SYNC write at byte ", slot.offset, " as not yet on disk"));
  }
  if (ok.committed == UNSTABLE) {
    const std::string verifier(ok.verf, NFS3_WRITEVERFSIZE);
    if (!verifier_.empty() && verifier != verifier_) {
      return absl::DataLossError(absl::StrCat("the server's write verifier changed at byte ", slot.offset,
                                              " (it restarted?): earlier UNSTABLE writes may be lost"));
    }
    verifier_ = verifier;
    uncommitted_ = true;
  }
  return absl::OkStatus();
}

void NfsSession::OnWrite(rpc_context* rpc, int status, void* data, void* private_data) {
  Slot* slot = static_cast<Slot*>(private_data);
  NfsSession& s = *slot->session;
  --s.in_flight_;
  s.free_.push_back(slot);
  if (!s.write_error_.ok()) return;
  const auto* res = static_cast<const WRITE3res*>(data);
  if (status != RPC_STATUS_SUCCESS || res == nullptr) {
    s.write_error_ =
        absl::UnavailableError(absl::StrCat("a write at byte ", slot->offset, " failed: ", RpcFailure(rpc, status)));
    return;
  }
  s.write_error_ = s.CheckWrite(*slot, *res);
}

void NfsSession::OnCommit(rpc_context* rpc, int status, void* data, void* private_data) {
  Slot* slot = static_cast<Slot*>(private_data);
  NfsSession& s = *slot->session;
  --s.in_flight_;
  slot->answered = true;
  const auto* res = static_cast<const COMMIT3res*>(data);
  if (status != RPC_STATUS_SUCCESS || res == nullptr) {
    slot->error = absl::UnavailableError(absl::StrCat("COMMIT failed: ", RpcFailure(rpc, status)));
  } else if (res->status != NFS3_OK) {
    slot->error = absl::UnavailableError(absl::StrFormat("COMMIT failed: NFS: Commit failed with %s(%d)",
                                                         nfsstat3_to_str(res->status), nfsstat3_to_errno(res->status)));
  } else if (!s.verifier_.empty() && std::string(res->COMMIT3res_u.resok.verf, NFS3_WRITEVERFSIZE) != s.verifier_) {
    slot->error = absl::DataLossError(
        "the server's COMMIT verifier is not its WRITEs' (it restarted?): the data is not known to be on disk");
  } else {
    s.uncommitted_ = false;
  }
}

absl::Status NfsSession::ServiceOnce() {
  pollfd p{nfs_get_fd(nfs_), static_cast<short>(nfs_which_events(nfs_)), 0};
  const int n = poll(&p, 1, kServicePollMs);
  if (n < 0 && errno != EINTR) return ErrnoStatus(errno, absl::StrCat("poll on the connection to ", where_));
  if (nfs_service(nfs_, n > 0 ? p.revents : 0) < 0) {
    broken_ = true;
    return absl::UnavailableError(
        absl::StrCat("the connection to ", where_, " failed: ", ErrorText(nfs_get_error(nfs_))));
  }
  return absl::OkStatus();
}

absl::Status NfsSession::WaitUntil(const std::function<bool()>& done, const std::string& what) {
  int64_t last_progress = MonoNanos();
  size_t seen = in_flight_;
  while (!done()) {
    if (broken_) return absl::UnavailableError(absl::StrCat("the connection to ", where_, " is gone"));
    if (absl::Status s = ServiceOnce(); !s.ok()) return s;
    if (in_flight_ < seen) {
      seen = in_flight_;
      last_progress = MonoNanos();
    } else if (MonoNanos() - last_progress > timeout_ns_ + 2 * kServicePollMs * 1000000LL) {
      broken_ = true;  // libnfs should have timed the request out; never wait longer than it would
      return absl::DeadlineExceededError(
          absl::StrCat(what, " on ", where_, ": no answer in ", timeout_ns_ / 1000000000, " s (--nfs-timeout)"));
    }
  }
  return absl::OkStatus();
}

NfsSession::Slot* NfsSession::TakeSlot() {
  if (free_.empty()) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->session = this;
    slots_.back()->buffer.resize(std::max(write_size_, read_size_));
    free_.push_back(slots_.back().get());
  }
  Slot* slot = free_.back();
  free_.pop_back();
  return slot;
}

absl::Status NfsSession::Write(nfsfh* fh, const std::string& path, const uint8_t* data, size_t size, uint64_t offset,
                               bool file_sync) {
  const std::string what = absl::StrCat("nfs write ", path);
  if (absl::Status s = WaitUntil([&] { return in_flight_ < depth_; }, what); !s.ok()) return s;
  if (!write_error_.ok()) return write_error_;
  absl::StatusOr<const HandleView*> handle = HandleOf(fh, what);
  if (!handle.ok()) return handle.status();
  Slot* slot = TakeSlot();
  std::memcpy(slot->buffer.data(), data, size);
  slot->size = size;
  slot->offset = offset;
  slot->file_sync = file_sync;
  WRITE3args args{};
  args.file.data.data_len = static_cast<u_int>((*handle)->len);
  args.file.data.data_val = (*handle)->val;
  args.offset = offset;
  args.count = static_cast<count3>(size);
  args.stable = file_sync ? FILE_SYNC : UNSTABLE;
  args.data.data_len = static_cast<u_int>(size);
  args.data.data_val = reinterpret_cast<char*>(slot->buffer.data());
  if (rpc_nfs3_write_async(nfs_get_rpc_context(nfs_), &NfsSession::OnWrite, &args, slot) != 0) {
    free_.push_back(slot);
    return absl::UnavailableError(
        absl::StrCat("nfs write ", path, " at byte ", offset, " on ", where_, ": ", ErrorText(nfs_get_error(nfs_))));
  }
  ++in_flight_;
  return absl::OkStatus();
}

absl::Status NfsSession::Commit(nfsfh* fh, const std::string& path) {
  if (absl::Status s = Drain(path); !s.ok()) return s;
  const std::string what = absl::StrCat("nfs commit ", path);
  absl::StatusOr<const HandleView*> handle = HandleOf(fh, what);
  if (!handle.ok()) return handle.status();
  Slot* slot = TakeSlot();
  slot->answered = false;
  slot->error = absl::OkStatus();
  COMMIT3args args{};
  args.file.data.data_len = static_cast<u_int>((*handle)->len);
  args.file.data.data_val = (*handle)->val;
  if (rpc_nfs3_commit_async(nfs_get_rpc_context(nfs_), &NfsSession::OnCommit, &args, slot) != 0) {
    free_.push_back(slot);
    return absl::UnavailableError(absl::StrCat(what, " on ", where_, ": ", ErrorText(nfs_get_error(nfs_))));
  }
  ++in_flight_;
  // A COMMIT still owed keeps its slot: the connection is not used again (WaitUntil).
  if (absl::Status s = WaitUntil([slot] { return slot->answered; }, what); !s.ok()) return s;
  absl::Status answer = slot->error;
  free_.push_back(slot);
  if (!answer.ok()) return absl::Status(answer.code(), absl::StrCat(what, " on ", where_, ": ", answer.message()));
  return absl::OkStatus();
}

absl::Status NfsSession::Drain(const std::string& path) {
  if (absl::Status s = WaitUntil([&] { return in_flight_ == 0; }, absl::StrCat("nfs write ", path)); !s.ok()) {
    return s;
  }
  return write_error_;
}

// A READ's reply, taken at the RPC level: libnfs 4.0's own pread trusts the reply's
// count and hands on that many bytes whatever the server sent, so a hostile server
// could make it read past its buffer. Here a reply counts only when its count, the
// bytes it carries and what was asked agree.
void NfsSession::OnRead(rpc_context* rpc, int status, void* data, void* private_data) {
  Slot* slot = static_cast<Slot*>(private_data);
  --slot->session->in_flight_;
  slot->answered = true;
  const auto* res = static_cast<const READ3res*>(data);
  if (status != RPC_STATUS_SUCCESS || res == nullptr) {
    slot->error =
        absl::UnavailableError(absl::StrCat("a read at byte ", slot->offset, " failed: ", RpcFailure(rpc, status)));
    return;
  }
  if (res->status != NFS3_OK) {
    slot->error = absl::UnavailableError(
        absl::StrCat("a read at byte ", slot->offset, " failed: NFS3 status ", static_cast<int>(res->status)));
    return;
  }
  const READ3resok& ok = res->READ3res_u.resok;
  if (ok.count != ok.data.data_len || ok.count > slot->size || (ok.count > 0 && ok.data.data_val == nullptr)) {
    slot->error = absl::DataLossError(absl::StrCat("a malformed READ reply at byte ", slot->offset, ": count ",
                                                   ok.count, ", ", ok.data.data_len, " bytes, ", slot->size, " asked"));
    return;
  }
  slot->got = ok.count;
  if (ok.count > 0) std::memcpy(slot->buffer.data(), ok.data.data_val, ok.count);
}

absl::Status NfsSession::QueueRead(nfsfh* fh, const std::string& path, uint64_t offset, size_t size) {
  Slot* slot = TakeSlot();
  slot->size = size;
  slot->offset = offset;
  slot->answered = false;
  slot->got = 0;
  slot->error = absl::OkStatus();
  absl::StatusOr<const HandleView*> handle = HandleOf(fh, absl::StrCat("nfs read ", path));
  if (!handle.ok()) {
    free_.push_back(slot);
    return handle.status();
  }
  READ3args args{};
  args.file.data.data_len = static_cast<u_int>((*handle)->len);
  args.file.data.data_val = (*handle)->val;
  args.offset = offset;
  args.count = static_cast<count3>(size);
  if (rpc_nfs3_read_async(nfs_get_rpc_context(nfs_), &NfsSession::OnRead, &args, slot) != 0) {
    free_.push_back(slot);
    return absl::UnavailableError(
        absl::StrCat("nfs read ", path, " at byte ", offset, " on ", where_, ": ", ErrorText(nfs_get_error(nfs_))));
  }
  ++in_flight_;
  reads_.push_back(slot);
  return absl::OkStatus();
}

absl::StatusOr<absl::Span<const uint8_t>> NfsSession::NextRead(const std::string& path) {
  if (last_read_ != nullptr) free_.push_back(std::exchange(last_read_, nullptr));
  if (reads_.empty()) return absl::Span<const uint8_t>();
  Slot* front = reads_.front();
  if (absl::Status s = WaitUntil([front] { return front->answered; }, absl::StrCat("nfs read ", path)); !s.ok()) {
    return s;
  }
  reads_.pop_front();
  last_read_ = front;
  if (!front->error.ok())
    return absl::Status(front->error.code(), absl::StrCat(front->error.message(), " on ", where_));
  return absl::Span<const uint8_t>(front->buffer.data(), front->got);
}

// One open NFS file as a RemoteFile: WRITEs of at most the session's wsize,
// pipelined (NfsSession::Write); COMMIT for Sync.
class NfsFile : public RemoteFile {
 public:
  NfsFile(NfsSession& s, nfsfh* fh, std::string path, bool file_sync)
      : s_(s), fh_(fh), path_(std::move(path)), file_sync_(file_sync) {
    s_.ResetWrites();
  }
  ~NfsFile() override { (void)Close(); }

  absl::Status PWrite(const uint8_t* data, size_t size, uint64_t offset) override {
    for (size_t done = 0; done < size;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(s_.write_size(), size - done));
      if (absl::Status st = s_.Write(fh_, path_, data + done, n, offset + done, file_sync_); !st.ok())
        return Failed(st);
      done += n;
    }
    return absl::OkStatus();
  }

  // Reads go through NfsSource (checked, pipelined READs), never libnfs's pread.
  // One checked READ at a time (--verify's read back); a run's reads go through
  // NfsSource, pipelined. Never libnfs's pread, which trusts the reply's count.
  absl::StatusOr<size_t> PRead(uint8_t* data, size_t size, uint64_t offset) override {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(s_.read_size(), size));
    if (absl::Status st = s_.QueueRead(fh_, path_, offset, n); !st.ok()) return Failed(st);
    absl::StatusOr<absl::Span<const uint8_t>> got = s_.NextRead(path_);
    if (!got.ok()) return Failed(got.status());  // OnRead checked the count against the ask
    std::memcpy(data, got->data(), got->size());
    return got->size();
  }

  absl::Status Settle() override {
    if (absl::Status st = s_.Drain(path_); !st.ok()) return Failed(st);
    return absl::OkStatus();
  }

  // UNSTABLE WRITEs are on disk after a COMMIT answered with their verifier.
  absl::Status Sync() override {
    if (absl::Status st = s_.Commit(fh_, path_); !st.ok()) return Failed(st);
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (fh_ == nullptr) return absl::OkStatus();
    // Every WRITE answered before the handle goes, also after a failure: a WRITE
    // answered later would touch it.
    absl::Status drained = s_.Drain(path_);
    absl::Status status = failed_ ? absl::OkStatus() : drained;
    // UNSTABLE WRITEs left: a COMMIT, as libnfs's close sends for a file it wrote
    // (its pwrite is not used, so it does not know), checked like Sync's.
    if (status.ok() && !failed_ && !s_.broken() && s_.uncommitted()) status = s_.Commit(fh_, path_);
    if (s_.broken()) {
      s_.Abandon(fh_);
    } else if (int rc = nfs_close(s_.nfs(), fh_); rc != 0 && status.ok()) {
      // nfs_close owns the handle from here, answered or not: never abandoned twice.
      status = s_.Failure(absl::StrCat("nfs close ", path_), rc);
    }
    fh_ = nullptr;
    return status;
  }

 private:
  absl::Status Failed(absl::Status st) {
    failed_ = true;
    return st;
  }
  NfsSession& s_;
  nfsfh* fh_;
  const std::string path_;
  const bool file_sync_;  // FILE_SYNC WRITEs (--write-mode dsync)
  bool failed_ = false;
};

class NfsFs : public RemoteFs {
 public:
  NfsFs(NfsSession& s, bool file_sync) : s_(s), file_sync_(file_sync) {}
  const std::string& Where() const override { return s_.where(); }

  absl::StatusOr<std::unique_ptr<RemoteFile>> Create(const std::string& path) override {
    nfsfh* fh = nullptr;
    // O_EXCL: NFSv3 CREATE GUARDED, refused when any name is there (a symlink too).
    const int flags = O_WRONLY | O_CREAT | O_EXCL | (file_sync_ ? O_SYNC : 0);
    if (int rc = nfs_create(s_.nfs(), path.c_str(), flags, 0644, &fh); rc != 0) {
      if (rc == -EEXIST) {
        return absl::AlreadyExistsError(
            absl::StrCat(s_.where(), ": ", path, " already exists; nasperf never overwrites"));
      }
      return s_.Failure(absl::StrCat("nfs create ", path), rc);
    }
    return std::make_unique<NfsFile>(s_, fh, path, file_sync_);
  }

  absl::StatusOr<std::unique_ptr<RemoteFile>> Open(const std::string& path) override {
    nfsfh* fh = nullptr;
    if (int rc = nfs_open(s_.nfs(), path.c_str(), O_RDONLY, &fh); rc != 0) {
      return s_.Failure(absl::StrCat("nfs open ", path), rc);
    }
    return std::make_unique<NfsFile>(s_, fh, path, false);
  }

  absl::StatusOr<uint64_t> FreeBytes(const std::string& dir) override {
    nfs_statvfs_64 st{};
    if (int rc = nfs_statvfs64(s_.nfs(), dir.c_str(), &st); rc != 0) {
      return s_.Failure(absl::StrCat("nfs fsstat ", dir), rc);
    }
    if (st.f_frsize != 0 && st.f_bavail > UINT64_MAX / st.f_frsize) return UINT64_MAX;
    return st.f_bavail * st.f_frsize;
  }

  absl::Status CanSync() override { return absl::OkStatus(); }  // COMMIT is part of NFSv3

  absl::StatusOr<RemoteStat> Stat(const std::string& path) override {
    nfs_stat_64 st{};
    if (int rc = nfs_stat64(s_.nfs(), path.c_str(), &st); rc != 0) return s_.Failure(path, rc);
    return RemoteStat{S_ISDIR(st.nfs_mode), S_ISREG(st.nfs_mode), st.nfs_size};
  }

  absl::Status Unlink(const std::string& path) override {
    if (s_.broken())
      return absl::UnavailableError(absl::StrCat("cleanup: remove ", path, ": ", s_.where(), " is gone"));
    if (int rc = nfs_unlink(s_.nfs(), path.c_str()); rc != 0) {
      return s_.Failure(absl::StrCat("cleanup: remove ", path), rc);
    }
    return absl::OkStatus();
  }

  absl::Status Mkdir(const std::string& path) override {
    if (s_.broken()) return absl::UnavailableError(absl::StrCat("mkdir ", path, ": ", s_.where(), " is gone"));
    if (int rc = nfs_mkdir2(s_.nfs(), path.c_str(), 0755); rc != 0) return s_.Failure(absl::StrCat("mkdir ", path), rc);
    return absl::OkStatus();
  }

  absl::Status Rmdir(const std::string& path) override {
    if (s_.broken())
      return absl::UnavailableError(absl::StrCat("cleanup: remove ", path, ": ", s_.where(), " is gone"));
    if (int rc = nfs_rmdir(s_.nfs(), path.c_str()); rc != 0) {
      return s_.Failure(absl::StrCat("cleanup: remove ", path), rc);
    }
    return absl::OkStatus();
  }

 private:
  NfsSession& s_;
  const bool file_sync_;
};

// A remote file as the share shell's reader, for reads over NFS: READs of the
// server's rsize, up to `depth` in flight ahead of the one being consumed, as the
// kernel client's readahead keeps them. A short answer anywhere but at the end is an
// error, never a silent gap.
class NfsReader : public ShareReader {
 public:
  NfsReader(NfsSession& s, nfsfh* fh, std::string path, uint64_t length, size_t depth)
      : s_(s), fh_(fh), path_(std::move(path)), length_(length), depth_(depth) {}
  ~NfsReader() override { Close(); }

  absl::StatusOr<size_t> Read(uint8_t* data, size_t size) override {
    if (at_ == staged_.size()) {
      if (first_request_ns_ == 0) first_request_ns_ = MonoNanos();
      while (asked_.size() < depth_ && requested_ < length_) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(s_.read_size(), length_ - requested_));
        if (absl::Status st = s_.QueueRead(fh_, path_, requested_, n); !st.ok()) return st;
        asked_.push_back(n);
        requested_ += n;
      }
      if (asked_.empty()) return 0;  // the file's end
      absl::StatusOr<absl::Span<const uint8_t>> next = s_.NextRead(path_);
      if (!next.ok()) return next.status();
      const size_t wanted = asked_.front();
      asked_.pop_front();
      if (next->size() != wanted) {
        return absl::DataLossError(absl::StrCat(s_.where(), ": ", path_, " gave ", next->size(), " of ", wanted,
                                                " bytes at offset ", received_,
                                                " (the file shrank, or the server cut the read short)"));
      }
      received_ += wanted;
      staged_ = *next;
      at_ = 0;
    }
    const size_t n = std::min(size, staged_.size() - at_);
    std::memcpy(data, staged_.data() + at_, n);
    at_ += n;
    return n;
  }
  int64_t first_request_ns() const override { return first_request_ns_; }
  // READs still owed after an early stop: the connection is not used again, and the
  // handle is left to the context's end.
  void Close() override {
    if (fh_ == nullptr) return;
    if (s_.reads_queued() > 0) s_.MarkBroken();
    if (s_.broken()) {
      s_.Abandon(fh_);
    } else {
      (void)nfs_close(s_.nfs(), fh_);
    }
    fh_ = nullptr;
  }

 private:
  NfsSession& s_;
  nfsfh* fh_;
  const std::string path_;
  const uint64_t length_;
  const size_t depth_;
  uint64_t requested_ = 0, received_ = 0;
  std::deque<size_t> asked_;
  absl::Span<const uint8_t> staged_;
  size_t at_ = 0;
  int64_t first_request_ns_ = 0;
};

// One stream's NFS context, as the share shell's session.
class NfsShareSession : public ShareSession {
 public:
  NfsShareSession(std::unique_ptr<NfsSession> s, bool file_sync, size_t read_depth)
      : s_(std::move(s)), fs_(*s_, file_sync), read_depth_(read_depth) {}
  RemoteFs& fs() override { return fs_; }
  const std::string& dir() const override { return s_->dir(); }
  bool usable() const override { return !s_->broken(); }
  absl::StatusOr<std::unique_ptr<ShareReader>> OpenReader(const std::string& path, uint64_t length) override {
    nfsfh* fh = nullptr;
    if (int rc = nfs_open(s_->nfs(), path.c_str(), O_RDONLY, &fh); rc != 0) {
      return s_->Failure(absl::StrCat("nfs open ", path), rc);
    }
    return std::unique_ptr<ShareReader>(new NfsReader(*s_, fh, path, length, read_depth_));
  }
  const NfsSession& nfs() const { return *s_; }

 private:
  const std::unique_ptr<NfsSession> s_;
  NfsFs fs_;
  const size_t read_depth_;  // READs in flight (--nfs-in-flight)
};

// What is NFS's alone in a share run: the mount, its cells and console words.
class NfsDriver : public ShareDriverOf<NfsShareSession> {
 public:
  NfsDriver(const RunOptions& options, const ShareOptions& share, NfsUrl url)
      : options_(options), share_(share), url_(std::move(url)), file_sync_(options.write_mode == WriteMode::kDsync) {}

  absl::StatusOr<std::unique_ptr<NfsShareSession>> ConnectSession(int /*stream*/, const ConsoleLine* /*say*/) override {
    absl::StatusOr<std::unique_ptr<NfsSession>> mounted = NfsSession::Mount(url_, share_);
    if (!mounted.ok()) return mounted.status();
    return std::make_unique<NfsShareSession>(*std::move(mounted), file_sync_, static_cast<size_t>(share_.in_flight));
  }
  const char* name() const override { return "nfs"; }
  std::string host() const override { return url_.host; }
  uint16_t port() const override { return url_.port; }
  int reads_in_flight() const override { return share_.in_flight; }

  std::string ProtocolCellOf(NfsShareSession& session) const override {
    const NfsSession& s = session.nfs();
    return absl::StrFormat("nfs3 wsize=%d rsize=%d stable=%s", s.write_size(), s.read_size(),
                           file_sync_ ? "file_sync" : "unstable");
  }

  std::string StartLineOf(NfsShareSession& session, const std::string& free_text,
                          const SyncPolicy& sync) const override {
    const NfsSession& s = session.nfs();
    const char* sync_words =
        sync.kind == SyncPolicy::kNone ? "no COMMIT (times end at the last WRITE's answer)" : "COMMIT as --sync says";
    return absl::StrFormat(
        "nfs %s (NFSv3, wsize %s, rsize %s, %d WRITEs in flight per stream): %s, %s, %s", s.where(),
        FormatSize(s.write_size()), FormatSize(s.read_size()), share_.in_flight, s.dir(), free_text,
        file_sync_ ? "FILE_SYNC writes (--write-mode dsync)" : absl::StrCat("UNSTABLE writes, ", sync_words));
  }

  void FillPushRow(proto::TransferReport& row) const override {
    row.set_write_mode(Name(options_.write_mode));  // dsync: FILE_SYNC WRITEs; buffered: UNSTABLE
  }

 private:
  const RunOptions& options_;
  const ShareOptions& share_;  // the entry's config's (options_.config)
  const NfsUrl url_;
  const bool file_sync_;
};

absl::StatusOr<std::unique_ptr<Transport>> MakeNfsTransport(const RunOptions& options, const RunContext& context) {
  absl::StatusOr<const ShareConfig*> config = ConfigOf<ShareConfig>(options);
  if (!config.ok()) return config.status();
  const ShareOptions& share = (*config)->share();
  absl::StatusOr<NfsUrl> url = ParseNfsUrl(share.url);
  if (!url.ok()) return url.status();
  return NewShareTransport(std::make_unique<NfsDriver>(options, share, *std::move(url)), options, context);
}

std::vector<CLI::Option*> BindNfsFlags(CLI::App& sender, ShareOptions& into) {
  return {
      sender.add_option("--nfs-in-flight", into.in_flight, "nfs: WRITEs kept in flight per stream")
          ->check(CLI::Range(1, 256)),
      sender
          .add_option("--nfs-timeout", into.timeout_s,
                      "nfs: seconds an unanswered request may take before the transfer fails")
          ->check(CLI::Range(1, 600)),
  };
}

std::vector<CLI::Option*> AddNfsFlags(CLI::App& sender, FlagScratch& scratch) {
  return BindNfsFlags(sender, scratch.Part<ShareOptions>());
}

// The entry's parse: the URL (a plan's or a peer's without uid=/gid=: RefuseNfsIdentity)
// and --nfs-in-flight, --nfs-timeout.
absl::StatusOr<std::unique_ptr<TransportConfig>> ParseNfsConfig(const std::string& to, const ParsedFlags& flags,
                                                                Origin origin, std::string* bad_field) {
  absl::StatusOr<NfsUrl> url = ParseNfsUrl(to);
  absl::Status allowed = url.ok() && origin != Origin::kUser ? RefuseNfsIdentity(to) : url.status();
  if (!allowed.ok()) {
    *bad_field = "--to";
    return allowed;
  }
  return MakeShareConfig(to, flags, &BindNfsFlags, PeerCell(url->host, url->port), bad_field);
}

}  // namespace

TransportEntry NfsTransportEntry() {
  TransportCaps caps;
  caps.dsync_writes = true;    // FILE_SYNC WRITEs
  caps.verify = true;          // read back (RemoteFsRun)
  caps.reads = true;           // the server's cache is not ours to set
  caps.reads_laid_out = true;  // RemoteFsRun::LayOutReadFile
  caps.url = true;
  caps.barrier = true;    // the share shell's Push
  caps.file_sets = true;  // RemoteFsRun::WriteSet
  TransportEntry entry{"nfs", "NFSv3 to any NFS server, from user space (no agent, no mount; COMMIT for --sync)", caps,
                       &MakeNfsTransport, &AddNfsFlags};
  entry.to_form = "nfs://host[:port]/export[/dir][?uid=N&gid=N]";
  entry.parse = &ParseNfsConfig;
  return entry;
}

}  // namespace nasperf
