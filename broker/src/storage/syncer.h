// Group commit: many writers of one file share one sync (SPEC R19 `always`).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <utility>

#include "sync/sync.h"

namespace broker::storage {

/// Numbers the writes of one file and makes them durable with as few syncs as possible:
/// wait(t) returns once a sync that began after write t has finished. The first waiter
/// becomes the leader and syncs (outside the lock) for every write made so far; later
/// waiters whose write that sync covers return with it. Its mutex is a leaf.
class Syncer {
 public:
  explicit Syncer(std::function<void()> sync) : sync_(std::move(sync)) {}

  /// Records a write that has completed; returns its ticket. Callers order their writes
  /// (and so their tickets) under their own lock.
  std::uint64_t wrote() EXCLUDES(mu_) {
    sync::MutexLock lock(mu_);
    return ++written_;
  }
  /// Returns once ticket is durable. Throws IoError from the sync (to the leader; the
  /// others try again with a new leader).
  void wait(std::uint64_t ticket) EXCLUDES(mu_) {
    sync::MutexLock lock(mu_);
    while (durable_ < ticket) {
      if (leading_) {
        done_.wait(mu_);
        continue;
      }
      lead();
    }
  }
  /// Syncs whatever was written and is not durable yet (the interval flusher, close).
  void flush() EXCLUDES(mu_) {
    sync::MutexLock lock(mu_);
    while (leading_) done_.wait(mu_);
    if (durable_ < written_) lead();
  }
  /// How many syncs ran (benchmarks show group commit with it).
  std::uint64_t syncs() EXCLUDES(mu_) {
    sync::MutexLock lock(mu_);
    return syncs_;
  }

 private:
  void lead() REQUIRES(mu_) {
    leading_ = true;
    // A short gather: the writers the previous sync released are about to write again;
    // yielding while more records arrive lets them share this sync instead of the next one
    // (eight publishers: about eight records per sync, not four). Alone, it costs two yields.
    for (int i = 0, quiet = 0; i < kGather && quiet < 2; ++i) {
      const std::uint64_t seen = written_;
      mu_.unlock();
      sync::yield_now();
      mu_.lock();
      quiet = written_ == seen ? quiet + 1 : 0;
    }
    const std::uint64_t target = written_;
    std::exception_ptr failed;
    mu_.unlock();  // the sync is slow: writers go on meanwhile
    try {
      sync_();
    } catch (...) {
      failed = std::current_exception();
    }
    mu_.lock();
    leading_ = false;
    done_.notify_all();
    if (failed) std::rethrow_exception(failed);
    if (target > durable_) durable_ = target;
    ++syncs_;
  }

  static constexpr int kGather = 16;  // yields at most, before a sync

  const std::function<void()> sync_;
  sync::Mutex mu_;
  sync::CondVar done_;
  std::uint64_t written_ GUARDED_BY(mu_) = 0;
  std::uint64_t durable_ GUARDED_BY(mu_) = 0;
  std::uint64_t syncs_ GUARDED_BY(mu_) = 0;
  bool leading_ GUARDED_BY(mu_) = false;
};

}  // namespace broker::storage
