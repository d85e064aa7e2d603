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

/// The segment files of one topic, "<dir>/<base offset, 20 digits>.seg". append, read and
/// drop_below are called under the owning TopicLog's lock, which orders them; sync may
/// run at the same time from any thread (path_mu_ is a leaf under that lock).
class SegmentLog {
 public:
  /// A sparse offset index entry: the record of `offset` starts at byte `position`.
  struct IndexEntry {
    Offset offset;
    std::uint64_t position;
  };
  /// One segment file. Its index has an entry for the first record read back at or after
  /// every kIndexBytes of the file (records appended since the open stay in memory, so
  /// they are never looked up).
  struct Segment {
    Offset base;
    std::string path;
    std::vector<IndexEntry> index;
  };
  /// What reading the segments back found: the segments that stay once the plan's cuts
  /// are applied, and the payload size of each record they hold (offsets end - sizes.size()
  /// up to end), for retention; the records themselves stay on disk.
  struct Loaded {
    std::deque<Segment> segments;
    std::vector<std::uint32_t> sizes;
    Offset end = 0;  // one past the last record (a segment's base if empty)
  };
  static constexpr std::uint64_t kIndexBytes = 4096;

  /// Reads every segment of dir, checking each record's checksums and offset. Cuts it
  /// would make (torn tail; in repair mode a corrupt record and everything after) go to
  /// plan, not to disk. Throws
  /// CorruptLog (a damaged record before the tail, offsets out of sequence), UnsupportedFormat,
  /// IoError.
  static Loaded load(FileSystem& fs, const std::string& dir, bool repair, RecoveryPlan& plan);

  /// A log continuing at `end` in dir (which exists) after the cuts of load were applied;
  /// `segments` are what load found (none for a new topic). Syncs the newest segment and dir:
  /// what was read back may never have been synced, and is offered from now on (R19).
  /// Throws IoError.
  SegmentLog(std::shared_ptr<FileSystem> fs, std::string dir, std::uint64_t segment_bytes,
             std::deque<Segment> segments, Offset end);
  /// A clean close: cuts the active segment to its records and syncs it (errors are
  /// dropped: the policy's promise holds).
  ~SegmentLog();
  SegmentLog(const SegmentLog&) = delete;
  SegmentLog& operator=(const SegmentLog&) = delete;

  /// Stores m's record into the active segment's mapping (no system call, except to extend
  /// the file by a step now and then), rolling to a new segment first when the active one
  /// is full (the old one is cut to its records and synced, and the new one's entry made
  /// durable: only the newest segment can end in pages a power cut lost). Throws IoError
  /// (a full disk when extending, a failed roll); then nothing was stored.
  void append(const Message& m);
  /// The record of offset, read back through the index (offset is one load found and
  /// retention kept). Throws IoError, or CorruptLog if the file changed since it was read.
  MessagePtr read(Offset offset);
  /// Removes the oldest segments that hold only offsets below oldest.
  void drop_below(Offset oldest);
  /// Group commit of the active segment (its sync is fdatasync of that file).
  Syncer& syncer() { return syncer_; }
  /// The topic is deleted and its files are about to go: no sync from now on (a sync of a
  /// removed file would fail the store, R33), the destructor's neither.
  void discard() EXCLUDES(path_mu_);

 private:
  void sync_active() EXCLUDES(path_mu_);
  /// Whether discard() was called.
  bool discarded() EXCLUDES(path_mu_);
  void start_segment(Offset base);
  /// Maps the active segment (path, active_size_ bytes of records) for writing.
  void open_active(const std::string& path);
  /// Makes the read cache hold bytes [position, position + length) of path, if the file
  /// has them.
  std::string_view cached(const std::string& path, std::uint64_t position, std::size_t length);

  const std::shared_ptr<FileSystem> fs_;
  const std::string dir_;
  const std::uint64_t segment_bytes_;
  std::deque<Segment> segments_;         // ordered by base; the last is active
  std::uint64_t active_size_ = 0;        // bytes of records (the file may be longer: zeros)
  std::shared_ptr<MappedFile> writing_;  // the active segment; the writer's (no lock)
  std::string framed_;                   // the record being stored (its memory reused)
  Offset next_ = 0;
  // The last piece read(): consumers read recovered records in order, mostly from here.
  std::string cache_path_;
  std::uint64_t cache_start_ = 0;
  std::string cache_;
  sync::Mutex path_mu_;
  std::shared_ptr<MappedFile> active_ GUARDED_BY(path_mu_);  // writing_, for the syncer
  Syncer syncer_;
};

/// "<dir>/<base as 20 digits>.seg".
std::string segment_path(const std::string& dir, Offset base);
/// A message's segment record body (its record: the same bytes in memory and on disk), and
/// back (null if malformed).
std::string encode_message(const Message& m);
MessagePtr decode_message(std::string_view body);
/// What recovery needs of a record body without decoding it: its offset and payload size
/// (false where decode_message would be).
bool peek_message(std::string_view body, Offset& offset, std::uint32_t& payload_size);

}  // namespace broker::storage
