// A simulated disk for crash tests: the only place that knows which bytes and directory
// entries are durable, able to die at any numbered write or sync and reboot into what a
// real disk could hold then (SPEC R18-R21).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "broker/file_system.h"

namespace broker::sim {

/// An in-memory broker::FileSystem that keeps what reads see apart from what survives a
/// power cut. Safe for concurrent use from any number of threads (one mutex; every call,
/// the test controls included, is atomic with respect to the others).
///
/// The model. A file is an inode holding `content` (what reads see) and `synced`, the
/// length of the prefix of content that is durable: appends grow content, sync makes all
/// of it durable, truncate cuts content and lowers synced to at most the new size.
/// Directory entries exist twice: the current ones (reads, list) and the durable ones;
/// sync_dir(dir) makes the current entries of dir (files created, renamed or removed in
/// it) durable. Directories themselves are durable as soon as they are created.
///
/// Mapped files (map) keep each store's replaced bytes until a sync, and a power cut
/// keeps each dirtied page as it was after any number of its stores.
///
/// Crash points. Each call of append, sync, sync_dir, rename, remove or truncate (and a
/// mapped file's extend, store, sync and truncate) is one crash point, numbered from 0 in call
/// order (including calls that throw). Once the simulated process has died (crash_at), calls pass
/// no more points until crash().
///
/// Errors. Any crash point can be made to fail instead (fail_at by number, fail_next by
/// kind). A failed call throws IoError("<op> <path>: <error>") and changes nothing, except:
/// a failed sync drops the file's unsynced bytes (Linux may mark the dirty pages clean
/// after a failed fdatasync, so a later sync reports success for bytes the disk never got:
/// PostgreSQL's "fsyncgate"), unless set_failed_sync_keeps(true); a failed append whose
/// error is ENOSPC writes the first half of its bytes (what fitted) before it throws.
///
/// Damage at rest (flip_bit, zero_range, cut, lose) changes stored bytes between a close
/// and an open, in what reads see and what survives a crash alike; none is a crash point.
///
/// Paths are normalized: repeated and trailing '/' and "." components are dropped, so
/// "d//f", "d/./f" and "d/f" name the same file. Renaming or removing directories is not
/// simulated (IoError).
class SimFileSystem final : public FileSystem {
 public:
  /// How a power cut treats what was not durable. Everything is drawn from one
  /// std::mt19937_64(seed), so the same seed after the same calls gives the same disk.
  struct CrashOptions {
    std::uint64_t seed = 0;
    /// Keep a random prefix (possibly empty, possibly all) of each file's unsynced bytes;
    /// otherwise every unsynced byte is lost.
    bool torn_tail = true;
    /// When a kept unsynced part is not empty, replace its last byte by a different one in
    /// about one crash in three (a sector half written).
    bool garbage_tail = true;
    /// Reboot into the durable directory entries; otherwise into the current ones.
    bool lose_unsynced_entries = true;
  };

  /// An empty disk holding only the directories "/" and ".".
  SimFileSystem();
  ~SimFileSystem() override;
  SimFileSystem(const SimFileSystem&) = delete;
  SimFileSystem& operator=(const SimFileSystem&) = delete;

  // broker::FileSystem. Missing files: read, size, sync, truncate and rename (from) throw
  // IoError; remove does nothing; append creates the file, whose parent directory must
  // exist (IoError otherwise, as POSIX says ENOENT).
  void create_directories(const std::string& dir) override;
  std::vector<std::string> list(const std::string& dir) override;
  bool exists(const std::string& path) override;
  std::uint64_t size(const std::string& path) override;
  std::string read(const std::string& path, std::uint64_t position, std::size_t length) override;
  void append(const std::string& path, std::string_view bytes) override;
  void sync(const std::string& path) override;
  void sync_dir(const std::string& dir) override;
  void rename(const std::string& from, const std::string& to) override;
  void remove(const std::string& path) override;
  void truncate(const std::string& path, std::uint64_t size) override;
  /// The file's inode, written by stores kept apart (MappedFile's model): a power cut
  /// (crash) keeps, for each page of 4 KiB the stores since the file's last sync dirtied,
  /// the page as it was after any number of them. Its extend, store, sync and truncate are
  /// crash points; creating the file is a kOpen point. Survives a rename or remove.
  std::unique_ptr<MappedFile> map(const std::string& path) override;
  /// A lock in an in-process table (a second try_lock of a held path gets null); creates
  /// the file if missing, like the POSIX one. The lock may outlive this object.
  std::unique_ptr<FileLock> try_lock(const std::string& path) override;

  /// The number of crash points passed so far (the number the next mutating call gets).
  [[nodiscard]] std::uint64_t points() const;

