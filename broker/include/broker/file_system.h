// The only door from a durable broker to its files (SPEC R18-R21): a small path-based
// interface with the real POSIX implementation here and a simulated one (simfs/) that
// keeps durable and not-yet-durable bytes apart and can crash at any write or sync.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace broker {

/// Held while it lives: an exclusive lock on one path (released by the destructor).
class FileLock {
 public:
  virtual ~FileLock() = default;
};

/// One file written through a shared memory mapping (segment files, SPEC R18): a store is in
/// the page cache the moment it is made, with no system call, so a killed process loses none
/// of it. A power cut keeps what sync made durable, plus any subset of the other pages the
/// stores dirtied, each as it was after some of them (a page is written back whole or not at
/// all, at any time). Bytes the file was extended by and nobody stored read as zeros.
/// One writer; sync may run on another thread at the same time.
class MappedFile {
 public:
  virtual ~MappedFile() = default;
  /// The file's size in bytes.
  [[nodiscard]] virtual std::uint64_t size() const = 0;
  /// Extends the file with zeros to at least `size` bytes, its blocks reserved so that no
  /// later store can meet a full disk (never shrinks). Throws IoError (ENOSPC: unchanged).
  virtual void extend(std::uint64_t size) = 0;
  /// Copies bytes to `position` (position + bytes.size() <= size()). Throws IoError only
  /// where the implementation refuses writes after a failure (StickyFileSystem).
  virtual void store(std::uint64_t position, std::string_view bytes) = 0;
  /// Makes every stored byte and the size durable (fdatasync). Throws IoError.
  virtual void sync() = 0;
  /// Cuts the file to size bytes (size <= size()). Throws IoError.
  virtual void truncate(std::uint64_t size) = 0;
};

/// Paths are plain strings joined with '/'. Every call may throw IoError (naming the path
/// and the system error). Appended bytes and new, renamed or removed directory entries are
/// durable only after sync (the file) and sync_dir (its directory); reads see them at once.
/// Implementations are safe for concurrent use from any number of threads.
class FileSystem {
 public:
  virtual ~FileSystem() = default;
  /// Creates dir and its missing parents (directories themselves count as durable at once).
  virtual void create_directories(const std::string& dir) = 0;
  /// The names (not paths) of the entries of dir, sorted; empty if dir does not exist.
  virtual std::vector<std::string> list(const std::string& dir) = 0;
  /// Whether path names a file or directory.
  virtual bool exists(const std::string& path) = 0;
  /// The size of a file in bytes. Throws IoError if it is missing.
  virtual std::uint64_t size(const std::string& path) = 0;
  /// Up to length bytes from position (fewer at the end). Throws IoError if it is missing.
  virtual std::string read(const std::string& path, std::uint64_t position, std::size_t length) = 0;
  /// Appends bytes at the end, creating the file if missing.
  virtual void append(const std::string& path, std::string_view bytes) = 0;
  /// Makes the file's bytes durable (fdatasync).
  virtual void sync(const std::string& path) = 0;
  /// Makes dir's entries (files created, renamed or removed in it) durable.
  virtual void sync_dir(const std::string& dir) = 0;
  /// Atomically replaces `to` (if it exists) with `from`.
  virtual void rename(const std::string& from, const std::string& to) = 0;
  /// Removes a file; does nothing if it is missing.
  virtual void remove(const std::string& path) = 0;
  /// Cuts a file to size bytes (size <= its size).
  virtual void truncate(const std::string& path, std::uint64_t size) = 0;
  /// Opens path for writing through a mapping (MappedFile), creating it if missing; its
  /// bytes stay readable through read(). Throws IoError.
  virtual std::unique_ptr<MappedFile> map(const std::string& path) = 0;
  /// An exclusive lock on path (the file is created if missing), held by the returned
  /// object; null if another holder (in this or another process) has it.
  virtual std::unique_ptr<FileLock> try_lock(const std::string& path) = 0;
};

/// The real file system: POSIX calls, fdatasync for sync, fsync of the directory for
/// sync_dir, flock for try_lock. Keeps one append descriptor per file it writes.
std::shared_ptr<FileSystem> posix_file_system();

/// CRC-32C (Castagnoli) of bytes, continuing from crc (0 to start): SSE4.2 when the CPU
/// has it, a table otherwise; both give the same value.
std::uint32_t crc32c(std::string_view bytes, std::uint32_t crc = 0) noexcept;

}  // namespace broker
