// A topic's append-only log with absolute offsets and bounded retention.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "broker/message.h"
#include "broker/options.h"
#include "broker/storage_options.h"
#include "sync/sync.h"

namespace broker::storage {
class SegmentLog;
}

namespace broker {

/// The messages of one topic. Thread-safe; its mutex is a leaf (nothing is locked under it
/// but the wait it offers and, for a durable topic, the segment log's writes). Readers get
/// MessagePtr copies, so dropping old messages never frees memory a holder still uses.
/// A durable topic keeps the messages published since it opened in memory; the ones a
/// restart found stay in their segments and are read back on demand (SPEC R18).
class TopicLog {
 public:
  explicit TopicLog(TopicOptions options) : options_(options) {}
  /// A durable log: `disk` continues at `end` after the records it holds, whose payload
  /// sizes are `on_disk` (contiguous, ending at end), which retention trims again. Under
  /// FsyncPolicy::always a message becomes readable only once its record is durable, so no
  /// reader sees what a crash could take back (R19).
  TopicLog(TopicOptions options, std::shared_ptr<storage::SegmentLog> disk, FsyncPolicy policy,
           const std::vector<std::uint32_t>& on_disk, Offset end);

  /// Appends and returns the new message's offset; drops the oldest beyond the bound. A
  /// durable topic writes its record first (and under `always` returns once it is synced).
  /// Throws IoError (nothing appended if the write failed; if the sync failed the message
  /// may still become readable with a later sync).
  Offset append(std::string payload, Headers headers, std::string key, Time now) EXCLUDES(mu_);
  /// The message at offset, or null if it is not kept (dropped, or not yet published). A
  /// message a restart found is read from its segment, under mu_ (so retention cannot
  /// remove the file meanwhile): throws IoError, or CorruptLog if the file changed.
  [[nodiscard]] MessagePtr read(Offset offset) const EXCLUDES(mu_);
  /// First kept offset.
  [[nodiscard]] Offset oldest() const EXCLUDES(mu_);
  /// One past the newest offset.
  [[nodiscard]] Offset end() const EXCLUDES(mu_);
  /// SPEC R28: the lowest kept offset published at or after time (end() if none). Reads
  /// each kept message in the worst case; throws as read does.
  [[nodiscard]] Offset offset_for_time(Time time) const EXCLUDES(mu_);
  /// Waits (real time) until end() > seen or timeout; returns whether it grew.
  bool wait_for_growth(Offset seen, Millis timeout) EXCLUDES(mu_);

 private:
  void trim() REQUIRES(mu_);

  const TopicOptions options_;
  const std::shared_ptr<storage::SegmentLog> disk_;  // null: in memory only
  const bool wait_durable_ = false;                  // FsyncPolicy::always
  mutable sync::Mutex mu_;
  sync::CondVar grown_;
  struct Kept {
    MessagePtr message;  // null: in its segment only (found by a restart)
    std::size_t size;    // payload bytes, for retention
  };
  std::deque<Kept> kept_ GUARDED_BY(mu_);  // kept_[i] has offset base_ + i
  Offset base_ GUARDED_BY(mu_) = 0;
  std::size_t bytes_ GUARDED_BY(mu_) = 0;
  std::size_t waiters_ GUARDED_BY(mu_) = 0;
  Offset visible_ GUARDED_BY(mu_) = 0;  // offsets below are readable (all, unless durable)
};

}  // namespace broker
