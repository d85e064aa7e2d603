// An operating-system mutex whatever the sync back-end: for code that must never be a
// scheduling point of the fiber tests (the file systems: a file operation is one step).
#pragma once

#include <mutex>

#include "sync/thread_annotations.h"

namespace broker::sync {

/// std::mutex with the capability annotations clang's -Wthread-safety checks. Nothing may
/// block on a fiber primitive while holding it.
class CAPABILITY("mutex") OsMutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

/// Holds an OsMutex for one scope.
class SCOPED_CAPABILITY OsMutexLock {
 public:
  explicit OsMutexLock(OsMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~OsMutexLock() RELEASE() { mu_.unlock(); }
  OsMutexLock(const OsMutexLock&) = delete;
  OsMutexLock& operator=(const OsMutexLock&) = delete;

 private:
  OsMutex& mu_;
};

}  // namespace broker::sync
