// The fault "lost unsynced writes": a server's data directory on a lazy file system
// (conformance/tools/lazy_fs.cpp) that keeps each file's writes in memory until the file is
// synced and drops them on command, as a power cut drops a page cache.
#pragma once

#include <cstdint>
#include <string>

#include "conformance/local_process.h"

namespace conformance {

/// Why a lazy file system cannot be mounted on this machine, in one line ("" if it can):
/// no /dev/fuse, not root, or no lazy_fs binary. Throws nothing.
std::string lazy_fs_unavailable();

/// The lazy file system's counters since it was mounted: fsyncs (and fdatasyncs) and
/// writes it served, bytes and files unsynced now, drops made and bytes they dropped.
struct LazyFsCounters {
  std::uint64_t fsyncs = 0, writes = 0, pending_bytes = 0, pending_files = 0;
  std::uint64_t drops = 0, dropped_bytes = 0;
  std::uint64_t failed = 0;  // writes and fsyncs failed by fail()
};

/// One lazy file system: `lazy_fs DIR/backing DIR/mnt` in a fresh temporary directory, in
/// its own process group, waited for (at most ~10 s) until it serves. The binary is
/// $LAZY_FS_BIN if set, else lazy_fs beside the running program, else the one this build
/// made. Throws TargetFailure with one line (lazy_fs_unavailable(), or the mount failing
/// with its log's last line). The destructor unmounts it (SIGTERM, else a lazy unmount) and
/// removes the directory; if the tool is killed, the process's watchdog does. Not
/// thread-safe.
class LazyFs {
 public:
  LazyFs();
  ~LazyFs();
  LazyFs(const LazyFs&) = delete;
  LazyFs& operator=(const LazyFs&) = delete;

  /// The mount point: the directory to give a server as its data directory.
  [[nodiscard]] const std::string& path() const { return mount_; }
  /// Forgets every write not yet synced, in every file (the server using it must be down:
  /// a power cut). Returns the bytes dropped. Throws TargetFailure if it does not answer.
  std::uint64_t drop_unsynced();
  /// Writes every unsynced byte to the disk, as a kernel's flusher does in time (a file the
  /// server created long ago is on the disk, synced or not). Throws TargetFailure if it
  /// does not answer.
  void write_back();
  /// From now on every write and fsync of a file (and every directory's fsync) fails with
  /// `error` (EIO or ENOSPC) and changes nothing, as a failing or full disk does, until
  /// heal(). Throws
  /// std::invalid_argument for another error, TargetFailure if it does not answer.
  void fail(int error);
  /// From now on every fsync of a file or directory (and every write through a file opened
  /// O_SYNC, after it was taken) fails with EIO, while plain writes succeed and stay unsynced, as
  /// pages a failed writeback left in the page cache: a power cut still drops them. Until heal().
  /// Throws TargetFailure if it does not answer.
  void fail_syncs();
  /// Writes and fsyncs succeed again (after fail or fail_syncs). Throws TargetFailure if it does
  /// not answer.
  void heal();
  /// The counters now. Throws TargetFailure if it does not answer.
  [[nodiscard]] LazyFsCounters counters() const;

 private:
  void unmount();

  std::string dir_;
  std::string mount_;
  LocalProcess process_;
};

}  // namespace conformance
