// A durable broker's directory: the lock, the journal and the topics' segment logs
// (SPEC R18-R21).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "broker/file_system.h"
#include "broker/storage_options.h"
#include "commit_sink.h"
#include "saved_state.h"
#include "segment_log.h"
#include "sticky_file_system.h"
#include "sync/sync.h"
#include "syncer.h"

namespace broker::storage {

/// The storage directory of one open broker. Thread-safe. Lock order: callers may hold
/// the broker's, a topic's or a subscription's lock; mu_ is taken after them and nothing
/// is locked under it but the file system.
class Store final : public CommitSink {
 public:
  /// What the directory held.
  struct Opened {
    SavedState saved;
    std::map<std::uint64_t, SegmentLog::Loaded> logs;  // by topic id
    RecoveryReport report;
  };
  /// Opens (or creates) options.directory and reads it back; torn tails are cut and
  /// reported. Throws NotBrokerStorage, StorageLocked, UnsupportedFormat, CorruptLog and
  /// IoError; then nothing on disk has changed.
  static std::unique_ptr<Store> open(const StorageOptions& options, Opened& out);
  /// A clean close: syncs everything written.
  ~Store() override;

  [[nodiscard]] const StorageOptions& options() const { return options_; }
  /// R33: the first failed write, sync, rename or removal, if any (then the store refuses
  /// every write until it is opened again).
  [[nodiscard]] std::optional<std::string> failure() const { return fs_->failure(); }
  /// Throws IoError naming the first failure, if there was one.
  void check() const { fs_->check(); }
  [[nodiscard]] bool failed() const override { return fs_->failed(); }
  /// The segment log of topic id, continuing what open loaded of it (its segments are
  /// moved out; an empty Loaded for a new topic). Its directory is created if missing.
  /// Throws IoError.
  std::shared_ptr<SegmentLog> topic_log(std::uint64_t id, SegmentLog::Loaded& loaded) EXCLUDES(mu_);

  // Journal records. Control records are durable when the call returns (any policy).
  /// Records a new topic; returns its id (a partitioned topic's partitions get id + 1 + p).
  std::uint64_t create_topic(const std::string& name, const TopicOptions& options) EXCLUDES(mu_);
  /// Records the deletion durably. Then the caller stops its logs' syncs (SegmentLog::
  /// discard) and removes their files (remove_topic_files).
  void delete_topic(const std::string& name) EXCLUDES(mu_);
  /// Removes the segments of topic id (and those of its `partitions`). Throws IoError.
  void remove_topic_files(std::uint64_t id, std::size_t partitions = 0);
  void subscribed(const std::string& topic, const SavedSubscription& s) EXCLUDES(mu_);
  void unsubscribed(const std::string& topic, const std::string& name) EXCLUDES(mu_);

  // CommitSink
  std::uint64_t commit(const std::string& topic, const std::string& name, Offset position,
                       const std::pmr::map<Offset, int>& attempts,
                       const std::vector<DeadLetter>& dead, bool dead_rewritten,
                       bool force) override EXCLUDES(mu_);
  void wait(std::uint64_t ticket) override;

 private:
  Store(StorageOptions options, std::shared_ptr<StickyFileSystem> fs,
        std::unique_ptr<FileLock> lock, SavedState saved, std::uint64_t journal_size);
  /// Appends one record (and applies it to the mirror); compacts when the journal is large.
  std::uint64_t write(const std::string& body) REQUIRES(mu_);
  void compact() REQUIRES(mu_);
  void sync_journal();
  void flusher_loop();

  // Constant after construction.
  const StorageOptions options_;
  const std::shared_ptr<StickyFileSystem> fs_;  // every write of the store goes through it
  const std::unique_ptr<FileLock> lock_;
  const std::string journal_path_;

  sync::Mutex mu_;
  SavedState mirror_ GUARDED_BY(mu_);  // what the journal says: the next compaction's input
  std::uint64_t journal_size_ GUARDED_BY(mu_) = 0;
  std::vector<std::weak_ptr<SegmentLog>> logs_ GUARDED_BY(mu_);  // for the flusher
  Syncer journal_syncer_;

  // The interval flusher (only when a policy is FsyncPolicy::every).
  sync::Mutex flush_mu_;
  sync::CondVar flush_cv_;
  bool stopping_ GUARDED_BY(flush_mu_) = false;
  sync::Thread flusher_;
};

}  // namespace broker::storage
