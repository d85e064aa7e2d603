// lazy_fs BACKING MOUNTPOINT: a FUSE file system over the directory BACKING that keeps every
// file's writes in memory until the file is synced (fsync, fdatasync, or a write through a
// file opened O_SYNC/O_DSYNC), the idea of Jepsen's LazyFS. On command it drops them, as a
// power cut drops a page cache: the fault "lost unsynced writes" (conformance/lazy_fs.h).
//
// The control file MOUNTPOINT/.lazyfs (not listed, not in BACKING): writing "drop" forgets
// every unsynced byte of every file; "writeback" writes them all to BACKING, as a kernel's
// flusher does in time; "fail EIO" (or "fail ENOSPC") makes every later write and fsync of
// a file fail with that error, changing nothing, as a failing disk does, until "heal";
// "fail-sync EIO" fails only the fsyncs (and writes through an O_SYNC file, after taking
// them): the writes stay unsynced, as pages a failed writeback left in the cache do; both
// fail directory fsyncs too (names are applied at once, never lazily);
// reading it gives the counters, a "name value" line each: fsyncs, writes, pending_bytes,
// pending_files, drops, dropped_bytes, failed (the calls failed on command).
//
// What is lost and what is not: only file data written since the file's last sync. Names
// (create, rename, unlink, mkdir) and sizes set by truncate reach BACKING at once, and
// BACKING's own page cache stands for the disk (the process that serves it is the one that
// dies, not the kernel). Reads see the unsynced bytes over the synced ones. Runs in the
// foreground, one request at a time, with no attribute caching. The kernel's page cache
// above it is kept, since a shared writable mapping needs it (the broker maps its segments),
// but dropped at every open (no keep_cache), so nothing it drops is served from a cache to a
// reopened file; a killed process's dirty mapped pages reach it as writes when its mappings
// close, and stay unsynced like any write. SIGTERM unmounts.
#define FUSE_USE_VERSION 31

#include <dirent.h>
#include <fcntl.h>
#include <fuse.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "conformance/unsynced_writes.h"

