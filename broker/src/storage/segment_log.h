// A topic's log on disk: segment files of framed records, rolled by size (SPEC R18).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "broker/file_system.h"
#include "broker/message.h"
#include "broker/storage_options.h"
#include "recovery_plan.h"
#include "sync/sync.h"
#include "syncer.h"

namespace broker::storage {

/// The segment files of one topic, "<dir>/<base offset, 20 digits>.seg". append and
/// drop_below are called under the owning TopicLog's lock, which orders them; sync may
/// run at the same time from any thread (path_mu_ is a leaf under that lock).
class SegmentLog {
 public:
  /// What reading the segments back found.
  struct Loaded {
    std::vector<MessagePtr> messages;  // contiguous offsets
    Offset end = 0;                    // one past the last record (a segment's base if empty)
  };
  /// Reads every segment of dir. Cuts it would make (torn tail; in repair mode a corrupt
  /// record and everything after) go to plan, not to disk. Throws CorruptLog (a damaged
  /// record before the tail, offsets out of sequence), UnsupportedFormat, IoError.
  static Loaded load(FileSystem& fs, const std::string& dir, bool repair, RecoveryPlan& plan);

  /// A log continuing at `end` in dir (which exists), after the cuts of load were applied.
  SegmentLog(std::shared_ptr<FileSystem> fs, std::string dir, std::uint64_t segment_bytes,
             Offset end);
  /// A clean close: syncs what was written (errors are dropped: the policy's promise holds).
  ~SegmentLog();
  SegmentLog(const SegmentLog&) = delete;
  SegmentLog& operator=(const SegmentLog&) = delete;

  /// Writes m's record, rolling to a new segment first when the active one is full (the
  /// old one is synced and the new one's entry made durable: only the newest segment can
  /// have a torn tail). Throws IoError; then the file is cut back (nothing appended).
  void append(const Message& m);
  /// Removes the oldest segments that hold only offsets below oldest.
  void drop_below(Offset oldest);
  /// Group commit of the active segment (its sync is fdatasync of that file).
  Syncer& syncer() { return syncer_; }

 private:
  void sync_active() EXCLUDES(path_mu_);
  void start_segment(Offset base);

  struct Segment {
    Offset base;
    std::string path;
  };
  const std::shared_ptr<FileSystem> fs_;
  const std::string dir_;
  const std::uint64_t segment_bytes_;
  std::deque<Segment> segments_;  // ordered by base; the last is active
  std::uint64_t active_size_ = 0;
  Offset next_ = 0;
  sync::Mutex path_mu_;
  std::string active_path_ GUARDED_BY(path_mu_);
  Syncer syncer_;
};

/// "<dir>/<base as 20 digits>.seg".
std::string segment_path(const std::string& dir, Offset base);
/// Encodes a message as a segment record body, and back (false if malformed).
std::string encode_message(const Message& m);
bool decode_message(std::string_view body, Message& out);

}  // namespace broker::storage
