// What a file system keeps of one file between its fsyncs: the bytes written since the last
// sync, over the file as the disk holds it. A power cut loses them; a sync makes them the
// disk's. The lazy file system (conformance/tools/lazy_fs.cpp) keeps one per file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace conformance {

/// One file's writes not yet synced, as extents over the synced file (the disk's bytes,
/// which the caller keeps and hands in). Newer writes replace older ones where they
/// overlap. Not thread-safe. Throws only std::bad_alloc.
class UnsyncedWrites {
 public:
  /// Reads the disk's bytes [offset, offset + size) into out; returns how many it read.
  using DiskRead = std::function<std::size_t(std::uint64_t offset, std::size_t size, char* out)>;
  /// Writes bytes to the disk at offset (the caller syncs the disk after flush()).
  using DiskWrite = std::function<void(std::uint64_t offset, const std::string& bytes)>;

  /// Keeps bytes written at offset (not on the disk yet).
  void write(std::uint64_t offset, const std::string& bytes);
  /// The file as a reader sees it: up to size bytes from offset of the disk's bytes with
  /// the unsynced ones over them (zeros in a gap), ending at size_over(disk_size).
  [[nodiscard]] std::string read(std::uint64_t offset, std::size_t size, std::uint64_t disk_size,
                                 const DiskRead& disk) const;
  /// The file's size as a reader sees it, over a disk file of disk_size bytes.
  [[nodiscard]] std::uint64_t size_over(std::uint64_t disk_size) const;
  /// The file was cut or grown to size (at once, on the disk too): unsynced bytes at or past
  /// size are gone.
  void truncate(std::uint64_t size);
  /// Writes every unsynced byte to the disk, oldest place first, and forgets them.
  void flush(const DiskWrite& disk);
  /// Forgets every unsynced byte (a power cut); returns how many there were.
  std::uint64_t drop();
  /// How many bytes are unsynced (overlaps counted once).
  [[nodiscard]] std::uint64_t pending() const;
  [[nodiscard]] bool empty() const { return extents_.empty(); }

 private:
  // Non-overlapping extents: offset -> bytes.
  std::map<std::uint64_t, std::string> extents_;
};

}  // namespace conformance
