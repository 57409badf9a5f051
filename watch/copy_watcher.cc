#include "watch/copy_watcher.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/policy.h"
#include "common/stats.h"
#include "common/token.h"
#include "common/units.h"
#include "measure/cache_knee.h"
#include "measure/disk_stats.h"
#include "measure/sampler.h"
#include "watch/server_process.h"
#include "watch/smb_status.h"

namespace nasperf {
namespace {

// Past these the watch says so once and goes on with what it has.
constexpr size_t kMaxWatchedDirs = 8192;
constexpr int kMaxDepth = 64;
constexpr size_t kMaxActiveCopies = 1024;
constexpr int64_t kLookEveryNs = 50'000'000;  // the poll's period: server looks, counters
constexpr int64_t kFindEveryNs = 1'000'000'000;
constexpr int64_t kEventGapNs = 10'000'000;
constexpr double kMinNicSpanS = 0.3;
// Shorter than this from first to last write, a copy's MB/s is the poll's granularity.
constexpr double kMinTimedS = 0.05;
constexpr double kNetworkPct = 95, kMaxLinePct = 105, kDeviceBusyPct = 90;
// A link this full is the limit rather than a server whose CPU figure is lower.
constexpr double kNearlyFullLinkPct = 90;
// A server stalled in the kernel this often was held back by the disk or its dirty
// limit: after each stall its socket has to refill, so it then waits on the network
// too, the more the closer the link's speed is to the disk's (lab_watch: 31 % at a
// link 1.5x the disk's, 83-96 % at 3x). A client-bound copy into a cache stalls ~never.
constexpr double kBlockedPct = 20;
constexpr size_t kEventBuffer = 64 * 1024;
// Lines said per event (not per copy) at most this many per window, the rest counted.
constexpr int kEventLines = 10;
constexpr double kEventLinesWindowS = 10;
// What inotify watches in a directory: added through /proc/self/fd/N of the directory's
// O_PATH descriptor, so without IN_DONT_FOLLOW (that would watch the magic link itself):
// the kernel goes from that link straight to the inode held, re-resolving no name.
constexpr uint32_t kDirEvents = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE |
                                IN_DELETE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK;

// What /proc/net/dev counts of a full link: frames with their Ethernet header, not the
// preamble, gap and FCS on the wire (MTU 1500: 98.4 % of the link's bits).
double FrameCeilingMbps(uint32_t link_mbps, uint32_t mtu) {
  if (mtu == 0) return link_mbps;
  return link_mbps * (mtu + 14.0) / (mtu + 38.0);
}

int64_t WallOf(const timespec& t) { return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

std::string Pct(double v) { return v < 0 ? "?" : absl::StrFormat("%.0f %%", v); }

// The NAS's counters at one poll: what a copy's figures are differences of.
struct Reading {
  int64_t mono_ns = 0;
  std::vector<DiskCounters> disks;
  std::optional<uint64_t> rx_bytes;
};

// Received bytes of `nic`, or of every interface but lo, from /proc/net/dev.
std::optional<uint64_t> ParseRxBytes(absl::string_view net_dev, const std::string& nic) {
  std::optional<uint64_t> total;
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(net_dev, '\n')) {
    if (++lines > 4096) break;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view name = absl::StripAsciiWhitespace(line.substr(0, colon));
    if (nic.empty() ? name == "lo" : name != nic) continue;
    std::vector<absl::string_view> f = absl::StrSplit(line.substr(colon + 1), ' ', absl::SkipEmpty());
    uint64_t rx = 0;
    if (f.empty() || !absl::SimpleAtoi(f[0], &rx)) continue;
    total = total.value_or(0) + rx;
  }
  return total;
}

// The received bytes of a network namespace other than the watcher's, from its
// /proc/PID/net/dev: of every interface but lo, or of lo in a namespace that has no
// other (every peer of its server is inside it, as in a test's own namespace).
std::optional<uint64_t> ParseNamespaceRxBytes(absl::string_view net_dev) {
  if (std::optional<uint64_t> rx = ParseRxBytes(net_dev, "")) return rx;
  return ParseRxBytes(net_dev, "lo");
}

struct Copy {
  std::string rel;   // for rows and lines only: the file is found by wd and name
  int wd = -1;       // its directory's watch: dirs_[wd] holds that directory's descriptor
  std::string name;  // its name in that directory (one component)
  ino_t ino = 0;
  uint64_t base = 0, size = 0, size_at_tick = 0;
  uint64_t first_chunk = 0;  // already in the file at its first write event
  // Kernel-stamped wall times (ns; 0 unknown): the file's creation, its change time at the
  // first write event and at the latest look.
  int64_t btime_ns = 0, first_ctime_ns = 0, last_ctime_ns = 0;
  bool created = false, wrote = false;
  // Found unlinked by this look: ended "removed" only if the events queued meanwhile
  // hold no close (SettleUnlinked).
  bool unlinked = false;
  int64_t seen_ns = 0, first_ns = 0, last_ns = 0, tick_ns = 0, first_wall_ns = 0;
  // The NAS's counters at its first write, at the latest look after a write, and at the
  // look before that one: inside the copy while it runs on, so rates over start..inner
  // hold no idle time at either end.
  Reading start, inner, last;
  Reading tick_reading;         // at the last sample: the NIC per interval from there
  std::vector<double> nic_pct;  // the NIC against the link, per sample interval
  // The serving process's /proc/PID/net/dev when its network namespace is not the
  // watcher's (a container's, a namespace's sshd): its NIC is that namespace's, counted
  // from nic_start, the look its server was found at.
  std::string net_dev;
  std::optional<Reading> nic_start;
  // The file, an O_PATH descriptor since it was seen (or not, past the fd limit): its
  // size and times by fstat, never an open of its contents.
  Fd fd;
  std::optional<uint64_t> dirty_peak;
  std::vector<proto::Sample> samples;
  std::optional<ServerProcess> server;
  // smbd's: what it negotiated with the client (smbstatus), or why that is unknown.
  std::string share_protocol, share_protocol_unknown;
  int64_t next_find_ns = 0;
  bool said_start = false;
  // Set when it ends: how, and whether it was a whole copy.
  std::string ended;
  Status status = Status::kOk;
  std::string error;
};

class Watcher {
 public:
  Watcher(const WatchOptions& o, ReportSink& sink) : o_(o), sink_(sink) {}

  absl::StatusOr<WatchSummary> Run();

