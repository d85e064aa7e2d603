// Where a durable broker keeps its topics, when it syncs them, and what recovery found
// (SPEC R18-R21).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "broker/file_system.h"
#include "broker/message.h"

namespace broker {

/// When written records are made durable (fdatasync). Stated in SPEC R19.
struct FsyncPolicy {
  enum class Kind { kAlways, kInterval, kNone };
  Kind kind = Kind::kAlways;
  Millis interval{0};  // kInterval only: the longest a written record waits for its sync

  /// The call returns after its record is durable; concurrent callers share one sync.
  static FsyncPolicy always() { return {}; }
  /// A background flusher syncs written records at least every `ms` (real time).
  static FsyncPolicy every(Millis ms) { return {Kind::kInterval, ms}; }
  /// The operating system decides; only a clean close (the destructor) syncs.
  static FsyncPolicy none() { return {Kind::kNone, Millis{0}}; }
  bool operator==(const FsyncPolicy&) const = default;
};

/// A broker that keeps its topics, subscriptions, positions and dead letters in a
/// directory and rebuilds them when it is opened again (BrokerOptions::with_storage).
struct StorageOptions {
  std::string directory;
  /// The file system to use; null means the real one (posix_file_system()).
  std::shared_ptr<FileSystem> file_system;
  FsyncPolicy publish_sync = FsyncPolicy::always();  // segment records (publish)
  FsyncPolicy commit_sync = FsyncPolicy::always();   // position commits (ack, handler true)
  std::uint64_t segment_bytes = 64ull << 20;  // a segment is rolled once it reaches this size
  std::uint64_t journal_compact_bytes = 8ull << 20;  // the journal is rewritten beyond this
  /// Recovery drops a corrupt record and everything after it (and says so in the report)
  /// instead of throwing CorruptLog.
  bool repair = false;
};

/// One cut recovery made to a file: a torn tail, or (repair mode) a corrupt record and all
/// that followed it.
struct Truncation {
  std::string file;
  std::uint64_t position = 0;  // byte position of the first byte dropped
  std::uint64_t bytes = 0;     // bytes dropped from this file (the whole file if removed)
  std::string reason;          // "torn tail", "corrupt record", "after corrupt record"
  /// Segments: the offsets dropped, [first_offset, end_offset) (both 0 if none).
  Offset first_offset = 0;
  Offset end_offset = 0;
  bool operator==(const Truncation&) const = default;
};

/// Prints it as `Truncation{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const Truncation& v);

/// What opening a storage directory found and changed.
struct RecoveryReport {
  bool created = false;  // the directory was new or empty
  std::vector<Truncation> truncations;
  std::uint64_t topics = 0;
  std::uint64_t subscriptions = 0;
  std::uint64_t messages = 0;  // records read back from the segments
};

/// Prints it as `RecoveryReport{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const RecoveryReport& v);

}  // namespace broker
