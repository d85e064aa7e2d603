// The simulated disk: inodes with a durable prefix, current and durable directory entries,
// numbered crash points, and the reboot that keeps only what a real disk could.
#include "simfs/sim_file_system.h"

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include "broker/errors.h"
#include "sync/os_mutex.h"

namespace broker::sim {
namespace {

using Mutex = sync::OsMutex;
using MutexLock = sync::OsMutexLock;

// What a power cut writes back of a mapped file at once (the storage format's page).
constexpr std::uint64_t kPageBytes = 4096;

// One file. Appends, extensions and cuts change only its end, so "what is durable" is a
// prefix length; stores through a mapping are kept apart until a sync, since a power cut
// may keep any of the pages they dirtied, each as it was after some of them.
struct Inode {
  std::string content;
  std::uint64_t synced = 0;  // <= content.size()
  // A store through a mapping since the last sync, with the bytes it replaced.
  struct Store {
    std::uint64_t position;
    std::string before;
  };
  std::vector<Store> stores;
  bool mapped = false;  // written through a mapping: pages go back whole, never torn
};

// Cuts a file to size bytes: its durable prefix and its stores' undo records with it.
void cut_to(Inode& inode, std::uint64_t size) {
  inode.content.resize(size);
  inode.synced = std::min(inode.synced, size);
  std::erase_if(inode.stores, [&](const Inode::Store& st) { return st.position >= size; });
  for (Inode::Store& st : inode.stores) {
    st.before.resize(std::min<std::uint64_t>(st.before.size(), size - st.position));
  }
}

// The piece [from, to) of a store at `position` that lies in [lo, hi), as positions.
std::pair<std::uint64_t, std::uint64_t> clip(std::uint64_t position, std::size_t length,
                                             std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t from = std::max(position, lo);
  const std::uint64_t to = std::min<std::uint64_t>(position + length, hi);
  return {from, std::max(from, to)};
}

// Path -> file. Two entries may share an inode (a rename not yet made durable).
using Entries = std::map<std::string, std::shared_ptr<Inode>>;

// The same error text as the POSIX file system: "append d/f: No such file or directory".
[[noreturn]] void fail(std::string_view op, const std::string& path, const std::string& what) {
  throw IoError(std::string(op) + " " + path + ": " + what);
}

[[noreturn]] void fail(std::string_view op, const std::string& path, std::errc error) {
  fail(op, path, std::make_error_code(error).message());
}

// Drops repeated and trailing '/' and "." components; "" and "." become ".".
std::string normalize(std::string_view path) {
  std::string out = !path.empty() && path.front() == '/' ? "/" : "";
  while (!path.empty()) {
    const std::size_t end = std::min(path.find('/'), path.size());
    const std::string_view part = path.substr(0, end);
    if (!part.empty() && part != ".") {
      if (!out.empty() && out.back() != '/') out += '/';
      out += part;
    }
    path.remove_prefix(std::min(end + 1, path.size()));
  }
  return out.empty() ? "." : out;
}

// The directory holding a normalized path ("/" and "." are their own parents).
std::string parent(const std::string& path) {
  if (path == "/" || path == ".") return path;
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The last component of a normalized path.
std::string name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

// Everything the disk knows. Shared with HeldLock so a lock can outlive the file system.
struct SimFileSystem::State {
  // What a mutating call does at its crash point.
  enum class Step {
    kRun,   // perform it
    kDie,   // the process dies at this call (an append still adds its bytes)
    kDead,  // the process died earlier: do nothing
    kFail,  // an armed failure fires: the caller leaves what SimFileSystem says, then throws
  };

  // Numbers the call, then says whether it runs; on kFail, `error` is the armed error.
  Step enter(Call call, std::string& error) REQUIRES(mu) {
    if (crashed) return Step::kDead;
    const std::uint64_t point = next_point++;
    // Crash before error: a process that has died sees no error.
    if (crash_point == point) {
      crash_point.reset();
      crashed = true;
      return Step::kDie;
    }
    if (call == Call::kStore) {
      ++stores;
      return Step::kRun;  // a store into memory cannot fail
    }
    bool fires = false;
    if (const auto it = failures.find(point); it != failures.end()) {
      error = std::move(it->second);
      failures.erase(it);
      fires = true;
    }
    // Every armed fail_next of this kind counts the call, also when another fires.
    for (auto it = armed.begin(); it != armed.end();) {
      if (it->call == call && --it->remaining == 0) {
        if (!fires) error = std::make_error_code(it->error).message();
        fires = true;
        it = armed.erase(it);
      } else {
        ++it;
      }
    }
    if (!fires) return Step::kRun;
    ++fired;
    return Step::kFail;
  }

  // The current file at path, or null.
  Inode* file(const std::string& path) REQUIRES(mu) {
    const auto it = current.find(path);
    return it == current.end() ? nullptr : it->second.get();
  }

  // The current file at path; throws as the POSIX call would if there is none.
  Inode& existing_file(std::string_view op, const std::string& path) REQUIRES(mu) {
    if (Inode* inode = file(path)) return *inode;
    fail(op, path,
         dirs.count(path) ? std::errc::is_a_directory : std::errc::no_such_file_or_directory);
  }

  // Throws unless a new file could be made at path: its parent exists and it is no dir.
  void check_creatable(std::string_view op, const std::string& path) REQUIRES(mu) {
    if (dirs.count(path)) fail(op, path, std::errc::is_a_directory);
    const std::string dir = parent(path);
    if (dirs.count(dir)) return;
    fail(op, path, file(dir) ? std::errc::not_a_directory : std::errc::no_such_file_or_directory);
  }

  void append_now(const std::string& path, std::string_view bytes) REQUIRES(mu) {
    Inode* inode = file(path);
    if (inode == nullptr) {
      check_creatable("append", path);
      auto created = std::make_shared<Inode>();
      inode = created.get();
      current.emplace(path, std::move(created));
    }
    inode->content.append(bytes);
  }

  // Undoes the stores to [lo, hi) from the newest back to number `keep` (0: all of them).
  static void undo(Inode& inode, const std::vector<std::size_t>& stores, std::size_t keep,
                   std::uint64_t lo, std::uint64_t hi) {
    for (std::size_t k = stores.size(); k-- > keep;) {
      const Inode::Store& st = inode.stores[stores[k]];
      const auto [from, to] = clip(st.position, st.before.size(), lo,
                                   std::min<std::uint64_t>(hi, inode.content.size()));
      for (std::uint64_t at = from; at < to; ++at) inode.content[at] = st.before[at - st.position];
    }
  }

  // A power cut of the pages stores dirtied: each is written back as it was after some
  // number of the stores that touched it (none, all, or any count between), page by page.
  static void write_back(Inode& inode, std::mt19937_64& rng) {
    std::map<std::uint64_t, std::vector<std::size_t>> pages;  // page -> its stores, in order
    for (std::size_t i = 0; i < inode.stores.size(); ++i) {
      const Inode::Store& st = inode.stores[i];
      const std::uint64_t end = st.position + st.before.size();
      for (std::uint64_t page = st.position / kPageBytes; page * kPageBytes < end; ++page) {
        pages[page].push_back(i);
      }
    }
    for (const auto& [page, stores] : pages) {
      // A quarter each "none" and "all", as for torn tails: the cases whole records live or
      // die in.
      std::size_t keep = 0;
      switch (rng() % 4) {
        case 0:
          keep = 0;
          break;
        case 1:
          keep = stores.size();
          break;
        default:
          keep = rng() % (stores.size() + 1);
      }
      undo(inode, stores, keep, page * kPageBytes, (page + 1) * kPageBytes);
    }
    inode.stores.clear();
  }

  // A power cut of one file: the durable prefix plus what options let survive of the rest.
  static void tear(Inode& inode, std::mt19937_64& rng, const CrashOptions& options) {
    write_back(inode, rng);
    const std::uint64_t unsynced = inode.content.size() - inode.synced;
    std::uint64_t keep = 0;
    if (options.torn_tail && unsynced > 0) {
      // A quarter each "lost all" and "kept all": the cases whole records live or die
      // in, which a uniform draw over a long tail would hardly ever pick.
      switch (rng() % 4) {
        case 0:
          keep = 0;
          break;
        case 1:
          keep = unsynced;
          break;
        default:
          keep = rng() % (unsynced + 1);
      }
    }
    inode.content.resize(inode.synced + keep);
    if (options.garbage_tail && !inode.mapped && keep > 0 && rng() % 3 == 0) {
      auto& last = reinterpret_cast<unsigned char&>(inode.content.back());
      last = static_cast<unsigned char>(last ^ (1 + rng() % 255));  // never xor with 0
    }
    inode.synced = inode.content.size();
  }

  // A successful sync: every byte and store of the file is durable.
  static void make_durable(Inode& inode) {
    inode.synced = inode.content.size();
    inode.stores.clear();
  }

  // A failed sync without failed_sync_keeps: the dirty pages are marked clean and their
  // bytes are lost, to reads too.
  static void drop_unsynced(Inode& inode) {
    std::vector<std::size_t> all(inode.stores.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    undo(inode, all, 0, 0, inode.content.size());
    inode.stores.clear();
    inode.content.resize(inode.synced);
  }

  mutable Mutex mu;
  std::set<std::string> dirs GUARDED_BY(mu) = {"/", "."};
  Entries current GUARDED_BY(mu);  // what list and reads see
  Entries durable GUARDED_BY(mu);  // what a crash() reboots into
  std::uint64_t next_point GUARDED_BY(mu) = 0;
  std::uint64_t stores GUARDED_BY(mu) = 0;  // store points among them
  std::optional<std::uint64_t> crash_point GUARDED_BY(mu);
  bool crashed GUARDED_BY(mu) = false;
  std::map<std::uint64_t, std::string> failures GUARDED_BY(mu);  // point -> error text
  struct Armed {                                                 // a fail_next
    Call call;
    std::uint64_t remaining;  // calls of that kind until it fires (1: the next)
    std::errc error;
  };
  std::vector<Armed> armed GUARDED_BY(mu);
  std::uint64_t fired GUARDED_BY(mu) = 0;
  bool failed_sync_keeps GUARDED_BY(mu) = false;
  std::chrono::microseconds sync_latency GUARDED_BY(mu){0};  // set_sync_latency
  std::set<std::string> locked GUARDED_BY(mu);
  // Bumped by crash(), which frees every lock: an older HeldLock must not free its path
  // again, since a new holder may have it by then.
  std::uint64_t lock_epoch GUARDED_BY(mu) = 0;
};

// A held entry of the lock table; frees it unless a crash() already did.
class SimFileSystem::HeldLock final : public FileLock {
 public:
  HeldLock(std::weak_ptr<State> state, std::string path, std::uint64_t epoch)
      : state_(std::move(state)), path_(std::move(path)), epoch_(epoch) {}
  ~HeldLock() override {
    const std::shared_ptr<State> s = state_.lock();
    if (!s) return;
    MutexLock lock(s->mu);
    if (s->lock_epoch == epoch_) s->locked.erase(path_);
  }

 private:
  const std::weak_ptr<State> state_;
  const std::string path_;
  const std::uint64_t epoch_;
};

SimFileSystem::SimFileSystem() : state_(std::make_shared<State>()) {}

SimFileSystem::~SimFileSystem() = default;

void SimFileSystem::create_directories(const std::string& dir) {
  State& s = *state_;
  const std::string path = normalize(dir);
  MutexLock lock(s.mu);
  if (s.crashed) return;
  // Every prefix first, so a file in the way leaves nothing half made.
  std::vector<std::string> prefixes;
  for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    prefixes.push_back(path.substr(0, slash));
    if (slash == std::string::npos) break;
  }
  for (const auto& prefix : prefixes) {
    if (s.file(prefix)) fail("create_directories", prefix, std::errc::not_a_directory);
  }
  s.dirs.insert(prefixes.begin(), prefixes.end());
}

std::vector<std::string> SimFileSystem::list(const std::string& dir) {
  State& s = *state_;
  const std::string path = normalize(dir);
  MutexLock lock(s.mu);
  if (!s.dirs.count(path)) {
    if (s.file(path)) fail("list", path, std::errc::not_a_directory);
    return {};
  }
  std::set<std::string> names;
  for (const auto& [entry, inode] : s.current) {
    if (parent(entry) == path) names.insert(name(entry));
  }
  for (const auto& sub : s.dirs) {
    if (sub != path && parent(sub) == path) names.insert(name(sub));
  }
  return {names.begin(), names.end()};
}

bool SimFileSystem::exists(const std::string& path) {
  State& s = *state_;
  const std::string p = normalize(path);
  MutexLock lock(s.mu);
  return s.dirs.count(p) || s.file(p);
}

std::uint64_t SimFileSystem::size(const std::string& path) {
  State& s = *state_;
  const std::string p = normalize(path);
  MutexLock lock(s.mu);
  return s.existing_file("size", p).content.size();
}

std::string SimFileSystem::read(const std::string& path, std::uint64_t position,
                                std::size_t length) {
  State& s = *state_;
  const std::string p = normalize(path);
  MutexLock lock(s.mu);
  const std::string& content = s.existing_file("read", p).content;
  if (position >= content.size()) return {};
  return content.substr(position, length);
}

void SimFileSystem::append(const std::string& path, std::string_view bytes) {
  State& s = *state_;
  const std::string p = normalize(path);
  MutexLock lock(s.mu);
  std::string error;
  switch (s.enter(s.file(p) ? Call::kAppend : Call::kOpen, error)) {
    case State::Step::kDead:
      return;
    case State::Step::kDie:
      // The bytes reach the page cache, unsynced; only crash() decides what survives.
      try {
        s.append_now(p, bytes);
      } catch (const IoError&) {
        // It would have failed; the process is dead either way.
      }
      return;
    case State::Step::kFail:
      // A full disk takes what fits (a short write), then refuses the rest.
      if (error == std::make_error_code(std::errc::no_space_on_device).message() &&
          bytes.size() > 1) {
        s.append_now(p, bytes.substr(0, bytes.size() / 2));
      }
      fail("append", p, error);
    case State::Step::kRun:
      s.append_now(p, bytes);
  }
}

void SimFileSystem::sync(const std::string& path) {
  State& s = *state_;
  const std::string p = normalize(path);
  std::chrono::microseconds latency{0};
  {
    MutexLock lock(s.mu);
    std::string error;
    const State::Step step = s.enter(Call::kSync, error);
    if (step == State::Step::kFail) {
      // fsyncgate: the dirty pages are marked clean, their bytes lost to the disk.
      Inode* failed = s.file(p);
      if (failed != nullptr && !s.failed_sync_keeps) State::drop_unsynced(*failed);
      fail("sync", p, error);
    }
    if (step != State::Step::kRun) return;
    if (s.dirs.count(p)) return;  // a directory is durable already, as fdatasync of one is
    State::make_durable(s.existing_file("sync", p));
    latency = s.sync_latency;
  }
  // After the lock: other threads' appends meanwhile are not covered by this sync.
  if (latency.count() > 0) std::this_thread::sleep_for(latency);
}

void SimFileSystem::set_sync_latency(std::chrono::microseconds latency) {
  State& s = *state_;
  MutexLock lock(s.mu);
  s.sync_latency = latency;
}

void SimFileSystem::sync_dir(const std::string& dir) {
  State& s = *state_;
  const std::string d = normalize(dir);
  MutexLock lock(s.mu);
  std::string error;
  const State::Step step = s.enter(Call::kSyncDir, error);
  if (step == State::Step::kFail) fail("sync_dir", d, error);
  if (step != State::Step::kRun) return;
  if (!s.dirs.count(d)) {
    fail("sync_dir", d,
         s.file(d) ? std::errc::not_a_directory : std::errc::no_such_file_or_directory);
  }
  for (auto it = s.durable.begin(); it != s.durable.end();) {
    const bool gone = parent(it->first) == d && !s.current.count(it->first);
    it = gone ? s.durable.erase(it) : std::next(it);
  }
  for (const auto& [path, inode] : s.current) {
    if (parent(path) == d) s.durable[path] = inode;
  }
}

void SimFileSystem::rename(const std::string& from, const std::string& to) {
  State& s = *state_;
  const std::string f = normalize(from);
  const std::string t = normalize(to);
  const std::string both = f + " -> " + t;
  MutexLock lock(s.mu);
  std::string error;
  const State::Step step = s.enter(Call::kRename, error);
  if (step == State::Step::kFail) fail("rename", both, error);
  if (step != State::Step::kRun) return;
  if (s.dirs.count(f)) fail("rename", both, "renaming directories is not simulated");
  const auto it = s.current.find(f);
  if (it == s.current.end()) fail("rename", both, std::errc::no_such_file_or_directory);
  if (f == t) return;  // POSIX: renaming a file onto itself does nothing
  s.check_creatable("rename", t);
  std::shared_ptr<Inode> inode = std::move(it->second);
  s.current.erase(it);
  s.current[t] = std::move(inode);
}

void SimFileSystem::remove(const std::string& path) {
  State& s = *state_;
  const std::string p = normalize(path);
  MutexLock lock(s.mu);
  std::string error;
  const State::Step step = s.enter(Call::kRemove, error);
  if (step == State::Step::kFail) fail("remove", p, error);
  if (step != State::Step::kRun) return;
  if (s.dirs.count(p)) fail("remove", p, std::errc::is_a_directory);
  s.current.erase(p);
}

void SimFileSystem::truncate(const std::string& path, std::uint64_t size) {
  State& s = *state_;
  const std::string p = normalize(path);
  MutexLock lock(s.mu);
  std::string error;
  const State::Step step = s.enter(Call::kTruncate, error);
  if (step == State::Step::kFail) fail("truncate", p, error);
  if (step != State::Step::kRun) return;
  Inode& inode = s.existing_file("truncate", p);
  if (size > inode.content.size()) fail("truncate", p, std::errc::invalid_argument);
  cut_to(inode, size);
}

// A file written through a "mapping": the inode itself, which stays the file's after a
// rename or remove, as a real mapping does. Every call takes the disk's one mutex.
class SimFileSystem::Mapped final : public MappedFile {
 public:
  Mapped(std::shared_ptr<State> state, std::string path, std::shared_ptr<Inode> inode)
      : state_(std::move(state)), path_(std::move(path)), inode_(std::move(inode)) {}

  [[nodiscard]] std::uint64_t size() const override {
    MutexLock lock(state_->mu);
    return inode_->content.size();
  }

  void extend(std::uint64_t size) override {
    State& s = *state_;
    MutexLock lock(s.mu);
    std::string error;
    switch (s.enter(Call::kExtend, error)) {
      case State::Step::kDead:
        return;
      case State::Step::kFail:
        fail("extend", path_, error);
      case State::Step::kDie:
      case State::Step::kRun:
        if (size > inode_->content.size()) inode_->content.resize(size, '\0');
    }
  }

  void store(std::uint64_t position, std::string_view bytes) override {
    State& s = *state_;
    MutexLock lock(s.mu);
    std::string error;
    if (s.enter(Call::kStore, error) == State::Step::kDead) return;
    std::string& content = inode_->content;
    if (position + bytes.size() > content.size()) {
      throw std::logic_error("store past the end of " + path_ + " (extend it first)");
    }
    inode_->stores.push_back({position, content.substr(position, bytes.size())});
    content.replace(position, bytes.size(), bytes);
  }

  void sync() override {
    State& s = *state_;
    std::chrono::microseconds latency{0};
    {
      MutexLock lock(s.mu);
      std::string error;
      const State::Step step = s.enter(Call::kSync, error);
      if (step == State::Step::kFail) {
        if (!s.failed_sync_keeps) State::drop_unsynced(*inode_);
        fail("sync", path_, error);
      }
      if (step != State::Step::kRun) return;
      State::make_durable(*inode_);
      latency = s.sync_latency;
    }
    if (latency.count() > 0) std::this_thread::sleep_for(latency);
  }

  void truncate(std::uint64_t size) override {
    State& s = *state_;
    MutexLock lock(s.mu);
    std::string error;
    const State::Step step = s.enter(Call::kTruncate, error);
    if (step == State::Step::kFail) fail("truncate", path_, error);
    if (step != State::Step::kRun) return;
    if (size > inode_->content.size()) fail("truncate", path_, std::errc::invalid_argument);
    cut_to(*inode_, size);
  }

 private:
  const std::shared_ptr<State> state_;
  const std::string path_;
  const std::shared_ptr<Inode> inode_;
};

std::unique_ptr<MappedFile> SimFileSystem::map(const std::string& path) {
  State& s = *state_;
  const std::string p = normalize(path);
  MutexLock lock(s.mu);
  std::shared_ptr<Inode> inode;
  if (const auto it = s.current.find(p); it != s.current.end()) {
    inode = it->second;
  } else {
    std::string error;
    const State::Step step = s.enter(Call::kOpen, error);
    if (step == State::Step::kFail) fail("map", p, error);
    inode = std::make_shared<Inode>();
    // A dead process's file is never made (and nothing is checked: its calls return
    // normally); it gets an inode no name leads to.
    if (step == State::Step::kRun) {
      s.check_creatable("map", p);
      s.current.emplace(p, inode);
    }
  }
  inode->mapped = true;
  return std::make_unique<Mapped>(state_, p, std::move(inode));
}

std::unique_ptr<FileLock> SimFileSystem::try_lock(const std::string& path) {
  State& s = *state_;
  const std::string p = normalize(path);
  MutexLock lock(s.mu);
  if (!s.file(p)) {
    s.check_creatable("try_lock", p);
    if (!s.crashed) s.current.emplace(p, std::make_shared<Inode>());
  }
  if (!s.locked.insert(p).second) return nullptr;
  return std::make_unique<HeldLock>(state_, p, s.lock_epoch);
}

std::uint64_t SimFileSystem::points() const {
  MutexLock lock(state_->mu);
  return state_->next_point;
}

std::uint64_t SimFileSystem::store_points() const {
  MutexLock lock(state_->mu);
  return state_->stores;
}

void SimFileSystem::crash_at(std::uint64_t point) {
  MutexLock lock(state_->mu);
  // A point already passed would never fire and silently make a crash test vacuous.
  if (point < state_->next_point) {
    throw std::invalid_argument("crash_at: point " + std::to_string(point) + " has passed");
  }
  state_->crash_point = point;
}

void SimFileSystem::die() {
  MutexLock lock(state_->mu);
  state_->crash_point.reset();
  state_->crashed = true;
}

bool SimFileSystem::crashed() const {
  MutexLock lock(state_->mu);
  return state_->crashed;
}

void SimFileSystem::crash(const CrashOptions& options) {
  State& s = *state_;
  MutexLock lock(s.mu);
  std::mt19937_64 rng(options.seed);
  Entries survivors = options.lose_unsynced_entries ? s.durable : s.current;
  // A file removed without sync_dir may come back where a directory has been made since;
  // directories are durable at once, so the directory wins.
  for (const auto& dir : s.dirs) survivors.erase(dir);
  // Each inode once, even if two names share it; path order keeps the draws replayable.
  std::set<const Inode*> torn;
  for (const auto& [path, inode] : survivors) {
    if (torn.insert(inode.get()).second) State::tear(*inode, rng, options);
  }
  s.current = survivors;
  s.durable = std::move(survivors);
  s.crashed = false;
  s.crash_point.reset();
  s.locked.clear();
  ++s.lock_epoch;
}

void SimFileSystem::flip_bit(const std::string& path, std::uint64_t byte, int bit) {
  State& s = *state_;
  const std::string p = normalize(path);
  MutexLock lock(s.mu);
  std::string& content = s.existing_file("flip_bit", p).content;
  if (byte >= content.size() || bit < 0 || bit > 7) {
    fail("flip_bit", p,
         "byte " + std::to_string(byte) + " bit " + std::to_string(bit) +
             " is out of range (size " + std::to_string(content.size()) + ")");
  }
  content[byte] = static_cast<char>(static_cast<unsigned char>(content[byte]) ^ (1u << bit));
}

void SimFileSystem::fail_at(std::uint64_t point, std::string error) {
  MutexLock lock(state_->mu);
  if (point < state_->next_point) {
    throw std::invalid_argument("fail_at: point " + std::to_string(point) + " has passed");
  }
  state_->failures[point] = std::move(error);
}

void SimFileSystem::fail_next(Call call, std::uint64_t nth, std::errc error) {
  if (nth == 0) throw std::invalid_argument("fail_next: nth counts from 1 (the next call)");
  if (call == Call::kStore) throw std::invalid_argument("fail_next: a store cannot fail");
  MutexLock lock(state_->mu);
  state_->armed.push_back({call, nth, error});
}

void SimFileSystem::disarm_failures() {
  MutexLock lock(state_->mu);
  state_->failures.clear();
  state_->armed.clear();
}

std::uint64_t SimFileSystem::failures_fired() const {
  MutexLock lock(state_->mu);
  return state_->fired;
}

void SimFileSystem::set_failed_sync_keeps(bool keeps) {
  MutexLock lock(state_->mu);
  state_->failed_sync_keeps = keeps;
}

void SimFileSystem::zero_range(const std::string& path, std::uint64_t position,
                               std::uint64_t length) {
  State& s = *state_;
  const std::string p = normalize(path);
  MutexLock lock(s.mu);
  std::string& content = s.existing_file("zero_range", p).content;
  if (position >= content.size()) return;
  const std::uint64_t n = std::min<std::uint64_t>(length, content.size() - position);
  std::fill_n(content.begin() + static_cast<std::ptrdiff_t>(position), n, '\0');
}

void SimFileSystem::cut(const std::string& path, std::uint64_t size) {
  State& s = *state_;
  const std::string p = normalize(path);
  MutexLock lock(s.mu);
  Inode& inode = s.existing_file("cut", p);
  if (size > inode.content.size()) fail("cut", p, std::errc::invalid_argument);
  cut_to(inode, size);
}

void SimFileSystem::lose(const std::string& path) {
  State& s = *state_;
  const std::string p = normalize(path);
  MutexLock lock(s.mu);
  s.existing_file("lose", p);
  s.current.erase(p);
  s.durable.erase(p);
}

std::vector<std::string> SimFileSystem::files() const {
  const State& s = *state_;
  MutexLock lock(s.mu);
  std::set<std::string> paths;
  for (const auto& entry : s.current) paths.insert(entry.first);
  for (const auto& entry : s.durable) paths.insert(entry.first);
  return {paths.begin(), paths.end()};
}

std::string SimFileSystem::describe() const {
  const State& s = *state_;
  MutexLock lock(s.mu);
  std::set<std::string> paths;
  for (const auto& entry : s.current) paths.insert(entry.first);
  for (const auto& entry : s.durable) paths.insert(entry.first);
  std::string out;
  for (const auto& path : paths) {
    const auto now = s.current.find(path);
    const auto kept = s.durable.find(path);
    const Inode& inode = now != s.current.end() ? *now->second : *kept->second;
    std::string entry = "durable";
    if (now == s.current.end()) {
      entry = "removed, not durable";
    } else if (kept == s.durable.end()) {
      entry = "not durable";
    } else if (kept->second != now->second) {
      entry = "durable for another file";
    }
    out += path + " size=" + std::to_string(inode.content.size()) +
           " synced=" + std::to_string(inode.synced) + " entry=" + entry + "\n";
  }
  return out;
}

}  // namespace broker::sim
