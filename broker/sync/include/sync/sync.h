// The broker's only door to threads and locks. The same broker sources build against
// std primitives (default) or Boost.Fiber primitives (BROKER_SYNC_FIBER), where every
// lock, unlock, wait, notify and handler call is a scheduling point of the test's
// scheduler. Nothing else in broker/ may include <mutex>, <thread> or <condition_variable>
// (sync/os_mutex.h is the one OS mutex, for the file systems, whose calls never switch).
// Atomics of the broker's own state are sync::Atomic (sync/atomic.h): on fibers each of
// their operations is a scheduling point too.
#pragma once

#include <chrono>
#include <functional>

#include "sync/atomic.h"
#include "sync/thread_annotations.h"

#if defined(BROKER_SYNC_FIBER)
#include "sync/sync_fiber.h"
#else
#include "sync/sync_std.h"
#endif
#include "sync/spin_lock.h"

namespace broker::sync {

/// Holds a lock (a Mutex or a SpinLock) for one scope.
template <class Lock>
class SCOPED_CAPABILITY ScopedHold {
 public:
  explicit ScopedHold(Lock& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~ScopedHold() RELEASE() { mu_.unlock(); }
  ScopedHold(const ScopedHold&) = delete;
  ScopedHold& operator=(const ScopedHold&) = delete;

 private:
  Lock& mu_;
};

/// Holds a Mutex for one scope.
using MutexLock = ScopedHold<Mutex>;
/// Holds a SpinLock for one scope.
using SpinLockHold = ScopedHold<SpinLock>;

/// Releases a held Mutex for one scope (to call user code), and takes it back.
class SCOPED_CAPABILITY MutexUnlock {
 public:
  explicit MutexUnlock(Mutex& mu) RELEASE(mu) : mu_(mu) { mu_.unlock(); }
  ~MutexUnlock() ACQUIRE() { mu_.lock(); }
  MutexUnlock(const MutexUnlock&) = delete;
  MutexUnlock& operator=(const MutexUnlock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace broker::sync
