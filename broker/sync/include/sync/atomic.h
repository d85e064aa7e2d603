// The sync layer's atomic: the broker's lock-free paths (wake-up flags, stop flags, counters)
// use it instead of std::atomic, so that on the fiber back-end every load, store and
// read-modify-write is a scheduling point (the approach of Rust's loom): the fiber
// properties then explore the interleavings between atomic operations, not only those
// between locks. On the std back-end it is std::atomic and costs nothing more.
#pragma once

#include <atomic>

#if defined(BROKER_SYNC_FIBER)
#include "sync/sync_fiber.h"
#endif

namespace broker::sync {

/// std::atomic<T> with the operations the broker uses, each taking its memory order
/// explicitly (every call site says why that order suffices). On fibers each operation is
/// followed by a scheduling point ("atomic"): it takes effect where the fiber reaches it,
/// then another fiber may run, so between any two shared operations of a fiber (locks,
/// atomics) the scheduler may switch. (A point before it instead would split a call from its
/// first effect: ~Broker's stop flag would no longer take effect as the destructor begins.)
/// Outside a fiber run (a destructor at exit) there is no point. Thread-safe; never throws.
template <typename T>
class Atomic {
 public:
  constexpr Atomic() noexcept : value_(T{}) {}
  constexpr explicit Atomic(T v) noexcept : value_(v) {}
  Atomic(const Atomic&) = delete;
  Atomic& operator=(const Atomic&) = delete;

  T load(std::memory_order order) const noexcept {
    const auto r = value_.load(order);
    point();
    return r;
  }
  void store(T v, std::memory_order order) noexcept {
    value_.store(v, order);
    point();
  }
  T exchange(T v, std::memory_order order) noexcept {
    const auto r = value_.exchange(v, order);
    point();
    return r;
  }
  T fetch_add(T d, std::memory_order order) noexcept {
    const auto r = value_.fetch_add(d, order);
    point();
    return r;
  }
  T fetch_sub(T d, std::memory_order order) noexcept {
    const auto r = value_.fetch_sub(d, order);
    point();
    return r;
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order order) noexcept {
    const auto r = value_.compare_exchange_strong(expected, desired, order);
    point();
    return r;
  }

 private:
  static void point() noexcept {
#if defined(BROKER_SYNC_FIBER)
    if (FiberRuntime* rt = installed_fiber_runtime()) rt->point("atomic");
#endif
  }

  std::atomic<T> value_;
};

}  // namespace broker::sync
