// The real file system behind broker::FileSystem: plain POSIX calls, one cached append
// descriptor per written file, and every failure turned into an IoError naming the path.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "broker/errors.h"
#include "broker/file_system.h"
#include "sync/os_mutex.h"

namespace broker {
namespace {

// An OS mutex, not sync::Mutex, in both builds of the library: nothing under these locks
// can switch fibers (only system calls run there), and a fiber mutex would make every file
// operation a scheduling point of the fiber tests.
using Mutex = sync::OsMutex;
using Lock = sync::OsMutexLock;

// "append /x/y: No space left on device". std::error_code, unlike strerror, is thread-safe.
[[noreturn]] void fail(std::string_view op, const std::string& path, int error) {
  throw IoError(std::string(op) + " " + path + ": " +
                std::error_code(error, std::generic_category()).message());
}

// Owns one file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    // The only close that can lose data is of a written file, and every byte the broker
    // counts on has been through fdatasync first, which reports the error; so ignore it.
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

// Opens path, retrying on EINTR; throws IoError("op path: ...") on failure.
Fd open_or_throw(std::string_view op, const std::string& path, int flags, mode_t mode = 0) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) fail(op, path, errno);
  return Fd(fd);
}

// A cached append descriptor. Its own mutex keeps one append's bytes together even when
// write() returns short, without making appends to different files wait for each other.
struct AppendFile {
  explicit AppendFile(Fd f) : fd(std::move(f)) {}
  const Fd fd;
  Mutex write_mu;
};

// An flock held on an open descriptor; closing the descriptor releases it.
class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(Fd fd) : fd_(std::move(fd)) {}

 private:
  Fd fd_;
};

// A shared mapping of one file (MappedFile). The mapping reserves address space beyond
// the file's end, so extending the file rarely moves it; stores below size() never touch
// an unreserved block: extend allocates the blocks (fallocate), so a full disk is an
// IoError there rather than a SIGBUS at a store.
class PosixMappedFile final : public MappedFile {
 public:
  PosixMappedFile(std::string path, Fd fd, std::uint64_t size)
      : path_(std::move(path)), fd_(std::move(fd)), size_(size) {
    if (size_ > 0) remap(size_);
  }
  ~PosixMappedFile() override {
    if (base_ != nullptr) ::munmap(base_, mapped_);
  }
  PosixMappedFile(const PosixMappedFile&) = delete;
  PosixMappedFile& operator=(const PosixMappedFile&) = delete;

  [[nodiscard]] std::uint64_t size() const override { return size_; }

  void extend(std::uint64_t size) override {
    if (size <= size_) return;
    // What was stored so far starts on its way to the disk (no wait): a sync, at a roll or
    // by the policy, then finds little left to write. The pages below the last one are
    // unmapped first (their dirt stays in the page cache, and a store that comes back faults
    // them in again), so writing them back write-protects no mapped page: one TLB flush for
    // the range instead of one interrupt of every CPU per page.
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t done = size_ / page * page;
    if (done > page) (void)::madvise(base_, done - page, MADV_DONTNEED);
    (void)::sync_file_range(fd_.get(), 0, static_cast<off_t>(size_), SYNC_FILE_RANGE_WRITE);
    int rc;
    do {
      rc = ::fallocate(fd_.get(), 0, static_cast<off_t>(size_), static_cast<off_t>(size - size_));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0 && (errno == EOPNOTSUPP || errno == ENOSYS)) {
      // A file system without fallocate (FUSE without the call): a sparse extension,
      // where a full disk could only show at write-back, which sync then reports.
      do {
        rc = ::ftruncate(fd_.get(), static_cast<off_t>(size));
      } while (rc != 0 && errno == EINTR);
    }
    if (rc != 0) fail("extend", path_, errno);
    if (size > mapped_) remap(size);
    // The new pages' faults in one call, not one trap per page at the stores that reach
    // them (a kernel without MADV_POPULATE_WRITE leaves them to those traps).
    (void)::madvise(base_ + done, size - done, MADV_POPULATE_WRITE);
    size_ = size;
  }