 private:
  void Say(const std::string& line) const {
    if (o_.line) o_.line(line);
  }
  // Watches the directory `dir` (an O_PATH descriptor; rel names it) and the ones under
  // it, each opened beneath its parent's descriptor, never through a link. new_at: when
  // the tree was made, 0 for one there at the start or moved in (its files are not copies in progress).
  // parent_wd and name place it in its parent (-1 and "" for DIR).
  absl::Status AddTree(Fd dir, int parent_wd, const std::string& name, const std::string& rel, int depth,
                       int64_t new_at = 0);
  // The directory `name` in the watched directory parent_wd, and the ones under it.
  void AddChildTree(int parent_wd, const std::string& name, const std::string& rel, int depth, int64_t new_at);
  // Stops watching the directory `name` of parent_wd (removed, or moved: a move within
  // DIR watches it again under its new name) and the ones under it. Needed because the
  // descriptor held keeps the kernel from saying IN_DELETE_SELF until it is closed.
  void Forget(int parent_wd, const std::string& name);
  void ForgetTree(int wd, int depth);
  void HandleEvents();
  void HandleEvent(const inotify_event& e, int64_t now, std::map<uint32_t, std::string>* moved_from);
  // A write (or a new file) `name` in the watched directory wd; rel names it.
  void Touch(int wd, const std::string& name, const std::string& rel, bool created, int64_t now);
  // The descriptor of the watched directory wd; -1 when it is no longer watched.
  int DirFd(int wd) const {
    auto it = dirs_.find(wd);
    return it == dirs_.end() ? -1 : it->second.fd.get();
  }
  // A per-event line (a directory that vanished before it was watched): a user's
  // rename loop makes one per event, so at most a few are said per window.
  void SayThrottled(const std::string& line) {
    uint64_t held = 0;
    if (event_lines_.Allow(&held)) Say(line + LogThrottle::Held(held));
  }
  Copy* Tracked(const std::string& rel) {
    auto it = copies_.find(rel);
    return it == copies_.end() ? nullptr : &it->second;
  }
  void End(Copy& c, std::string how, Status status = Status::kOk, std::string error = "", bool even_if_closed = false);
  // unlinked: null ends a copy found unlinked as removed at once; else it is marked, and
  // *unlinked set, for SettleUnlinked to decide after reading the queue.
  void Refresh(Copy& c, int64_t now, bool* unlinked = nullptr);
  void SettleUnlinked();
  void Tick(Copy& c, int64_t now);
  void Finish(Copy& c);
  void FinishAll(int64_t previous_look);
  // Rows for the copies that ended, out of the table.
  void FinishEnded(int64_t now);
  proto::TransferReport RowOf(Copy& c, ObservedFigures* figures, std::string* details);
  void AddNasFigures(const Copy& c, proto::TransferReport* row, ObservedFigures* f) const;
  Reading Read(int64_t now) const;
  Reading ForCopy(const Copy& c, Reading r) const;
  void FollowServerNamespace(Copy& c, const Writer& w, int64_t now);
  // lstat of the copy's name in its directory, beneath that directory's descriptor.
  bool StatInDir(const Copy& c, struct stat* st) const {
    const int dir = DirFd(c.wd);
    return dir >= 0 && fstatat(dir, c.name.c_str(), st, AT_SYMLINK_NOFOLLOW) == 0;
  }
  // The devices' figures from one reading to a later one (none when either lacks them).
  std::vector<DeviceFigure> DevicesBetween(const Reading& from, const Reading& to) const {
    return FigureDevices(devices_, from.disks, to.disks, static_cast<double>(to.mono_ns - from.mono_ns) / 1e9);
  }
  std::optional<double> LinePct(const Reading& from, const Reading& to) const;
  // The link's speed (--link-speed, else the NICs' own) and their largest MTU into mtu_.
  uint32_t LinkMbps();
  std::string Abs(const std::string& rel) const { return rel.empty() ? o_.dir : absl::StrCat(o_.dir, "/", rel); }

