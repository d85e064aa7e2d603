// Fiber back-end of the sync layer (BROKER_SYNC_FIBER): the same interface as sync_std.h,
// but every lock, unlock, wait, notify, spawn and join is a scheduling point of a
// FiberRuntime, which the test's scheduler (fiber/, target fiber_sched) installs on the
// thread that runs the fibers. The primitives keep their own waiter lists and park through
// the runtime instead of blocking inside boost::fibers::mutex / condition_variable: that
// way the scheduler sees exactly which fiber waits for what, so it can report a deadlock
// (nothing runnable, no timed wait pending) instead of hanging, and timed waits run on
// virtual time. Fibers themselves are boost::fibers::fiber contexts (see fiber/).
//
// Virtual time: steady_now() is the runtime's virtual clock. It moves only when no fiber
// can run; then it jumps to the earliest pending deadline (CondVar::wait_for, sleep) and
// that waiter times out. So a timeout never fires while some fiber could still make
// progress: the model is an infinitely fast CPU. No spurious wakeups are injected;
// notify_one wakes the longest waiter.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <optional>
#include <utility>

#include "sync/thread_annotations.h"

namespace broker::sync {

/// The scheduler the fiber back-end reports to. One per thread that runs fibers; every
/// call is made from the fiber that is currently running (no other thread involved).
class FiberRuntime {
 public:
  virtual ~FiberRuntime() = default;
  /// Id of the running fiber (small, dense, deterministic).
  virtual int current() = 0;
  /// A scheduling point: the scheduler may switch to another runnable fiber here.
  virtual void point(const char* label) = 0;
  /// Suspends the running fiber until unpark(it, on) or, with a deadline, until virtual
  /// time reaches it. Returns true when unparked, false on timeout.
  virtual bool park(const void* on, const char* label,
                    std::optional<std::chrono::milliseconds> deadline) = 0;
  /// Makes fiber `id` runnable if it is parked on `on` (no switch). Returns whether it was.
  virtual bool unpark(int id, const void* on) = 0;
  /// Virtual monotonic time.
  virtual std::chrono::milliseconds now() = 0;
  /// Starts a fiber (a scheduling point) and returns its id.
  virtual int spawn(std::function<void()> body) = 0;
  /// Waits until fiber `id` has finished (a scheduling point).
  virtual void join(int id) = 0;
  /// Gives up the right to join fiber `id`.
  virtual void detach(int id) = 0;
  /// The running fiber's private slot.
  virtual void*& slot() = 0;

  // The memory model (fiber/src/memory_model.h). Each call comes from the running fiber;
  // none is a scheduling point. Values travel as their object bytes in a uint64_t.
  /// A load of the atomic at `at`, whose newest value is `newest`: returns the value of the
  /// store it reads, which under a weak-memory schedule may be an older one that coherence
  /// and happens-before allow (the choice is the schedule's). `newest_only`: a failed
  /// compare-exchange, which reads the newest.
  virtual std::uint64_t atomic_load(const void* at, std::uint64_t newest, std::memory_order order,
                                    bool newest_only) = 0;
  /// A store of `value` to the atomic at `at`, whose value before it was `before`.
  virtual void atomic_store(const void* at, std::uint64_t before, std::uint64_t value,
                            std::memory_order order) = 0;
  /// A read-modify-write: it read `before` (the newest) and stored `after`.
  virtual void atomic_rmw(const void* at, std::uint64_t before, std::uint64_t after,
                          std::memory_order order) = 0;
  /// The order an atomic operation at file:line runs with: `written`, unless the run
  /// weakens that site (FIBER_WEAKEN, fiber/src/sites.h). Records the site as met.
  virtual std::memory_order order_at(std::memory_order written, const char* file,
                                     unsigned line) = 0;
  /// The atomic at `at` is gone (or new): its history ends.
  virtual void atomic_forget(const void* at) = 0;
  /// std::atomic_thread_fence(order).
  virtual void fence(std::memory_order order) = 0;
  /// The running fiber took (released) the lock at `lock`: a release/acquire pair.
  virtual void lock_acquired(const void* lock) = 0;
  virtual void lock_released(const void* lock) = 0;
  /// A plain (non-atomic) access to `bytes` bytes at `at` that another thread may make too;
  /// a read not happens-after the last write is a data race, which the run reports. `what`
  /// names the data (a string literal).
  virtual void plain_access(const void* at, std::size_t bytes, bool write, const char* what) = 0;
};

/// The runtime installed on this thread (null outside a fiber run).
inline FiberRuntime*& installed_fiber_runtime() {
  thread_local FiberRuntime* runtime = nullptr;
  return runtime;
}

/// The installed runtime; aborts loudly when broker_fiber is used outside a fiber run.
inline FiberRuntime& fiber_runtime() {
  FiberRuntime* rt = installed_fiber_runtime();
  if (rt == nullptr) {
    std::fputs("broker_fiber: sync primitive used outside fiber::run_fibers\n", stderr);
    std::abort();
  }
  return *rt;
}

/// A non-recursive mutex. lock() and unlock() are scheduling points.
class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() {
    FiberRuntime& rt = fiber_runtime();
    rt.point("lock");
    acquire(rt);
  }
  void unlock() RELEASE() {
    FiberRuntime& rt = fiber_runtime();
    release(rt);
    rt.point("unlock");
  }