  void store(std::uint64_t position, std::string_view bytes) override {
    std::memcpy(base_ + position, bytes.data(), bytes.size());
  }

  void sync() override {
    int rc;
    do {
      rc = ::fdatasync(fd_.get());
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) fail("sync", path_, errno);
  }

  void truncate(std::uint64_t size) override {
    if (size > size_) fail("truncate", path_, EINVAL);
    int rc;
    do {
      rc = ::ftruncate(fd_.get(), static_cast<off_t>(size));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) fail("truncate", path_, errno);
    size_ = size;
  }

 private:
  // Maps at least `size` bytes: twice what was mapped, so appends move the mapping
  // a logarithmic number of times.
  void remap(std::uint64_t size) {
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    std::uint64_t want = std::max<std::uint64_t>(size, 2 * mapped_);
    want = (want + page - 1) / page * page;
    void* at = base_ == nullptr
                   ? ::mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(), 0)
                   : ::mremap(base_, mapped_, want, MREMAP_MAYMOVE);
    if (at == MAP_FAILED) fail("map", path_, errno);
    base_ = static_cast<char*>(at);
    mapped_ = want;
  }

  const std::string path_;
  const Fd fd_;
  std::uint64_t size_;
  char* base_ = nullptr;
  std::uint64_t mapped_ = 0;
};

/// The POSIX file system. Safe for concurrent use; its mutex guards only the descriptor
/// cache and is held for no blocking call except the namespace changes that must agree
/// with the cache (rename, remove, truncate).
class PosixFileSystem final : public FileSystem {
 public:
  void create_directories(const std::string& dir) override {
    // Each prefix in turn, like mkdir -p; one that already exists must be a directory.
    for (std::size_t end = dir.find('/', 1);; end = dir.find('/', end + 1)) {
      const std::string prefix = dir.substr(0, end);
      if (!prefix.empty() && ::mkdir(prefix.c_str(), 0755) != 0) {
        const int error = errno;
        struct stat st;
        if (error != EEXIST) fail("create_directories", prefix, error);
        if (::stat(prefix.c_str(), &st) != 0) fail("create_directories", prefix, errno);
        if (!S_ISDIR(st.st_mode)) fail("create_directories", prefix, ENOTDIR);
      }
      if (end == std::string::npos) break;
    }
  }

  std::vector<std::string> list(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) {
      if (errno == ENOENT) return {};
      fail("list", dir, errno);
    }
    const std::unique_ptr<DIR, int (*)(DIR*)> closer(d, ::closedir);
    std::vector<std::string> names;
    for (;;) {
      errno = 0;  // readdir returns null both at the end and on error; errno tells which
      const dirent* entry = ::readdir(d);
      if (entry == nullptr) {
        if (errno != 0) fail("list", dir, errno);
        break;
      }
      const std::string_view name = entry->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  bool exists(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) return true;
    if (errno == ENOENT || errno == ENOTDIR) return false;
    fail("exists", path, errno);
  }