  const WatchOptions& o_;
  ReportSink& sink_;
  Fd inotify_;
  struct WatchedDir {
    std::string rel;  // relative to DIR, for names in rows and lines
    Fd fd;            // O_PATH: what its files are opened and stat'ed beneath
    int parent_wd = -1;
    std::string name;  // in its parent
  };
  std::map<int, WatchedDir> dirs_;                       // watch descriptor -> its directory
  std::map<std::pair<int, std::string>, int> children_;  // (parent's wd, name) -> its wd
  int root_wd_ = -1;
  LogThrottle event_lines_{kEventLines, kEventLinesWindowS};
  std::map<std::string, Copy> copies_;
  std::vector<BlockDevice> devices_;
  std::string run_id_, host_;
  uint32_t link_mbps_ = 0, mtu_ = 0;
  int64_t watch_start_wall_ns_ = 0;
  bool said_dir_limit_ = false, said_copy_limit_ = false, said_overflow_ = false, root_gone_ = false;
  int ordinal_ = 0;
  WatchSummary summary_;
  Reading now_;
  // ForCopy's readings of other namespaces' /proc/PID/net/dev, for the look at namespace_rx_at_.
  mutable std::map<std::string, std::optional<uint64_t>> namespace_rx_;
  mutable int64_t namespace_rx_at_ = -1;
};

absl::Status Watcher::AddTree(Fd dir, int parent_wd, const std::string& name, const std::string& rel, int depth,
                              int64_t new_at) {
  if (dirs_.size() >= kMaxWatchedDirs || depth > kMaxDepth) {
    if (!said_dir_limit_) {
      Say(absl::StrCat("watch: more than ", kMaxWatchedDirs, " directories (or deeper than ", kMaxDepth, ") under ",
                       o_.dir, ": copies into the rest are not seen"));
    }
    said_dir_limit_ = true;
    return absl::OkStatus();
  }
  const std::string held = absl::StrCat("/proc/self/fd/", dir.get());
  const int wd = inotify_add_watch(inotify_.get(), held.c_str(), kDirEvents);
  if (wd < 0) return ErrnoStatus(errno, absl::StrCat("watch ", Abs(rel)));
  // Listed through its own descriptor: the directory watched, whatever its name is now.
  Fd listing(openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (auto known = dirs_.find(wd); known != dirs_.end()) {
    children_.erase({known->second.parent_wd, known->second.name});
  }
  dirs_[wd] = WatchedDir{rel, std::move(dir), parent_wd, name};
  if (parent_wd >= 0) children_[{parent_wd, name}] = wd;
  if (!listing.valid()) return absl::OkStatus();  // unreadable: its watch says the rest
  std::unique_ptr<DIR, int (*)(DIR*)> d(fdopendir(listing.get()), closedir);
  if (!d) return absl::OkStatus();
  listing.release();
  while (dirent* e = readdir(d.get())) {
    const std::string entry = e->d_name;
    if (entry == "." || entry == "..") continue;
    // Only subdirectories matter in a directory that was there before: no stat of its files.
    if (new_at == 0 && e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) continue;
    const std::string child = rel.empty() ? entry : absl::StrCat(rel, "/", entry);
    struct stat st;
    if (fstatat(dirfd(d.get()), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      AddChildTree(wd, entry, child, depth + 1, new_at);
    } else if (S_ISREG(st.st_mode) && new_at > 0) {
      // In a directory made while watching: made after it, so from its first byte,
      // and written already when its size says so.
      Touch(wd, entry, child, /*created=*/true, new_at);
      if (st.st_size > 0) Touch(wd, entry, child, /*created=*/false, new_at);
    }
  }
  return absl::OkStatus();
}

void Watcher::AddChildTree(int parent_wd, const std::string& name, const std::string& rel, int depth, int64_t new_at) {
  const int parent = DirFd(parent_wd);
  if (parent < 0) return;
  // One component beneath the parent's descriptor: a name swapped for a link is refused.
  absl::StatusOr<Fd> dir = OpenDirectoryBeneath(parent, name);
  absl::Status s = dir.ok() ? AddTree(*std::move(dir), parent_wd, name, rel, depth, new_at) : dir.status();
  if (!s.ok()) SayThrottled(absl::StrCat("watch: ", Abs(rel), ": ", s.message(), ": copies into it are not seen"));
}

void Watcher::Forget(int parent_wd, const std::string& name) {
  auto it = children_.find({parent_wd, name});
  if (it == children_.end()) return;
  const int wd = it->second;
  children_.erase(it);
  ForgetTree(wd, 0);
}

void Watcher::ForgetTree(int wd, int depth) {
  if (depth > kMaxDepth + 1) return;
  // Its subdirectories first, each out of children_ before the recursion.
  for (auto it = children_.lower_bound({wd, std::string()}); it != children_.end() && it->first.first == wd;) {
    const int child = it->second;
    it = children_.erase(it);
    ForgetTree(child, depth + 1);
  }
  inotify_rm_watch(inotify_.get(), wd);  // its IN_IGNORED then finds nothing
  dirs_.erase(wd);
}

// A look's reading as one copy sees it: its NIC from its server's namespace, if another.
// Each namespace's file is read once a look, however many copies its server serves.
Reading Watcher::ForCopy(const Copy& c, Reading r) const {
  if (c.net_dev.empty()) return r;
  if (namespace_rx_at_ != r.mono_ns) {
    namespace_rx_.clear();
    namespace_rx_at_ = r.mono_ns;
  }
  auto [at, fresh] = namespace_rx_.try_emplace(c.net_dev);
  if (fresh) {
    absl::StatusOr<std::string> net = ReadFileBounded(c.net_dev, 1 << 20);
    at->second = net.ok() ? ParseNamespaceRxBytes(*net) : std::nullopt;
  }
  r.rx_bytes = at->second;
  return r;
}

// A server (not the kernel's nfsd threads, whose namespace is the kernel's own) in a
// network namespace other than the watcher's: the copy's NIC is read there from now on.
void Watcher::FollowServerNamespace(Copy& c, const Writer& w, int64_t now) {
  if (w.kernel_nfsd || w.pids.empty()) return;
  char own[128], theirs[128];
  const std::string at = absl::StrCat(o_.proc, "/", w.pids.front());
  const ssize_t n = readlink((o_.proc + "/self/ns/net").c_str(), own, sizeof(own));
  const ssize_t m = readlink((at + "/ns/net").c_str(), theirs, sizeof(theirs));
  if (n <= 0 || m <= 0 || n >= static_cast<ssize_t>(sizeof(own)) || m >= static_cast<ssize_t>(sizeof(theirs)) ||
      absl::string_view(own, n) == absl::string_view(theirs, m)) {
    return;
  }
  c.net_dev = at + "/net/dev";
  c.nic_start = ForCopy(c, Read(now));
  // The readings before hold the watcher's NICs: no interval or span is taken from them.
  c.tick_reading.rx_bytes.reset();
  c.inner.rx_bytes.reset();
  c.last = *c.nic_start;
  c.nic_pct.clear();
}

Reading Watcher::Read(int64_t now) const {
  Reading r;
  r.mono_ns = now;
  r.disks = ReadDiskstats(o_.proc + "/diskstats").value_or(std::vector<DiskCounters>{});
  absl::StatusOr<std::string> net = ReadFileBounded(o_.proc + "/net/dev", 1 << 20);
  if (net.ok()) r.rx_bytes = ParseRxBytes(*net, o_.nic);
  return r;
}

uint32_t Watcher::LinkMbps() {
  uint64_t total = 0;
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir((o_.sys + "/class/net").c_str()), closedir);
  if (!d) return o_.link_mbps;
  int seen = 0;
  while (dirent* e = readdir(d.get())) {
    const std::string name = e->d_name;
    if (name == "." || name == ".." || name == "lo" || (!o_.nic.empty() && name != o_.nic) || ++seen > 256) continue;
    int64_t mbps = 0, mtu = 0;
    const std::string at = absl::StrCat(o_.sys, "/class/net/", name);
    std::string text = ReadFileBounded(at + "/speed", 32).value_or("");
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &mbps) && mbps > 0 && mbps < 10'000'000) total += mbps;
    text = ReadFileBounded(at + "/mtu", 32).value_or("");
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &mtu) && mtu >= 68 && mtu <= 65536) {
      mtu_ = std::max(mtu_, static_cast<uint32_t>(mtu));
    }
  }
  if (o_.link_mbps > 0) return o_.link_mbps;
  return static_cast<uint32_t>(std::min<uint64_t>(total, UINT32_MAX));
}