namespace {

constexpr const char* kControl = "/.lazyfs";

// One open file: the backing descriptor and how it was opened.
struct Handle {
  int fd = -1;
  ino_t ino = 0;
  bool append = false;  // O_APPEND: every write goes at the file's end as a reader sees it
  bool sync = false;    // O_SYNC / O_DSYNC: every write is synced before it returns
  bool control = false;
  std::string text;  // the control file's contents as it was opened
};

struct Counters {
  unsigned long long fsyncs = 0, writes = 0, drops = 0, dropped_bytes = 0, failed = 0;
};

int g_root = -1;          // BACKING, opened as a directory
std::string g_root_path;  // BACKING's path
std::map<ino_t, conformance::UnsyncedWrites> g_files;
Counters g_counters;
int g_failing = 0;       // the errno every write and fsync fails with, 0 when the disk is well
int g_sync_failing = 0;  // the errno only fsyncs fail with ("fail-sync"), 0 when they work

const char* rel(const char* path) { return path[1] == '\0' ? "." : path + 1; }

Handle* handle_of(fuse_file_info* fi) { return reinterpret_cast<Handle*>(fi->fh); }

std::uint64_t disk_size(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

// Writes the file's unsynced bytes to BACKING; 0 or -errno.
int flush_file(const Handle& h) {
  auto it = g_files.find(h.ino);
  if (it == g_files.end()) return 0;
  // fsync through a read-only descriptor syncs what others wrote: write through one of our
  // own that may write (the same file, reopened).
  int fd = h.fd;
  int own = -1;
  if ((::fcntl(h.fd, F_GETFL) & O_ACCMODE) == O_RDONLY) {
    own = ::open(("/proc/self/fd/" + std::to_string(h.fd)).c_str(), O_WRONLY | O_CLOEXEC);
    if (own < 0) return -errno;
    fd = own;
  }
  int err = 0;
  it->second.flush([&](std::uint64_t offset, const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size() && err == 0) {
      const ssize_t n =
          ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
      if (n < 0)
        err = -errno;
      else
        done += static_cast<std::size_t>(n);
    }
  });
  if (own >= 0) ::close(own);
  g_files.erase(it);
  return err;
}

// Writes every file's unsynced bytes to BACKING (found by walking it for their inodes); 0
// or the first -errno. Files left unsynced have no name left: they are forgotten.
int write_back() {
  int err = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(g_root_path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator() && !g_files.empty();
       it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (!g_files.contains(st.st_ino)) continue;
    Handle h;
    h.ino = st.st_ino;
    h.fd = ::open(it->path().c_str(), O_WRONLY | O_CLOEXEC);
    if (h.fd < 0) {
      err = err != 0 ? err : -errno;
      continue;
    }
    const int rc = flush_file(h);
    err = err != 0 ? err : rc;
    ::close(h.fd);
  }
  g_files.clear();
  return ec ? -ec.value() : err;
}

std::string counters_text() {
  unsigned long long pending = 0, files = 0;
  for (const auto& [ino, writes] : g_files) {
    pending += writes.pending();
    files += writes.empty() ? 0 : 1;
  }
  char out[512];
  std::snprintf(out, sizeof out,
                "fsyncs %llu\nwrites %llu\npending_bytes %llu\npending_files %llu\ndrops "
                "%llu\ndropped_bytes %llu\nfailed %llu\n",
                g_counters.fsyncs, g_counters.writes, pending, files, g_counters.drops,
                g_counters.dropped_bytes, g_counters.failed);
  return out;
}

// The file at path (not followed) is about to lose its last name: its unsynced bytes go
// with it (its inode number may be handed to a new file).
void forget_if_last_name(const char* path) {
  struct stat st {};
  if (::fstatat(g_root, rel(path), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
      st.st_nlink <= 1) {
    g_files.erase(st.st_ino);
  }
}

void* lazy_init(fuse_conn_info*, fuse_config* cfg) {
  cfg->direct_io = 0;  // mappings need the page cache (see the top)
  cfg->kernel_cache = 0;
  cfg->attr_timeout = 0;
  cfg->entry_timeout = 0;
  cfg->negative_timeout = 0;
  cfg->hard_remove = 1;
  return nullptr;
}

int lazy_getattr(const char* path, struct stat* st, fuse_file_info* fi) {
  if (std::strcmp(path, kControl) == 0) {
    *st = {};
    st->st_mode = S_IFREG | 0600;
    st->st_nlink = 1;
    return 0;
  }
  const int rc = fi != nullptr && handle_of(fi) != nullptr && !handle_of(fi)->control
                     ? ::fstat(handle_of(fi)->fd, st)
                     : ::fstatat(g_root, rel(path), st, AT_SYMLINK_NOFOLLOW);
  if (rc != 0) return -errno;
  if (S_ISREG(st->st_mode)) {
    auto it = g_files.find(st->st_ino);
    if (it != g_files.end()) {
      st->st_size =
          static_cast<off_t>(it->second.size_over(static_cast<std::uint64_t>(st->st_size)));
    }
  }
  return 0;
}

int open_handle(const char* path, int flags, mode_t mode, bool create, fuse_file_info* fi) {
  auto h = new Handle;
  if (std::strcmp(path, kControl) == 0) {
    h->control = true;
    h->text = counters_text();
    fi->direct_io = 1;  // its size is unknown to stat: no page cache may stand for it
    fi->fh = reinterpret_cast<std::uint64_t>(h);
    return 0;
  }
  h->append = (flags & O_APPEND) != 0;
  h->sync = (flags & (O_SYNC | O_DSYNC)) != 0;
  // The backing file gets neither: pwrite on an O_APPEND descriptor ignores its offset.
  const int backing_flags = (flags & ~(O_APPEND | O_DIRECT)) | O_CLOEXEC;
  h->fd = create ? ::openat(g_root, rel(path), backing_flags | O_CREAT, mode)
                 : ::openat(g_root, rel(path), backing_flags);
  if (h->fd < 0) {
    const int err = errno;
    delete h;
    return -err;
  }
  struct stat st {};
  ::fstat(h->fd, &st);
  h->ino = st.st_ino;
  // A new file (its inode number may be an old one's) or one cut to nothing.
  if (create || (flags & O_TRUNC) != 0) g_files.erase(h->ino);
  fi->fh = reinterpret_cast<std::uint64_t>(h);
  return 0;
}

int lazy_open(const char* path, fuse_file_info* fi) {
  return open_handle(path, fi->flags, 0, false, fi);
}

int lazy_create(const char* path, mode_t mode, fuse_file_info* fi) {
  return open_handle(path, fi->flags, mode, true, fi);
}

int lazy_read(const char*, char* buf, size_t size, off_t off, fuse_file_info* fi) {
  Handle& h = *handle_of(fi);
  std::string bytes;
  if (h.control) {
    if (static_cast<std::size_t>(off) < h.text.size()) bytes = h.text.substr(off, size);
  } else {
    auto disk = [&](std::uint64_t offset, std::size_t n, char* out) -> std::size_t {
      std::size_t done = 0;
      while (done < n) {
        const ssize_t got = ::pread(h.fd, out + done, n - done, static_cast<off_t>(offset + done));
        if (got <= 0) break;
        done += static_cast<std::size_t>(got);
      }
      return done;
    };
    auto it = g_files.find(h.ino);
    bytes = it != g_files.end()
                ? it->second.read(off, size, disk_size(h.fd), disk)
                : conformance::UnsyncedWrites().read(off, size, disk_size(h.fd), disk);
  }
  std::memcpy(buf, bytes.data(), bytes.size());
  return static_cast<int>(bytes.size());
}

int lazy_write(const char*, const char* buf, size_t size, off_t off, fuse_file_info* fi) {
  Handle& h = *handle_of(fi);
  if (h.control) {
    std::string command(buf, size);
    if (!command.empty() && command.back() == '\n') command.pop_back();
    if (command == "writeback") {
      const int err = write_back();
      return err != 0 ? err : static_cast<int>(size);
    }
    if (command == "fail EIO" || command == "fail ENOSPC") {
      g_failing = command == "fail EIO" ? EIO : ENOSPC;
      return static_cast<int>(size);
    }
    if (command == "fail-sync EIO") {
      g_sync_failing = EIO;
      return static_cast<int>(size);
    }
    if (command == "heal") {
      g_failing = 0;
      g_sync_failing = 0;
      return static_cast<int>(size);
    }
    if (command != "drop") return -EINVAL;
    for (auto& [ino, writes] : g_files) g_counters.dropped_bytes += writes.drop();
    g_files.clear();
    ++g_counters.drops;
    return static_cast<int>(size);
  }
  if (g_failing != 0) {
    ++g_counters.failed;
    return -g_failing;
  }
  ++g_counters.writes;
  conformance::UnsyncedWrites& writes = g_files[h.ino];
  const std::uint64_t at =
      h.append ? writes.size_over(disk_size(h.fd)) : static_cast<std::uint64_t>(off);
  writes.write(at, std::string(buf, size));
  if (h.sync && g_sync_failing != 0) {  // taken, not synced: the sync half of the call failed
    ++g_counters.failed;
    return -g_sync_failing;
  }
  if (h.sync) {
    if (const int err = flush_file(h); err != 0) return err;
    if (::fdatasync(h.fd) != 0) return -errno;
  }
  return static_cast<int>(size);
}

int lazy_fsync(const char*, int datasync, fuse_file_info* fi) {
  Handle& h = *handle_of(fi);
  if (h.control) return 0;
  if (g_failing != 0 || g_sync_failing != 0) {
    ++g_counters.failed;
    return -(g_failing != 0 ? g_failing : g_sync_failing);
  }
  ++g_counters.fsyncs;
  if (const int err = flush_file(h); err != 0) return err;
  return (datasync != 0 ? ::fdatasync(h.fd) : ::fsync(h.fd)) == 0 ? 0 : -errno;
}

int lazy_release(const char*, fuse_file_info* fi) {
  Handle* h = handle_of(fi);
  if (h->fd >= 0) ::close(h->fd);
  delete h;  // the unsynced bytes stay: a closed file is not a synced one
  return 0;
}

int lazy_truncate(const char* path, off_t size, fuse_file_info* fi) {
  struct stat st {};
  int rc = 0;
  if (fi != nullptr && handle_of(fi) != nullptr && !handle_of(fi)->control) {
    rc = ::ftruncate(handle_of(fi)->fd, size);
    ::fstat(handle_of(fi)->fd, &st);
  } else {
    const int fd = ::openat(g_root, rel(path), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    rc = ::ftruncate(fd, size);
    ::fstat(fd, &st);
    ::close(fd);
  }
  if (rc != 0) return -errno;
  auto it = g_files.find(st.st_ino);
  if (it != g_files.end()) it->second.truncate(static_cast<std::uint64_t>(size));
  return 0;
}

int lazy_unlink(const char* path) {
  forget_if_last_name(path);
  return ::unlinkat(g_root, rel(path), 0) == 0 ? 0 : -errno;
}

int lazy_rename(const char* from, const char* to, unsigned int flags) {
  if ((flags & RENAME_EXCHANGE) == 0) forget_if_last_name(to);
  return ::renameat2(g_root, rel(from), g_root, rel(to), flags) == 0 ? 0 : -errno;
}

int lazy_mkdir(const char* path, mode_t mode) {
  return ::mkdirat(g_root, rel(path), mode) == 0 ? 0 : -errno;
}

int lazy_rmdir(const char* path) {
  return ::unlinkat(g_root, rel(path), AT_REMOVEDIR) == 0 ? 0 : -errno;
}

int lazy_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t, fuse_file_info*,
                 fuse_readdir_flags) {
  const int fd = ::openat(g_root, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    const int err = errno;
    ::close(fd);
    return -err;
  }
  while (dirent* e = ::readdir(dir)) {
    if (fill(buf, e->d_name, nullptr, 0, static_cast<fuse_fill_dir_flags>(0)) != 0) break;
  }
  ::closedir(dir);
  return 0;
}

int lazy_chmod(const char* path, mode_t mode, fuse_file_info*) {
  return ::fchmodat(g_root, rel(path), mode, 0) == 0 ? 0 : -errno;
}

int lazy_chown(const char* path, uid_t uid, gid_t gid, fuse_file_info*) {
  return ::fchownat(g_root, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

int lazy_utimens(const char* path, const struct timespec tv[2], fuse_file_info*) {
  return ::utimensat(g_root, rel(path), tv, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

int lazy_statfs(const char*, struct statvfs* st) {
  return ::fstatvfs(g_root, st) == 0 ? 0 : -errno;
}

int lazy_access(const char* path, int mask) {
  if (std::strcmp(path, kControl) == 0) return 0;
  return ::faccessat(g_root, rel(path), mask, 0) == 0 ? 0 : -errno;
}

// Names are applied at once (nothing to sync), but a failing disk fails a directory's fsync
// as it fails a file's.
int lazy_fsyncdir(const char*, int, fuse_file_info*) {
  if (g_failing != 0 || g_sync_failing != 0) {
    ++g_counters.failed;
    return -(g_failing != 0 ? g_failing : g_sync_failing);
  }
  return 0;
}

int lazy_symlink(const char* target, const char* path) {
  return ::symlinkat(target, g_root, rel(path)) == 0 ? 0 : -errno;
}

int lazy_readlink(const char* path, char* buf, size_t size) {
  const ssize_t n = ::readlinkat(g_root, rel(path), buf, size - 1);
  if (n < 0) return -errno;
  buf[n] = '\0';
  return 0;
}

int lazy_link(const char* from, const char* to) {
  return ::linkat(g_root, rel(from), g_root, rel(to), 0) == 0 ? 0 : -errno;
}

}  // namespace

constexpr const char* kHelp =
    "usage: lazy_fs BACKING MOUNTPOINT\n"
    "       lazy_fs --help\n"
    "\n"
    "Mounts a FUSE file system at MOUNTPOINT over the directory BACKING that keeps each\n"
    "file's writes in memory until the file is synced, and runs in the foreground until\n"
    "SIGTERM (which unmounts). Its control file MOUNTPOINT/.lazyfs takes \"drop\" (a power\n"
    "cut: every unsynced byte is forgotten), \"writeback\" (every unsynced byte written\n"
    "to BACKING), \"fail EIO\" or \"fail ENOSPC\" (every later write and fsync fails with\n"
    "that error and changes nothing), \"fail-sync EIO\" (only fsyncs fail; writes stay\n"
    "unsynced) and \"heal\"; reading it gives the counters, a\n"
    "\"name value\" line each: fsyncs, writes, pending_bytes, pending_files, drops,\n"
    "dropped_bytes, failed. Needs /dev/fuse (and root or fusermount3). No options, no\n"
    "defaults.\n"
    "\n"
    "Exit status:\n"
    "  0      unmounted cleanly (or --help)\n"
    "  2      bad usage, or BACKING cannot be opened\n"
    "  other  libfuse's own code for a mount or session that failed (its message on\n"
    "         stderr)\n";

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: lazy_fs BACKING MOUNTPOINT (lazy_fs --help says more)\n");
    return 2;
  }
  g_root_path = argv[1];
  g_root = ::open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (g_root < 0) {
    std::fprintf(stderr, "lazy_fs: cannot open %s: %s\n", argv[1], std::strerror(errno));
    return 2;
  }
  fuse_operations ops{};
  ops.init = lazy_init;
  ops.getattr = lazy_getattr;
  ops.open = lazy_open;
  ops.create = lazy_create;
  ops.read = lazy_read;
  ops.write = lazy_write;
  ops.fsync = lazy_fsync;
  ops.release = lazy_release;
  ops.truncate = lazy_truncate;
  ops.unlink = lazy_unlink;
  ops.rename = lazy_rename;
  ops.mkdir = lazy_mkdir;
  ops.rmdir = lazy_rmdir;
  ops.readdir = lazy_readdir;
  ops.chmod = lazy_chmod;
  ops.chown = lazy_chown;
  ops.utimens = lazy_utimens;
  ops.statfs = lazy_statfs;
  ops.access = lazy_access;
  ops.fsyncdir = lazy_fsyncdir;
  ops.symlink = lazy_symlink;
  ops.readlink = lazy_readlink;
  ops.link = lazy_link;
  std::vector<std::string> args = {argv[0], argv[2], "-f", "-s", "-o", "fsname=lazy_fs"};
  std::vector<char*> fuse_argv;
  for (std::string& a : args) fuse_argv.push_back(a.data());
  return fuse_main(static_cast<int>(fuse_argv.size()), fuse_argv.data(), &ops, nullptr);
}