  /// How many of them were stores through a mapping (crash points that never fail).
  [[nodiscard]] std::uint64_t store_points() const;

  /// Arms a crash at `point` (replacing an armed one): when the call numbered `point`
  /// comes, the simulated process dies. An append there still adds its bytes, unsynced
  /// (so crash() may keep a torn prefix of them); any other call there is not performed.
  /// From then on every mutating call (create_directories and try_lock's file creation
  /// too) does nothing and returns normally: a dead process's writes never reach the disk.
  /// Reads see the disk as the process left it. Throws std::invalid_argument if `point`
  /// has already been passed.
  void crash_at(std::uint64_t point);

  /// The simulated process dies now, between two calls: every later mutating call does
  /// nothing and returns normally, as after an armed crash fired (and no append of it
  /// survives, torn or not). crashed() is then true until crash() reboots. Forgets an
  /// armed crash point.
  void die();

  /// Whether the armed crash has happened, or die() was called (and crash() has not been
  /// called since).
  [[nodiscard]] bool crashed() const;

  /// Power off now and reboot: every file keeps its synced prefix plus what `options`
  /// let survive of the rest, the directory entries become the durable ones (or stay the
  /// current ones), and then everything is durable. Works whether or not crash_at fired;
  /// clears the crashed flag and the armed crash point, releases every lock (a dead
  /// process holds none); points keep counting from where they were.
  void crash(const CrashOptions& options);

  /// Flips bit `bit` (0-7) of byte `byte` of a file in place, in what reads see and what
  /// survives a crash alike: bit rot in stored data. Not a crash point. Throws IoError if
  /// the file is missing or byte or bit is out of range.
  void flip_bit(const std::string& path, std::uint64_t byte, int bit);

  /// Makes the call numbered `point` fail: throw IoError("<op> <path>: <error>") having
  /// changed nothing but what the class comment says a failed sync or append leaves, e.g.
  /// error "No space left on device". Several points may be armed; each fires once.
  /// Throws std::invalid_argument if `point` has already been passed.
  void fail_at(std::uint64_t point, std::string error);

  /// The kinds of call fail_next counts. kOpen is an append that creates its file (it is
  /// not also counted as an append).
  /// kExtend, kStore, kSync and kTruncate count a mapped file's calls too; a store is a
  /// crash point that never fails (fail_next of it is refused, fail_at of its number never
  /// fires).
  enum class Call { kOpen, kAppend, kSync, kSyncDir, kRename, kRemove, kTruncate, kExtend, kStore };

  /// Makes the nth next call of kind `call` (1: the next one) fail with `error` (EIO,
  /// ENOSPC, ...), as fail_at does for a numbered point. Several may be armed; each fires
  /// once. Throws std::invalid_argument if nth is 0.
  void fail_next(Call call, std::uint64_t nth, std::errc error);

  /// Forgets every armed failure (fail_at and fail_next) that has not fired.
  void disarm_failures();

  /// How many armed failures have fired since the disk was made.
  [[nodiscard]] std::uint64_t failures_fired() const;

  /// true: a failed sync keeps the file's unsynced bytes, as a kind kernel would (a later
  /// sync may still make them durable). Default false: they are dropped.
  void set_failed_sync_keeps(bool keeps);

  /// Damage at rest: sets bytes [position, position + length) of a file to zero (a block
  /// the disk lost), clipped to its size. Throws IoError if the file is missing.
  void zero_range(const std::string& path, std::uint64_t position, std::uint64_t length);
  /// Damage at rest: cuts a file to `size` bytes (size <= its size, else IoError).
  void cut(const std::string& path, std::uint64_t size);
  /// Damage at rest: the file's name and bytes are gone (current and durable alike).
  /// Throws IoError if the file is missing.
  void lose(const std::string& path);

  /// The files, current or durable, in path order (damage tests pick from them).
  [[nodiscard]] std::vector<std::string> files() const;

  /// Makes each sync of a file return `latency` of real time after it made durable what
  /// the file held when it began (as a disk's flush takes a while): bytes appended
  /// meanwhile stay volatile. Not a crash point. Sleeps on the calling thread, so for
  /// tests on real threads, not the fiber back-end. Default: none.
  void set_sync_latency(std::chrono::microseconds latency);

  /// One line per file, current or durable, in path order, for failure reports:
  /// "<path> size=<n> synced=<n> entry=<e>", where e says what a crash would do to the
  /// name: "durable", "not durable" (created or renamed here since the last sync_dir),
  /// "durable for another file" (renamed over) or "removed, not durable".
  [[nodiscard]] std::string describe() const;

 private:
  struct State;  // defined in the .cpp
  class HeldLock;
  class Mapped;

  // Shared with the locks handed out, which may outlive this object.
  const std::shared_ptr<State> state_;
};

}  // namespace broker::sim