// A write (or a new file) at rel: the copy it belongs to, started when there is none.
void Watcher::Touch(int wd, const std::string& name, const std::string& rel, bool created, int64_t now) {
  Copy* c = Tracked(rel);
  if (c == nullptr) {
    // A burst of small files fills the table between two looks: the ones that ended
    // (closed) make room first, so a copy that follows them is still seen.
    if (copies_.size() >= kMaxActiveCopies) FinishEnded(now);
    if (copies_.size() >= kMaxActiveCopies) {
      if (!said_copy_limit_) Say(absl::StrCat("watch: more than ", kMaxActiveCopies, " copies at once: not all seen"));
      said_copy_limit_ = true;
      return;
    }
    // Beneath the directory's descriptor, never through a link; a FIFO or a device is
    // never opened, not even by the O_PATH open that follows (it calls no driver).
    const int dir = DirFd(wd);
    struct stat st;
    if (dir < 0 || fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return;
    c = &copies_[rel];
    c->rel = rel;
    c->wd = wd;
    c->name = name;
    c->seen_ns = now;
    c->ino = st.st_ino;
    // Held until the copy's row: its size stays readable after a loop's cleanup removed it.
    c->fd = Fd(openat(dir, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat held;
    if (c->fd.valid() && (fstat(c->fd.get(), &held) != 0 || !S_ISREG(held.st_mode) || held.st_ino != c->ino)) {
      c->fd = Fd();
    }
    struct statx sx;
    if (c->fd.valid() && statx(c->fd.get(), "", AT_EMPTY_PATH, STATX_BTIME, &sx) == 0 &&
        (sx.stx_mask & STATX_BTIME) != 0) {
      c->btime_ns = int64_t{sx.stx_btime.tv_sec} * 1'000'000'000 + sx.stx_btime.tv_nsec;
    }
    // Made while watching, though its creation was not seen (events lost to a full
    // queue, a full table): the whole file is this copy's.
    c->created = created || (c->btime_ns > watch_start_wall_ns_ && watch_start_wall_ns_ > 0);
    // A file it did not see created: what was there when it first saw it is not this copy's.
    c->base = c->created ? 0 : static_cast<uint64_t>(st.st_size);
    c->size = c->size_at_tick = c->base;
  }
  if (created) return;
  if (!c->wrote) {
    c->wrote = true;
    c->first_ns = c->tick_ns = now;
    // A server writes once a request has arrived (SMB's are up to 8 MiB): those bytes
    // crossed the network before this event.
    struct stat st;
    const bool known = c->fd.valid() ? fstat(c->fd.get(), &st) == 0 : StatInDir(*c, &st);
    if (known && static_cast<uint64_t>(st.st_size) > c->base)
      c->first_chunk = static_cast<uint64_t>(st.st_size) - c->base;
    if (known) c->first_ctime_ns = c->last_ctime_ns = WallOf(st.st_ctim);
    c->first_wall_ns = WallNanos();
    c->start = c->inner = c->last = c->tick_reading = Read(now);
  }
  c->last_ns = now;
}

void Watcher::End(Copy& c, std::string how, Status status, std::string error, bool even_if_closed) {
  // A file closed and then found shrunk or replaced in the same look did not arrive
  // whole; one closed and then removed (a loop's cleanup) did.
  if (!c.ended.empty() && !(even_if_closed && c.status == Status::kOk && status != Status::kOk)) return;
  c.ended = std::move(how);
  c.status = status;
  c.error = std::move(error);
}

void Watcher::HandleEvent(const inotify_event& e, int64_t now, std::map<uint32_t, std::string>* moved_from) {
  if (e.mask & IN_Q_OVERFLOW) {
    if (!said_overflow_) {
      Say("watch: events were lost (the kernel's queue overflowed): a copy whose events were all lost is missed, "
          "one seen from mid-way says so; the kernel's time stamps still time those seen (said once)");
    }
    said_overflow_ = true;
    return;
  }
  auto dir = dirs_.find(e.wd);
  if (dir == dirs_.end()) return;
  if (e.mask & (IN_DELETE_SELF | IN_IGNORED)) {
    if (e.wd == root_wd_) root_gone_ = true;
    if (auto child = children_.find({dir->second.parent_wd, dir->second.name});
        child != children_.end() && child->second == e.wd) {
      children_.erase(child);
    }
    dirs_.erase(dir);
    return;
  }
  const std::string name = e.len > 0 ? std::string(e.name, strnlen(e.name, e.len)) : "";
  if (name.empty()) return;
  const std::string& parent = dir->second.rel;
  const std::string rel = parent.empty() ? name : absl::StrCat(parent, "/", name);
  if (e.mask & IN_ISDIR) {
    if (e.mask & (IN_DELETE | IN_MOVED_FROM)) Forget(e.wd, name);
    // A directory made while watching holds new copies; one moved in brought only files
    // that were there already (a rename moves no data), so its files are not read at all:
    // a user flipping a directory in and out must not cost a look at each of its files.
    if (e.mask & (IN_CREATE | IN_MOVED_TO)) {
      AddChildTree(e.wd, name, rel, static_cast<int>(std::count(rel.begin(), rel.end(), '/')) + 1,
                   (e.mask & IN_CREATE) ? now : 0);
    }
    return;
  }
  if (e.mask & IN_CREATE) Touch(e.wd, name, rel, /*created=*/true, now);
  if (e.mask & IN_MODIFY) Touch(e.wd, name, rel, /*created=*/false, now);
  Copy* c = Tracked(rel);
  if (c == nullptr) return;
  if (e.mask & IN_CLOSE_WRITE && c->wrote) End(*c, "closed");
  if (e.mask & IN_MOVED_FROM) (*moved_from)[e.cookie] = rel;
  if (e.mask & IN_DELETE)
    End(*c, "removed", Status::kAborted,
        absl::StrCat(TerminalSafe(rel), " was removed mid-copy"));  // not after a close
}

void Watcher::HandleEvents() {
  alignas(inotify_event) char buffer[kEventBuffer];
  std::map<uint32_t, std::string> moved_from;
  struct MovedTo {
    uint32_t cookie;
    int wd;
    std::string name, rel;
  };
  std::vector<MovedTo> moved_to;
  for (int rounds = 0; rounds < 64; ++rounds) {
    const ssize_t n = read(inotify_.get(), buffer, sizeof buffer);
    if (n <= 0) break;
    // Read now, each piece: a burst of small files can take a while to go through, and
    // its events must not be timed when the burst began.
    const int64_t now = MonoNanos();
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      if (at > n) break;
      HandleEvent(*e, now, &moved_from);
      if ((e->mask & IN_MOVED_TO) && !(e->mask & IN_ISDIR) && dirs_.count(e->wd) > 0) {
        const std::string& dir = dirs_[e->wd].rel;
        const std::string name(e->name, strnlen(e->name, e->len));
        moved_to.push_back(MovedTo{e->cookie, e->wd, name, dir.empty() ? name : absl::StrCat(dir, "/", name)});
      }
    }
  }
  // A rename within DIR (rsync's temporary file becoming the real one) keeps the copy.
  for (const MovedTo& to : moved_to) {
    auto from = moved_from.find(to.cookie);
    if (from == moved_from.end() || copies_.count(from->second) == 0 || copies_.count(to.rel) > 0) continue;
    auto node = copies_.extract(from->second);
    node.key() = to.rel;
    node.mapped().rel = to.rel;
    node.mapped().wd = to.wd;
    node.mapped().name = to.name;
    copies_.insert(std::move(node));
    moved_from.erase(from);
  }
  for (const auto& [cookie, rel] : moved_from) {
    if (Copy* c = Tracked(rel)) {
      End(*c, "moved out", Status::kAborted,
          absl::StrCat(TerminalSafe(rel), " was moved out of the watched directory mid-copy"));
    }
  }
}

// The file's size now; a shrunk or replaced file ends the copy.
void Watcher::Refresh(Copy& c, int64_t now, bool* unlinked) {
  struct stat linked, held;
  const bool is_linked = StatInDir(c, &linked);
  const bool is_held = c.fd.valid() && fstat(c.fd.get(), &held) == 0;
  if (is_linked && linked.st_ino != c.ino) {
    End(c, "replaced", Status::kAborted, absl::StrCat(TerminalSafe(c.rel), " was replaced by another file mid-copy"),
        true);
  } else if (!is_linked && c.wrote && unlinked != nullptr) {
    c.unlinked = true;
    *unlinked = true;
  } else if (!is_linked && c.wrote) {
    // The same unlink as IN_DELETE's, seen by this look before its event was read: one wording.
    End(c, "removed", Status::kAborted, absl::StrCat(TerminalSafe(c.rel), " was removed mid-copy"));
  }
  // The size of the file the copy wrote: through the descriptor held since it was seen
  // (a closed copy's file may be gone before this look), else through its name.
  const struct stat* st = is_held ? &held : (is_linked && linked.st_ino == c.ino ? &linked : nullptr);
  if (st == nullptr) return;
  const uint64_t size = static_cast<uint64_t>(st->st_size);
  if (size < c.size && c.wrote) {  // before c.size moves: the row keeps what had arrived
    End(c, "truncated", Status::kAborted,
        absl::StrCat(TerminalSafe(c.rel), " shrank mid-copy, from ", c.size, " to ", size, " bytes"), true);
    return;
  }
  c.size = size;
  if (c.wrote) c.last_ctime_ns = WallOf(st->st_ctim);
  if (c.wrote && c.ended.empty() && static_cast<double>(now - c.last_ns) / 1e9 >= o_.idle_s) {
    End(c, absl::StrFormat("not grown for %.0f s", o_.idle_s));
  }
}

// Within this of its last write a copy's server and page cache are looked at: a thread
// blocked in the kernel writes nothing while it waits, so every poll counts, but a
// finished copy waiting out the idle time would only add idle looks.
constexpr int64_t kLookAfterWriteNs = 1'000'000'000;
// Below this many looks, the share of them with a thread on a CPU is too coarse to call
// the server CPU-bound.
constexpr int kMinRunningLooks = 5;
// A server with some thread on or queued for a CPU at this share of looks, or throttled
// by its cgroup's CPU quota in this share of its periods, is CPU-bound:
// lower than the one-thread rule's 90 %, since a server held by its CPU still waits for
// a synchronous client's next request between answers (smbd in a 5 % quota: 85-95 %),
// and far above a server at the link's full rate (20-40 %: its threads wait in recv).
constexpr double kServerRunningPct = 80;

void Watcher::Tick(Copy& c, int64_t now) {
  if (!c.wrote) return;
  if (now - c.last_ns <= kLookAfterWriteNs) {
    bool ask_smbstatus = false;
    if (!c.server && now >= c.next_find_ns && c.size - c.base >= o_.min_bytes) {
      c.next_find_ns = now + kFindEveryNs;
      struct stat held {};
      // Which file it is from the descriptor (or its name beneath its directory's): the
      // path is only compared with the servers' descriptor links, never looked up.
      const bool identified = c.fd.valid() ? fstat(c.fd.get(), &held) == 0 : StatInDir(c, &held);
      std::optional<Writer> w;
      if (identified) w = FindWriter(Abs(c.rel), o_.proc, getpid(), &held);
      if (!w) w = FindKernelNfsd(Abs(c.rel), o_.proc);
      if (w) c.server.emplace(*w, o_.proc);
      if (w) FollowServerNamespace(c, *w, now);
      ask_smbstatus = w && absl::StartsWith(w->comm, "smbd") && !w->pids.empty();
    }
    if (c.server) c.server->Look(now);
    if (ask_smbstatus) {
      // Asked while the copy runs (smbstatus lists a session only while it lasts), after
      // the first look: it takes a moment, and the look's clock reading is `now`.
      absl::StatusOr<std::string> negotiated = NegotiatedSmb(c.server->pid(), o_.proc);
      if (negotiated.ok()) {
        c.share_protocol = *negotiated;
      } else {
        c.share_protocol_unknown = std::string(negotiated.status().message());
      }
    }
    std::optional<uint64_t> dirty = ParseDirtyBytes(ReadFileBounded(o_.proc + "/meminfo", 1 << 16).value_or(""));
    if (dirty) c.dirty_peak = std::max(c.dirty_peak.value_or(0), *dirty);
  }
  // A sample per interval in which it was written: a stall stretches the next one, and
  // the idle wait before the end adds none.
  const double since_tick = static_cast<double>(now - c.tick_ns) / 1e9;
  if (since_tick < o_.interval_s || c.last_ns <= c.tick_ns || c.samples.size() >= IntervalSampler::kMaxSamples) {
    return;
  }
  proto::Sample s;
  s.set_t_s(static_cast<double>(now - c.first_ns) / 1e9);
  s.set_interval_s(since_tick);
  s.set_bytes(c.size - c.size_at_tick);
  SetSampleDevices(DevicesBetween(c.tick_reading, now_), &s);
  c.samples.push_back(s);
  c.tick_ns = now;
  c.size_at_tick = c.size;
  const Reading here = ForCopy(c, now_);
  if (std::optional<double> pct = LinePct(c.tick_reading, here)) c.nic_pct.push_back(*pct);
  c.tick_reading = here;
  if (c.size - c.base >= o_.min_bytes) {
    if (!c.said_start) Say(absl::StrCat("copy into ", c.rel, " began"));
    c.said_start = true;
    Say(absl::StrFormat("  %-40s %10s  %8.1f MB/s", c.rel, FormatSize(c.size - c.base),
                        static_cast<double>(s.bytes()) / 1e6 / since_tick));
  }
}

// When a copy ran, from kernel-stamped times where the file has them, so a watch that
// falls behind a burst of events still times it: from the file's creation (a copy it
// saw created) or its change time at the first write event, to its change time at the
// latest look; from the event times otherwise.
struct CopyTiming {
  int64_t start_wall_ns = 0;
  double seconds = 0;
  double shift_s = 0;        // the copy's start to its first write event: samples move by it
  uint64_t early_bytes = 0;  // in the file at the first event and timed at the rest's rate
  bool from_creation = false;
  double idle_after_creation_s = 0;  // created this long before its first write, not timed
};
// How much later than its first bytes could have arrived a file's first write may come
// and the copy still be timed from the file's creation (TimingOf).
constexpr double kCreatedSlackS = 0.05;

CopyTiming TimingOf(const Copy& c) {
  CopyTiming t;
  const int64_t end = c.last_ctime_ns;
  // A server writes once a request has arrived (SMB's are up to 8 MiB): what was in the
  // file at the first event crossed the network before it, timed at the rest's rate.
  const bool stamped = c.first_ctime_ns > 0 && end > c.first_ctime_ns;
  const double written =
      stamped ? static_cast<double>(end - c.first_ctime_ns) / 1e9 : static_cast<double>(c.last_ns - c.first_ns) / 1e9;
  const uint64_t bytes = c.size - c.base, early = std::min(c.first_chunk, bytes), rest = bytes - early;
  const double lead = rest > 0 ? written * static_cast<double>(early) / static_cast<double>(rest) : 0;
  // From its creation, unless the first write came well after the first bytes could
  // have: a client that creates the file and then waits (a lab's barrier, a prompt)
  // would have the wait counted as the copy's. A watch that saw the first write only
  // when every byte was in (it fell behind) cannot tell: creation it is.
  const int64_t first_write_ns = c.first_ctime_ns > 0 ? c.first_ctime_ns : c.first_wall_ns;
  const double created_before_s = static_cast<double>(first_write_ns - c.btime_ns) / 1e9;
  if (c.created && c.btime_ns > 0 && end > c.btime_ns && (rest == 0 || created_before_s <= 2 * lead + kCreatedSlackS)) {
    t.from_creation = true;
    t.start_wall_ns = c.btime_ns;
    t.seconds = static_cast<double>(end - c.btime_ns) / 1e9;
    t.shift_s = std::max(0.0, static_cast<double>(c.first_wall_ns - c.btime_ns) / 1e9);
    return t;
  }
  t.early_bytes = lead > 0 ? early : 0;
  t.seconds = written + lead;
  t.shift_s = lead;
  t.start_wall_ns = (stamped ? c.first_ctime_ns : c.first_wall_ns) - static_cast<int64_t>(lead * 1e9);
  t.idle_after_creation_s = c.created && c.btime_ns > 0 && created_before_s > 0 ? created_before_s : 0;
  return t;
}

// The bytes since the last tick: their own sample, or, under half an interval, added
// to the one before (as the sampler does).
void AddTailSample(Copy& c, double seconds, double interval_s, const std::vector<DeviceFigure>& devices) {
  const double tail = static_cast<double>(c.last_ns - c.tick_ns) / 1e9;
  const uint64_t extra = c.size - c.size_at_tick;
  if (tail <= 0 && extra == 0) return;
  if (!c.samples.empty() && tail < interval_s / 2) {
    proto::Sample& s = c.samples.back();
    s.set_bytes(s.bytes() + extra);
    s.set_interval_s(s.interval_s() + std::max(0.0, tail));
    s.set_t_s(std::max(s.t_s(), seconds));
    return;
  }
  proto::Sample s;
  s.set_t_s(seconds);
  s.set_interval_s(tail > 0 ? tail : seconds);
  s.set_bytes(extra);
  SetSampleDevices(devices, &s);
  c.samples.push_back(s);
}

// Whether the directory held by `dir` is a tmpfs or ramfs (the file itself may be gone).
bool InMemoryDirectory(int dir) {
  struct statfs fs {};
  return dir >= 0 && ::fstatfs(dir, &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
}

std::string ObservedPart(const ObservedFigures& f) {
  const std::string nic =
      f.line_rate_intervals > 0 ? absl::StrCat(" (median of ", f.line_rate_intervals, " intervals)") : "";
  return absl::StrCat(
      "NIC ", Pct(f.line_rate_pct), " of the link", nic, ", serving process CPU ", Pct(f.server_cpu_pct),
      " and blocked ", Pct(f.server_blocked_pct), ", busiest disk ", Pct(f.busiest_device_pct),
      f.in_memory ? "; in memory (tmpfs): no disk, so the server's waits in the kernel are not a disk's" : "");
}

// The NIC's receive rate between two readings against the link's frame ceiling; nullopt
// when either reading or the link is unknown.
std::optional<double> Watcher::LinePct(const Reading& from, const Reading& to) const {
  const double seconds = static_cast<double>(to.mono_ns - from.mono_ns) / 1e9;
  if (!from.rx_bytes || !to.rx_bytes || link_mbps_ == 0 || !(seconds > 0) || *to.rx_bytes < *from.rx_bytes) {
    return std::nullopt;
  }
  return static_cast<double>(*to.rx_bytes - *from.rx_bytes) * 8 / seconds / 1e6 / FrameCeilingMbps(link_mbps_, mtu_) *
         100;
}

// The NAS's parts during the copy: its devices and page cache (or none: a tmpfs), and its NIC.
void Watcher::AddNasFigures(const Copy& c, proto::TransferReport* row, ObservedFigures* f) const {
  f->in_memory = InMemoryDirectory(c.fd.valid() ? c.fd.get() : DirFd(c.wd));
  const double elapsed = static_cast<double>(c.last.mono_ns - c.start.mono_ns) / 1e9;
  if (elapsed > 0) {
    DeviceWatchResult devices;
    devices.devices = DevicesBetween(c.start, c.last);
    devices.dirty_peak_bytes = c.dirty_peak;
    AddDeviceColumns(devices, row);
    if (const DeviceFigure* busiest = BusiestUnderTarget(devices.devices)) f->busiest_device_pct = busiest->busy_pct;
    // The NIC from the first write to a look inside the copy, unless the copy was too
    // short to have one: then to the look after it.
    const Reading& from = c.nic_start ? *c.nic_start : c.start;
    const Reading& end = static_cast<double>(c.inner.mono_ns - from.mono_ns) / 1e9 >= kMinNicSpanS ? c.inner : c.last;
    if (const std::optional<double> average = LinePct(from, end)) {
      const double pct = *average;
      row->set_link_mbps(link_mbps_);
      if (mtu_ > 0) row->set_mtu(mtu_);
      if (pct <= kMaxLinePct) {
        row->set_line_rate_pct(pct);
        f->line_rate_pct = pct;
        // The verdict asks what held the copy back most of the time: a stall (sshd growing
        // its buffers at a session's start) must not make a full link look idle.
        if (c.nic_pct.size() >= 3) {
          std::vector<double> sorted = c.nic_pct;
          std::sort(sorted.begin(), sorted.end());
          f->line_rate_pct = std::min(kMaxLinePct, PercentileSorted(sorted, 0.5));
          f->line_rate_intervals = static_cast<int>(sorted.size());
        }
      } else {
        row->set_notes(
            absl::StrFormat("line_rate_pct: the NIC received %.0f %% of %d Mb/s, more than the link carries: left out "
                            "(--link-speed wrong?)",
                            pct, link_mbps_));
      }
    }
  }
}

proto::TransferReport Watcher::RowOf(Copy& c, ObservedFigures* f, std::string* details) {
  proto::TransferReport row;
  row.set_run_id(run_id_);
  row.set_label(o_.label);
  row.set_iteration(++ordinal_);
  row.set_stream(0);
  row.set_role(Name(Role::kNas));
  row.set_host(host_);
  row.set_transport(kObservedTransport);
  row.set_direction(Name(Direction::kWrite));
  // Anyone who can write DIR names its files: ESC, CR, LF and bytes that are not UTF-8
  // are written as visible escapes ("\x1b"), so the cell is plain text in any reader.
  row.set_observed_file(TerminalSafe(c.rel));
  row.set_status(Name(c.status));
  if (!c.error.empty()) row.set_error(c.error);
  const uint64_t bytes = c.size - c.base;
  const CopyTiming t = TimingOf(c);
  row.set_bytes(bytes);
  row.set_started_at_unix_ns(t.start_wall_ns);
  row.set_first_byte_s(0);
  row.set_duration_s(t.seconds);
  row.set_mb_per_s(static_cast<double>(bytes) / 1e6 / t.seconds);
  AddTailSample(c, static_cast<double>(c.last_ns - c.first_ns) / 1e9, o_.interval_s,
                DevicesBetween(c.tick_reading, c.last));
  for (size_t i = 0; i < c.samples.size(); ++i) {
    proto::Sample* s = row.add_samples();
    *s = c.samples[i];
    s->set_t_s(std::min(s->t_s() + t.shift_s, t.seconds));
    if (i == 0) s->set_interval_s(s->interval_s() + t.shift_s);
  }
  AddCacheFigures(row);
  std::vector<std::string> detail{absl::StrCat("ended: ", c.ended)};
  if (t.from_creation) detail.push_back("timed from the file's creation to its last change (kernel times)");
  if (t.idle_after_creation_s > 0) {
    detail.push_back(
        absl::StrFormat("created %.3f s before its first write: timed from the first write", t.idle_after_creation_s));
  }
  if (t.early_bytes > 0) {
    detail.push_back(
        absl::StrFormat("its first %s were in the file at the first write event: timed at the copy's own "
                        "rate (%.3f s)",
                        FormatSize(t.early_bytes), t.shift_s));
  }
  if (!c.created) detail.push_back("the watch saw this file first mid-way: bytes from then on");
  AddNasFigures(c, &row, f);
  if (c.server) {
    const ServerFigures s = c.server->Figures(c.last_ns);
    row.set_peer(TerminalSafe(s.name));  // a comm anyone can set
    if (s.busiest_thread_pct >= 0) row.set_cpu_busy_pct(s.busiest_thread_pct);
    f->server_cpu_pct = s.busiest_thread_pct;
    if (s.looks >= 3) f->server_blocked_pct = s.blocked_pct;
    // The kernel's nfsd threads serve every client: one of them busy says nothing of this copy.
    if (s.looks >= kMinRunningLooks && !s.kernel_nfsd) f->server_running_pct = s.running_pct;
    f->server_quota_pct = s.quota_throttled_pct;
    detail.push_back(absl::StrFormat(
        "served by %s: busiest thread %s on a CPU, a thread on or queued for one at %s and "
        "blocked in the kernel at %s of %d looks%s",
        s.name, Pct(s.busiest_thread_pct), Pct(s.running_pct), Pct(s.blocked_pct), s.looks,
        s.quota_throttled_pct >= 0
            ? absl::StrFormat("; its CPU quota throttled it in %.0f %% of its periods", s.quota_throttled_pct)
            : ""));
    if (s.kernel_nfsd) detail.push_back("the kernel's nfsd threads serve every NFS client: other traffic counts too");
    if (!c.share_protocol.empty()) row.set_share_protocol(c.share_protocol);
    if (!c.share_protocol_unknown.empty())
      detail.push_back(absl::StrCat("negotiated SMB unknown: ", c.share_protocol_unknown));
  } else {
    detail.push_back("the serving process was not found");
  }
  std::string why;
  const std::string verdict = c.status == Status::kOk ? ObservedVerdict(*f, &why) : "";
  if (!verdict.empty()) row.set_bottleneck(verdict);
  if (!why.empty()) detail.push_back(why);
  row.set_observed_detail(absl::StrJoin(detail, "; "));
  *details = why.empty() ? ObservedPart(*f) : why;
  return row;
}

void Watcher::Finish(Copy& c) {
  const uint64_t bytes = c.size - c.base;
  const double seconds = TimingOf(c).seconds;
  if (!c.wrote || bytes < o_.min_bytes || seconds < kMinTimedS) {
    ++summary_.small;
    return;
  }
  ObservedFigures figures;
  std::string details;
  proto::TransferReport row = RowOf(c, &figures, &details);
  absl::Status s = sink_.Submit(row);
  if (s.ok()) {
    ++summary_.rows;
  } else {
    ++summary_.submit_errors;
    SayThrottled(absl::StrCat("watch: the row of ", c.rel, " was not stored: ", s.message()));
  }
  Say(absl::StrFormat("copy %d  %s  %s in %.2f s = %.1f MB/s  %s  %s%s(%s)", row.iteration(), c.rel, FormatSize(bytes),
                      seconds, row.mb_per_s(), c.ended, row.bottleneck().empty() ? "" : row.bottleneck(),
                      row.bottleneck().empty() ? "" : "  ", c.status == Status::kOk ? details : c.error));
}

// A file this look found unlinked may have been closed after the look's first read of the
// queue and removed right after (a loop's cleanup; under load the window is wide): its
// close event is queued before the unlink's, so the queue read now decides, and only a
// copy still open when it went is called removed mid-copy.
void Watcher::SettleUnlinked() {
  HandleEvents();
  for (auto& [rel, c] : copies_) {
    if (!c.unlinked) continue;
    c.unlinked = false;
    End(c, "removed", Status::kAborted, absl::StrCat(TerminalSafe(c.rel), " was removed mid-copy"));
  }
}

void Watcher::FinishEnded(int64_t now) {
  for (auto it = copies_.begin(); it != copies_.end();) {
    if (it->second.ended.empty()) {
      ++it;
      continue;
    }
    Refresh(it->second, now);
    Finish(it->second);
    it = copies_.erase(it);
  }
}

// The copies still open when the watch ends: one last look at each, then a row. When a
// run that asked for the watch ended, its copies are whole (its own rows say so).
void Watcher::FinishAll(int64_t previous_look) {
  const int64_t now = MonoNanos();
  HandleEvents();  // non-blocking: what arrived since the last poll
  now_ = Read(now);
  for (auto& [rel, c] : copies_) {
    if (c.wrote && c.last_ns > previous_look) {
      c.inner = c.last;
      c.last = ForCopy(c, now_);
    }
    Refresh(c, now);
    if (root_gone_) {
      End(c, "the directory vanished", Status::kAborted, "the watched directory vanished mid-copy");
    } else if (o_.stop_ends_copies) {
      End(c, "the observing run ended");
    } else {
      End(c, "the watch stopped", Status::kAborted, "the watch stopped mid-copy");
    }
    Finish(c);
  }
  copies_.clear();
}

absl::StatusOr<WatchSummary> Watcher::Run() {
  // DIR itself as its user named it (or as the caller opened it); all beneath it by descriptor.
  Fd root_fd(o_.dir_fd >= 0 ? fcntl(o_.dir_fd, F_DUPFD_CLOEXEC, 0)
                            : open(o_.dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) {
    if (errno == ENOTDIR) return absl::InvalidArgumentError(absl::StrCat(o_.dir, " is not a directory"));
    return ErrnoStatus(errno, absl::StrCat("watch ", o_.dir));
  }
  struct stat st;
  if (fstat(root_fd.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", o_.dir));
  if (!S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(o_.dir, " is not a directory"));
  inotify_ = Fd(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify_.valid()) return ErrnoStatus(errno, "inotify_init1");
  if (absl::Status s = AddTree(std::move(root_fd), -1, "", "", 0); !s.ok()) return s;
  root_wd_ = dirs_.empty() ? -1 : dirs_.begin()->first;
  run_id_ = o_.run_id.empty() ? NewRunId() : o_.run_id;
  watch_start_wall_ns_ = WallNanos();
  host_ = o_.host.empty() ? LocalHostName() : o_.host;
  // DIR's devices through the descriptor held: the name may point elsewhere by now.
  devices_ = DevicesToWatch(absl::StrCat("/proc/self/fd/", DirFd(root_wd_)), o_.sys);
  link_mbps_ = LinkMbps();
  Say(absl::StrFormat(
      "watching %s (%d directories), run %s; link %s; a copy ends when its file is closed or has not "
      "grown for %.0f s",
      o_.dir, dirs_.size(), run_id_, link_mbps_ > 0 ? absl::StrCat(link_mbps_, " Mb/s") : "unknown", o_.idle_s));
  if (o_.ready) o_.ready();
  int64_t next_look = MonoNanos(), previous_look = next_look;
  now_ = Read(next_look);
  while (!(o_.stop != nullptr && o_.stop->load()) && !root_gone_) {
    pollfd p{inotify_.get(), POLLIN, 0};
    const int wait_ms = static_cast<int>(std::max<int64_t>(0, next_look - MonoNanos()) / 1'000'000);
    const int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno != EINTR) return ErrnoStatus(errno, "poll inotify");
    int64_t now = MonoNanos();
    if (ready > 0) {
      HandleEvents();
      now = MonoNanos();
    }
    if (now < next_look) {
      // Events come with every write: gather them for a while rather than wake per write.
      if (ready > 0) usleep(static_cast<useconds_t>(std::min<int64_t>(kEventGapNs, next_look - now) / 1000));
      continue;
    }
    next_look = now + kLookEveryNs;
    // What arrived since the poll first: a close queued before an unlink (a loop's
    // cleanup) must be read before this look finds the file gone and calls it removed.
    HandleEvents();
    if (o_.before_look) o_.before_look();
    // DIR removed: the descriptor held keeps IN_DELETE_SELF back, its link count says it.
    if (const int root = DirFd(root_wd_); root >= 0 && fstat(root, &st) == 0 && st.st_nlink == 0) {
      root_gone_ = true;
      break;
    }
    now_ = Read(now);  // every look, so a copy that starts between two has counters from before it
    bool unlinked = false;
    for (auto& [rel, c] : copies_) {
      if (c.wrote && c.last_ns > previous_look) {  // written since the last look
        c.inner = c.last;
        c.last = ForCopy(c, now_);
      }
      if (c.ended.empty()) Refresh(c, now, &unlinked);
      if (c.ended.empty() && !c.unlinked) Tick(c, now);
      if (c.ended.empty() && !c.wrote && static_cast<double>(now - c.seen_ns) / 1e9 >= o_.idle_s) {
        End(c, "never written");
      }
    }
    if (unlinked) SettleUnlinked();
    FinishEnded(now);
    previous_look = now;
  }
  FinishAll(previous_look);
  if (root_gone_) return absl::NotFoundError(absl::StrCat(o_.dir, " vanished: nothing left to watch"));
  return summary_;
}

}  // namespace

std::string ObservedVerdict(const ObservedFigures& f, std::string* why) {
  const std::string parts = ObservedPart(f);
  if (f.line_rate_pct >= kNetworkPct) {
    *why = absl::StrFormat("network: the NIC took %.0f %% of the link (%s)", f.line_rate_pct, parts);
    return Name(Bottleneck::kNetwork);
  }
  // A nearly full link and a busy server: the part nearer its ceiling held the copy. A
  // server that kept the link 94 % full was not what held it, however busy (ganesha's
  // thread at 91 % over a 1 Gb/s link on two shared cores).
  const double server_pct = std::max(
      {f.server_cpu_pct >= kCpuBoundPct ? f.server_cpu_pct : -1.0,
       f.server_quota_pct >= kServerRunningPct ? f.server_quota_pct : -1.0,
       f.server_running_pct >= kServerRunningPct && f.server_blocked_pct < kBlockedPct ? f.server_running_pct : -1.0});
  if (server_pct >= 0 && f.line_rate_pct >= kNearlyFullLinkPct && f.line_rate_pct >= server_pct) {
    *why = absl::StrFormat(
        "network: the NIC took %.0f %% of the link, nearer its ceiling than the serving process's CPU (%.0f %%) (%s)",
        f.line_rate_pct, server_pct, parts);
    return Name(Bottleneck::kNetwork);
  }
  if (f.server_cpu_pct >= kCpuBoundPct) {
    *why = absl::StrFormat(
        "server-cpu: the serving process's busiest thread was on or queued for a CPU %.0f %% of the "
        "time (%s)",
        f.server_cpu_pct, parts);
    return Name(Bottleneck::kServerCpu);
  }
  if (f.server_quota_pct >= kServerRunningPct) {
    *why = absl::StrFormat(
        "server-cpu: the serving process's CPU quota (its cgroup: a container's or service's CPU limit) "
        "throttled it in %.0f %% of its periods (%s)",
        f.server_quota_pct, parts);
    return Name(Bottleneck::kServerCpu);
  }
  if (f.server_running_pct >= kServerRunningPct && f.server_blocked_pct < kBlockedPct) {
    *why = absl::StrFormat(
        "server-cpu: one of the serving process's threads was on or queued for a CPU at %.0f %% of the looks, "
        "its work passing between threads (%s)",
        f.server_running_pct, parts);
    return Name(Bottleneck::kServerCpu);
  }
  if (!f.in_memory && (f.server_blocked_pct >= kBlockedPct || f.busiest_device_pct >= kDeviceBusyPct)) {
    *why = absl::StrCat(
        "disk: ",
        f.server_blocked_pct >= kBlockedPct
            ? absl::StrFormat("the serving process waited in the kernel (disk or dirty-page limit) at "
                              "%.0f %% of looks",
                              f.server_blocked_pct)
            : absl::StrFormat("the busiest disk under the directory was %.0f %% busy", f.busiest_device_pct),
        " (", parts, ")");
    return Name(Bottleneck::kDisk);
  }
  // A nearly full link with every other part idle: the link was nearest its ceiling
  // (NIC 94 % of the link by the median of its intervals while smbclient's own figure
  // said 96 % of the goodput was judged client).
  if (f.line_rate_pct >= kNearlyFullLinkPct && f.server_cpu_pct >= 0 && f.server_blocked_pct >= 0) {
    *why = absl::StrFormat("network: the NIC took %.0f %% of the link and no other part of the NAS was busy (%s)",
                           f.line_rate_pct, parts);
    return Name(Bottleneck::kNetwork);
  }
  // "client" needs every part seen idle: an unseen server might have been the limit.
  if (f.line_rate_pct >= 0 && f.server_cpu_pct >= 0 && f.server_blocked_pct >= 0) {
    *why = absl::StrCat("client: none of the NAS's parts was busy (", parts, "): the client or its path held it back");
    return Name(Bottleneck::kClient);
  }
  *why = absl::StrCat("no verdict: too little seen (", parts, ")");
  return "";
}

absl::StatusOr<WatchSummary> RunWatch(const WatchOptions& o, ReportSink& sink) { return Watcher(o, sink).Run(); }

}  // namespace nasperf
