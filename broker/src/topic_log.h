// A topic's append-only log with absolute offsets and bounded retention.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "broker/message.h"
#include "broker/options.h"
#include "broker/storage_options.h"
#include "message_segment.h"
#include "sync/sync.h"

namespace broker::storage {
class SegmentLog;
}

namespace broker {

/// The messages of one topic. Thread-safe; its lock is a leaf (nothing is locked under it
/// but the spare segments' leaf lock and, for a durable topic, the segment log's writes;
/// wait_for_growth sleeps on a mutex of its own). Messages live
/// in MessageSegments (records of up to kMaxBytes each, one reference count each); readers
/// get MessagePtr copies that share their segment's count, so dropping old messages never frees
/// memory a holder still uses, and retention frees a segment once all of its messages are dropped
/// and nobody holds one. A reader with a LogCursor reads without the lock (read_at).
/// A durable topic keeps the messages published since it opened in memory; the ones a
/// restart found stay in their files and are read back on demand (SPEC R18).
class TopicLog {
 public:
  explicit TopicLog(TopicOptions options) : options_(options) {}
  /// A durable log: `disk` continues at `end` after the records it holds, whose payload
  /// sizes are `on_disk` (contiguous, ending at end), which retention trims again. Under
  /// FsyncPolicy::always a message becomes readable only once its record is durable, so no
  /// reader sees what a crash could take back (R19).
  TopicLog(TopicOptions options, std::shared_ptr<storage::SegmentLog> disk, FsyncPolicy policy,
           const std::vector<std::uint32_t>& on_disk, Offset end);

  /// What an append did: the new message's offset, and whether a consumer was registered
  /// as a sleeper (add_sleeper) when the message became readable (the caller must wake it).
  struct Appended {
    Offset offset = 0;
    bool sleepers = false;
  };
  /// Appends the new message; drops the oldest beyond the bound. A durable topic writes its
  /// record first (and under `always` returns once it is synced). Throws IoError (nothing appended
  /// if the write failed; if the sync failed the message may still become readable with a later
  /// sync), or std::bad_alloc (nothing appended).
  Appended append(std::string_view payload, const Headers& headers, std::string_view key, Time now)
      EXCLUDES(mu_);
  /// The message at offset, or null if it is not kept (dropped, or not yet published). A
  /// message a restart found is read from its segment, under mu_ (so retention cannot
  /// remove the file meanwhile): throws IoError, or CorruptLog if the file changed.
  /// A deleted durable topic: its segment log syncs nothing from now on (its files go).
  void discard_disk();
  [[nodiscard]] MessagePtr read(Offset offset) const EXCLUDES(mu_);
  /// read(offset) for a reader that goes forward: lock-free when offset is in the segment
  /// `cursor` holds or in one linked after it (the common case: a subscription's cursor),
  /// else read() under mu_, which moves cursor to offset's segment. Throws as read().
  [[nodiscard]] MessagePtr read_at(LogCursor& cursor, Offset offset) const EXCLUDES(mu_);
  /// read_at(cursor, offset) for an offset the reader saw kept: at or past oldest() and
  /// below end() as it read them, in that order (end first), some time before. No look at
  /// either (publishers write their cache line at every append): a reader going through
  /// what it saw reads it as of when it looked. Null if it is not kept (only a read under
  /// mu_ finds that out). Throws as read().
  [[nodiscard]] MessagePtr read_seen(LogCursor& cursor, Offset offset) const EXCLUDES(mu_);
  /// Whether retention may drop messages (a bound in messages or bytes): without one,
  /// oldest() stays where construction left it.
  [[nodiscard]] bool bounded() const {
    return options_.retention_messages > 0 || options_.retention_bytes > 0;
  }
  /// First kept offset. Lock-free (acquire): a reader that sees it also sees the drop.
  [[nodiscard]] Offset oldest() const { return oldest_.load(std::memory_order_acquire); }
  /// One past the newest readable offset. Lock-free (acquire): every offset below it that
  /// is still kept is readable, its record written (the writer's release).
  [[nodiscard]] Offset end() const { return end_.load(std::memory_order_acquire); }
  /// A consumer that may sleep until the log grows registers first, and gets the end as of
  /// its registration: a consumer that finds the end it saw unchanged may sleep, since every
  /// later publish finds it registered (append's `sleepers`). Locks mu_ (both sides decide
  /// under it, so one of the two always sees the other). Unregister once awake.
  [[nodiscard]] Offset add_sleeper() EXCLUDES(mu_) {
    sync::SpinLockHold lock(mu_);
    // Relaxed: ordered by mu_ against appends; remove_sleeper runs without it.
    sleepers_.fetch_add(1, std::memory_order_relaxed);
    return std::max(visible_, base_);
  }
  /// Undoes one add_sleeper. Lock-free. Relaxed: a consumer unregisters only once awake, and
  /// registers again (under mu_) before it sleeps again, so a publish that no longer sees it
  /// is seen by that registration's look at the end.
  void remove_sleeper() { sleepers_.fetch_sub(1, std::memory_order_relaxed); }
  /// SPEC R28: the lowest kept offset published at or after time (end() if none). Reads
  /// each kept message in the worst case; throws as read does.
  [[nodiscard]] Offset offset_for_time(Time time) const EXCLUDES(mu_);
  /// How many wake_waiters calls came so far; read it before the look that a
  /// wait_for_growth follows. Locks wait_mu_.
  [[nodiscard]] std::uint64_t wakes() const EXCLUDES(wait_mu_);
  /// Waits (real time) until end() > seen, a wake_waiters call after wakes() returned
  /// `wakes`, or timeout (or a spurious wake: callers look again). Locks wait_mu_, then mu_
  /// briefly.
  void wait_for_growth(Offset seen, std::uint64_t wakes, Millis timeout) EXCLUDES(mu_, wait_mu_);
  /// Wakes every wait_for_growth: a poll may find a message that did not come by an append
  /// (a hand-back, a freed place). Locks wait_mu_; a futex wake only if one sleeps.
  void wake_waiters() EXCLUDES(wait_mu_);