  // For CondVar: take and give back without the leading/trailing scheduling point.
  void acquire(FiberRuntime& rt) NO_THREAD_SAFETY_ANALYSIS {
    const int me = rt.current();
    while (owner_ != -1) {
      waiters_.push_back(me);
      rt.park(this, owner_ == me ? "lock-self" : "lock-wait", std::nullopt);
    }
    owner_ = me;
    rt.lock_acquired(this);
  }
  void release(FiberRuntime& rt) NO_THREAD_SAFETY_ANALYSIS {
    rt.lock_released(this);
    owner_ = -1;
    for (int w : waiters_) rt.unpark(w, this);  // all retry; the scheduler picks the winner
    waiters_.clear();
  }

 private:
  int owner_ = -1;
  std::deque<int> waiters_;
};

/// A spin lock's look that found it held (sync/spin_lock.h): the scheduler runs another
/// fiber if one can run (the label "spin-wait" makes the switch free, as a yield), so a
/// spinning fiber never starves the holder.
inline void spin_lock_wait(int /*looks*/) { fiber_runtime().point("spin-wait"); }

/// A condition variable used with a held Mutex. wait and notify are scheduling points.
class CondVar {
 public:
  /// Waits for a notify. REQUIRES mu held; holds it again on return.
  void wait(Mutex& mu) REQUIRES(mu) { wait_impl(mu, std::nullopt); }
  /// Waits at most d of virtual time. Returns false on timeout.
  bool wait_for(Mutex& mu, std::chrono::milliseconds d) REQUIRES(mu) { return wait_impl(mu, d); }
  void notify_one() {
    FiberRuntime& rt = fiber_runtime();
    while (!waiters_.empty()) {
      const int w = waiters_.front();
      waiters_.pop_front();
      if (rt.unpark(w, this)) break;  // skip waiters that already timed out
    }
    rt.point("notify_one");
  }
  void notify_all() {
    FiberRuntime& rt = fiber_runtime();
    for (int w : waiters_) rt.unpark(w, this);
    waiters_.clear();
    rt.point("notify_all");
  }

 private:
  bool wait_impl(Mutex& mu, std::optional<std::chrono::milliseconds> d) NO_THREAD_SAFETY_ANALYSIS {
    FiberRuntime& rt = fiber_runtime();
    rt.point(d ? "wait_for" : "wait");
    const int me = rt.current();
    waiters_.push_back(me);
    mu.release(rt);  // atomically with parking: no scheduling point in between
    std::optional<std::chrono::milliseconds> deadline;
    if (d) deadline = rt.now() + std::max(*d, std::chrono::milliseconds(0));
    const bool notified = rt.park(this, d ? "cv-wait_for" : "cv-wait", deadline);
    if (!notified)
      waiters_.erase(std::remove(waiters_.begin(), waiters_.end(), me), waiters_.end());
    rt.point("wait-relock");
    mu.acquire(rt);
    return notified;
  }

  std::deque<int> waiters_;
};

/// A joinable fiber. Like std::thread: destroying a joinable Thread terminates.
class Thread {
 public:
  Thread() = default;
  explicit Thread(std::function<void()> body) : id_(fiber_runtime().spawn(std::move(body))) {}
  Thread(Thread&& other) noexcept : id_(std::exchange(other.id_, -1)) {}
  Thread& operator=(Thread&& other) noexcept {
    if (joinable()) std::terminate();
    id_ = std::exchange(other.id_, -1);
    return *this;
  }
  ~Thread() {
    if (joinable()) std::terminate();
  }
  bool joinable() const { return id_ != -1; }
  void join() { fiber_runtime().join(std::exchange(id_, -1)); }
  void detach() { fiber_runtime().detach(std::exchange(id_, -1)); }

 private:
  int id_ = -1;
};

/// A slot private to the current fiber.
inline void*& context_slot() { return fiber_runtime().slot(); }

/// A point where the scheduler may switch to another fiber.
inline void schedule_point() { fiber_runtime().point("schedule_point"); }

/// Lets other fibers run: a scheduling point.
inline void yield_now() { fiber_runtime().point("yield"); }

/// A consumer's looks before it sleeps: each is a scheduling point here, so two are enough
/// for the scheduler to place a publisher before, between and after them.
inline constexpr int kSpinLooks = 2;
/// Nothing: the looks themselves are the scheduling points.
inline void spin_pause() {}

/// Virtual monotonic time (see the top of this file).
inline std::chrono::milliseconds steady_now() { return fiber_runtime().now(); }

/// The broker's own steady clock (SteadyClock): virtual time, as steady_now.
inline std::chrono::milliseconds clock_now() { return fiber_runtime().now(); }
/// Virtual time is the program's: the broker takes any `now` (broker::Clock::moved_by_caller).
inline constexpr bool kClockMovedByCaller = true;

/// Virtual time in nanoseconds (it does not move while a fiber spins).
inline std::int64_t spin_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(fiber_runtime().now()).count();
}
/// A spin's extra looks are scheduling points, bounded by count: virtual time stands still
/// while a fiber spins, so a bound in time alone would never end.
inline constexpr std::int64_t kMaxSpinNs = 200'000;
inline constexpr int kMaxSpinYields = 4;

}  // namespace broker::sync
