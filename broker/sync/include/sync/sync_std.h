// std back-end of the sync layer: std::mutex, std::condition_variable, std::thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "sync/cycle_clock.h"
#include "sync/thread_annotations.h"

namespace broker::sync {

/// A non-recursive mutex. lock() may block; never throws except on system failure.
class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

/// One CPU spin-wait hint (x86 pause, Arm yield): a spinning thread leaves the core's
/// resources to its sibling and does not flood the memory system with looks.
inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Looks of a held spin lock with a CPU pause between them before it yields: about a
/// microsecond, longer than the sections it guards take.
inline constexpr int kSpinLockLooks = 64;
/// A spin lock's look that found it held (sync/spin_lock.h): CPU pauses, then a yield per
/// look, so a holder that blocks (a durable log's write) lets the others run; it never
/// sleeps in the kernel.
inline void spin_lock_wait(int looks) {
  if (looks < kSpinLockLooks) {
    cpu_pause();
  } else {
    std::this_thread::yield();
  }
}

/// A condition variable used with a held Mutex.
class CondVar {
 public:
  /// Waits for a notify (or spuriously). REQUIRES mu held; holds it again on return.
  void wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lk(mu.native(), std::adopt_lock);
    cv_.wait(lk);
    lk.release();
  }
  /// Waits at most d of real (steady) time. Returns false on timeout.
  bool wait_for(Mutex& mu, std::chrono::milliseconds d) REQUIRES(mu) {
    std::unique_lock<std::mutex> lk(mu.native(), std::adopt_lock);
    bool notified = cv_.wait_for(lk, d) == std::cv_status::no_timeout;
    lk.release();
    return notified;
  }
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

/// A joinable thread of execution.
class Thread {
 public:
  Thread() = default;
  explicit Thread(std::function<void()> body) : t_(std::move(body)) {}
  bool joinable() const { return t_.joinable(); }
  void join() { t_.join(); }
  void detach() { t_.detach(); }

 private:
  std::thread t_;
};

/// A slot private to the current thread of execution (a fiber in the fiber back-end).
/// The broker keeps its "which handler is running here" marker in it.
inline void*& context_slot() {
  thread_local void* slot = nullptr;
  return slot;
}

/// A point where the fiber back-end may switch; nothing here.
inline void schedule_point() {}

/// Lets other threads run (std::this_thread::yield); a scheduling point on fibers.
inline void yield_now() { std::this_thread::yield(); }

/// How many times a consumer looks for a wake-up before it sleeps (WakeSignal): with
/// spin_pause between looks, about 20-50 us, longer than a publisher's gap between two
/// messages.
inline constexpr int kSpinLooks = 100;
/// Ten CPU pauses between two looks of a spin (cheaper for the sibling hyper-thread). Not
/// one: each look reads the cache line publishers exchange at every message, and a
/// consumer that had caught up and looked after every pause made each of those exchanges
/// wait for the line to come back from its core (a lane whose handler failed 1% of the
/// time caught up after each failure and then ran at about half the speed; a look every
/// ten pauses costs a woken consumer about half a microsecond more).
inline void spin_pause() {
  for (int i = 0; i < 10; ++i) cpu_pause();
}

/// Real monotonic time, for timeouts and backoff (never for the broker's contract).
inline std::chrono::milliseconds steady_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now().time_since_epoch());
}

/// The broker's own steady clock (SteadyClock, the time messages are stamped with):
/// steady_now's time, from a time-stamp counter read where CycleClock may interpolate or
/// reuse a recent kernel read (at most about 31 us old at 2.1 GHz).
inline std::chrono::milliseconds clock_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::nanoseconds{CycleClock::now_ns()});
}

/// The real clock is nobody's to set: the broker checks a `now` it is given against it
/// (broker::Clock::moved_by_caller).
inline constexpr bool kClockMovedByCaller = false;

/// Real monotonic time in nanoseconds, for sizing a consumer's spin to the gaps between
/// wake-ups (never for the broker's contract).
inline std::int64_t spin_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
/// The longest a consumer spins after its base looks, and at most this many yields: a
/// gap between wake-ups up to this long is cheaper spun than slept (a futex wake-up costs
/// the waker a syscall and the sleeper tens of microseconds on a VM).
inline constexpr std::int64_t kMaxSpinNs = 200'000;
inline constexpr int kMaxSpinYields = 1 << 20;

}  // namespace broker::sync
