// The spin lock of the sync layer, one source for both back-ends: on fibers its flag is a
// sync::Atomic, so the weak-memory exploration checks the orders written here.
#pragma once

#include <atomic>

#include "sync/atomic.h"
#include "sync/thread_annotations.h"

#if defined(BROKER_SYNC_FIBER)
#include "sync/sync_fiber.h"
#else
#include "sync/sync_std.h"
#endif

namespace broker::sync {

/// A lock for short sections that never block (a log's append: a few stores), whose release
/// does not wait. unlock() is a plain release store: a mutex's release is a read-modify-write,
/// which on x86 first drains the store buffer, so the publisher waited there for every store
/// of its section to reach the cache lines a consumer on another core reads (the end offset,
/// the record). lock() looks, and between looks waits as the back-end says
/// (spin_lock_wait: pauses, then yields; on fibers a free switch). Never throws.
class CAPABILITY("mutex") SpinLock {
 public:
  void lock() ACQUIRE() {
    // Test, then test-and-set: waiters read the line shared instead of taking it in turn.
    for (int looks = 0;; ++looks) {
      // Acquire: the section sees everything the last holder wrote before its release.
      if (!locked_.load(std::memory_order_relaxed) &&
          !locked_.exchange(true, std::memory_order_acquire)) {
        return;
      }
      spin_lock_wait(looks);
    }
  }
  // Release: the next holder sees the section's writes.
  void unlock() RELEASE() { locked_.store(false, std::memory_order_release); }

 private:
  Atomic<bool> locked_{false};
};

}  // namespace broker::sync