  std::uint64_t size(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) fail("size", path, errno);
    return static_cast<std::uint64_t>(st.st_size);
  }

  std::string read(const std::string& path, std::uint64_t position, std::size_t length) override {
    const Fd fd = open_or_throw("read", path, O_RDONLY);
    std::string bytes(length, '\0');
    std::size_t done = 0;
    while (done < length) {
      const ssize_t n = ::pread(fd.get(), bytes.data() + done, length - done,
                                static_cast<off_t>(position + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("read", path, errno);
      if (n == 0) break;  // end of file
      done += static_cast<std::size_t>(n);
    }
    bytes.resize(done);
    return bytes;
  }

  void append(const std::string& path, std::string_view bytes) override {
    const std::shared_ptr<AppendFile> file = append_file(path);
    Lock lock(file->write_mu);
    while (!bytes.empty()) {
      const ssize_t n = ::write(file->fd.get(), bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("append", path, errno);
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  void sync(const std::string& path) override {
    // fdatasync flushes the file, not the descriptor, so any descriptor will do; the
    // cached one saves an open. Both run outside the cache mutex: syncs are slow.
    std::shared_ptr<AppendFile> cached;
    {
      Lock lock(mu_);
      if (const auto it = files_.find(path); it != files_.end()) cached = it->second;
    }
    if (cached) {
      sync_fd(cached->fd.get(), "sync", path, false);
    } else {
      const Fd fd = open_or_throw("sync", path, O_RDONLY);
      sync_fd(fd.get(), "sync", path, false);
    }
  }

  void sync_dir(const std::string& dir) override {
    const Fd fd = open_or_throw("sync_dir", dir, O_RDONLY | O_DIRECTORY);
    sync_fd(fd.get(), "sync_dir", dir, true);
  }

  void rename(const std::string& from, const std::string& to) override {
    // Under the cache mutex, so no append can cache a descriptor of the old `to` (or reuse
    // one of `from`, which would now write into `to`) between the rename and the drop.
    Lock lock(mu_);
    if (::rename(from.c_str(), to.c_str()) != 0) fail("rename", from + " -> " + to, errno);
    files_.erase(from);
    files_.erase(to);
  }

  void remove(const std::string& path) override {
    Lock lock(mu_);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) fail("remove", path, errno);
    files_.erase(path);
  }

  void truncate(const std::string& path, std::uint64_t size) override {
    Lock lock(mu_);
    const Fd fd = open_or_throw("truncate", path, O_WRONLY);
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) fail("truncate", path, errno);
    // The contract only cuts; growing would add zeros a reader could take for records.
    if (size > static_cast<std::uint64_t>(st.st_size)) fail("truncate", path, EINVAL);
    int rc;
    do {
      rc = ::ftruncate(fd.get(), static_cast<off_t>(size));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) fail("truncate", path, errno);
    files_.erase(path);
  }

  std::unique_ptr<MappedFile> map(const std::string& path) override {
    Fd fd = open_or_throw("map", path, O_RDWR | O_CREAT, 0644);
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) fail("map", path, errno);
    return std::make_unique<PosixMappedFile>(path, std::move(fd),
                                             static_cast<std::uint64_t>(st.st_size));
  }

  std::unique_ptr<FileLock> try_lock(const std::string& path) override {
    // A new open file description each time: flock conflicts between descriptions, so a
    // second try_lock in this process is refused just like one from another process.
    Fd fd = open_or_throw("try_lock", path, O_RDWR | O_CREAT, 0644);
    int rc;
    do {
      rc = ::flock(fd.get(), LOCK_EX | LOCK_NB);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      if (errno == EWOULDBLOCK) return nullptr;
      fail("try_lock", path, errno);
    }
    return std::make_unique<PosixFileLock>(std::move(fd));
  }

 private:
  // The cached append descriptor of path, opened (and the file created) if there is none.
  std::shared_ptr<AppendFile> append_file(const std::string& path) EXCLUDES(mu_) {
    Lock lock(mu_);
    auto& slot = files_[path];
    if (!slot) {
      try {
        slot = std::make_shared<AppendFile>(
            open_or_throw("append", path, O_WRONLY | O_APPEND | O_CREAT, 0644));
      } catch (...) {
        files_.erase(path);  // no empty slot left behind
        throw;
      }
    }
    return slot;
  }

  static void sync_fd(int fd, std::string_view op, const std::string& path, bool whole) {
    int rc;
    do {
      rc = whole ? ::fsync(fd) : ::fdatasync(fd);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) fail(op, path, errno);
  }

  Mutex mu_;
  // Shared, so a remove or rename can drop an entry while an append or sync still uses
  // the descriptor: it closes when the last user lets go, never under a running call.
  std::map<std::string, std::shared_ptr<AppendFile>> files_ GUARDED_BY(mu_);
};

}  // namespace

std::shared_ptr<FileSystem> posix_file_system() {
  // One per caller (a broker's store): its descriptor cache dies with it, so a journal that
  // another process compacted since (renamed over) is opened afresh, never appended to
  // through a descriptor of the replaced file, and no descriptor outlives its broker.
  return std::make_shared<PosixFileSystem>();
}

}  // namespace broker
