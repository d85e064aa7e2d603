// Group commit: many writers of one file share one sync (SPEC R19 `always`).
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <utility>

#include "sync/sync.h"

namespace broker::storage {

/// Numbers the writes of one file and makes them durable with as few syncs as possible:
/// wait(t) returns once a sync that began after write t has finished. The first waiter
/// becomes the leader, waits up to kGather for the writers the last sync released to write
/// again, and syncs (outside the lock) for every write made so far; later waiters whose
/// write that sync covers return with it. Its mutex is a leaf.
class Syncer {
 public:
  explicit Syncer(std::function<void()> sync) : sync_(std::move(sync)) {}

  /// Records a write that has completed; returns its ticket. Callers order their writes
  /// (and so their tickets) under their own lock.
  std::uint64_t wrote() EXCLUDES(mu_) {
    sync::MutexLock lock(mu_);
    ++written_;
    if (gathering_ && written_ - durable_ >= cohort_) gathered_.notify_one();
    return written_;
  }
  /// Returns once ticket is durable. Throws IoError from the sync (to the leader; the
  /// others try again with a new leader).
  void wait(std::uint64_t ticket) EXCLUDES(mu_) {
    sync::MutexLock lock(mu_);
    ++waiting_;
    while (durable_ < ticket) {
      if (leading_) {
        done_.wait(mu_);
        continue;
      }
      try {
        lead();
      } catch (...) {
        --waiting_;
        throw;
      }
    }
    --waiting_;
  }
  /// Syncs whatever was written and is not durable yet (the interval flusher, close).
  void flush() EXCLUDES(mu_) {
    sync::MutexLock lock(mu_);
    while (leading_) done_.wait(mu_);
    if (durable_ < written_) lead();
  }

 private:
  void lead() REQUIRES(mu_) {
    leading_ = true;
    // A short gather: the writers the previous sync released are about to write again;
    // waiting for them lets them share this sync instead of the next one. It waits until
    // as many writes wait for a sync as callers waited when the previous sync ended (each
    // had written; each that goes on writes again), for at most kGather: eight closed-loop
    // publishers share a sync about eight at a time, where a gather of a few yields took
    // five (writers of the file wait for its sync, then for the log's lock, one by one).
    // Writes, not waiters: a waiter the last sync released counts until it runs. A writer
    // that stopped costs one gather's wait; alone, nothing.
    if (written_ - durable_ < cohort_) {
      gathering_ = true;
      (void)gathered_.wait_for(mu_, kGather);  // a spurious wake-up only ends it early
      gathering_ = false;
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
    cohort_ = waiting_;  // the writers to gather next time (this leader among them)
    done_.notify_all();
    if (failed) std::rethrow_exception(failed);
    if (target > durable_) durable_ = target;
  }

  static constexpr std::chrono::milliseconds kGather{1};  // the longest gather

  const std::function<void()> sync_;
  sync::Mutex mu_;
  sync::CondVar done_;
  sync::CondVar gathered_;  // the leader's gather: notified by the write that completes it
  std::uint64_t written_ GUARDED_BY(mu_) = 0;
  std::uint64_t durable_ GUARDED_BY(mu_) = 0;
  bool leading_ GUARDED_BY(mu_) = false;
  std::uint64_t waiting_ GUARDED_BY(mu_) = 0;  // callers inside wait()
  std::uint64_t cohort_ GUARDED_BY(mu_) = 0;   // waiting_ when the last sync ended
  bool gathering_ GUARDED_BY(mu_) = false;
};

}  // namespace broker::storage