 private:
  void trim() REQUIRES(mu_);
  /// Removes the segment files retention emptied (durable topics; errors are the store's).
  void drop_segments() REQUIRES(mu_);
  /// The in-memory message at offset (base_ <= offset < next_, offset >= in_memory_from_),
  /// sharing its segment's count; its segment in *segment if given.
  MessagePtr locate(Offset offset, std::shared_ptr<const MessageSegment>* segment) const
      REQUIRES(mu_);
  /// The payload bytes of the kept message at offset (what retention by bytes counts).
  std::size_t payload_size(Offset offset) const REQUIRES(mu_);
  /// Called under mu_ after base_ or visible_ changed: mirrors them for the lock-free
  /// readers. Release: a reader that acquires the new end finds the records below it written
  /// (and next() set), and one that acquires the new oldest sees those drops.
  void publish_bounds() REQUIRES(mu_);

  const TopicOptions options_;
  const std::shared_ptr<storage::SegmentLog> disk_;  // null: in memory only
  const bool wait_durable_ = false;                  // FsyncPolicy::always
  // Offsets below are a restart's: in their files only (durable topics).
  const Offset in_memory_from_ = 0;
  // Full-size buffers of freed segments, for the next ones (a bounded log recycles them).
  const std::shared_ptr<MessageSegment::Spares> spares_ =
      std::make_shared<MessageSegment::Spares>();
  // A spin lock: its release is a plain store, so an append does not wait for its stores to
  // reach the consumers' cores (sync::SpinLock). Held for a few stores only, except a
  // durable log's write and a read of a restart's record from its file.
  mutable sync::SpinLock mu_;
  // wait_for_growth's sleep: a waiter holds it from its look at the end to its wait; an
  // append that counted it (after mu_, never under it) and wake_waiters take it to notify.
  mutable sync::Mutex wait_mu_;
  sync::CondVar grown_;
  std::uint64_t wakes_ GUARDED_BY(wait_mu_) = 0;  // wake_waiters calls so far
  // The segments holding [max(base_, in_memory_from_), next_), each starting where the one
  // before ends; a segment leaves once all of it is below base_.
  std::deque<std::shared_ptr<MessageSegment>> segments_ GUARDED_BY(mu_);
  // Payload bytes of the kept offsets below in_memory_from_ (a restart's, on disk only),
  // the last one's at in_memory_from_ - 1; retention by bytes counts them.
  std::deque<std::uint32_t> disk_sizes_ GUARDED_BY(mu_);
  Offset base_ GUARDED_BY(mu_) = 0;
  Offset next_ GUARDED_BY(mu_) = 0;  // the offset the next append gets
  // Payload bytes kept; up to date only under a bound in bytes, its one reader.
  std::size_t bytes_ GUARDED_BY(mu_) = 0;
  std::size_t waiters_ GUARDED_BY(mu_) = 0;
  Offset visible_ GUARDED_BY(mu_) = 0;  // offsets below are readable (all, unless durable)
  // base_ and max(visible_, base_), written under mu_ only, read without it. A cache line of
  // their own (the last members, so the class's alignment pads after them): readers poll
  // them, and must not pull the line mu_ and the deques live on away from the writer.
  alignas(64) sync::Atomic<Offset> oldest_{0};
  sync::Atomic<Offset> end_{0};
  // Consumers registered by add_sleeper (incremented under mu_, decremented without). On
  // end_'s line: publishers read it at every append, consumers write it only around a sleep.
  sync::Atomic<std::int64_t> sleepers_{0};
};

}  // namespace broker
