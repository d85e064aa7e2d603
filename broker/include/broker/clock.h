// The injected clock: publish times and pull deadlines come from it, so tests are exact.
#pragma once

#include <atomic>

#include "broker/message.h"

namespace broker {

/// Source of the current time. Implementations must be safe to call from any thread.
class Clock {
 public:
  virtual ~Clock() = default;
  [[nodiscard]] virtual Time now() const = 0;
  /// Whether the program sets this clock's time itself (a test's clock): then a `now` passed
  /// to the broker may be any time. Otherwise the broker refuses a `now` more than
  /// kMaxClockSkew away from now() (SPEC R11's one time line). Default: false.
  [[nodiscard]] virtual bool moved_by_caller() const { return false; }
};

/// How far a `now` passed to the broker may be from its clock's now(), behind or ahead,
/// unless the clock is moved by its caller (SPEC R11).
inline constexpr Millis kMaxClockSkew{60'000};

/// A clock that moves only when told to. Thread-safe (one atomic).
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Time start = Time{}) : now_(start.time_since_epoch().count()) {}
  [[nodiscard]] Time now() const override {
    return Time{Millis{now_.load(std::memory_order_acquire)}};
  }
  void set(Time t) { now_.store(t.time_since_epoch().count(), std::memory_order_release); }
  void advance(Millis d) { now_.fetch_add(d.count(), std::memory_order_acq_rel); }
  /// True: a ManualClock's time is the program's, so any `now` goes.
  [[nodiscard]] bool moved_by_caller() const override { return true; }

 private:
  std::atomic<Millis::rep> now_;
};

/// Milliseconds of std::chrono::steady_clock, read through sync::CycleClock (a time-stamp
/// counter read instead of the kernel's where the CPU allows): well within a millisecond of
/// it. Thread-safe.
class SteadyClock final : public Clock {
 public:
  [[nodiscard]] Time now() const override;
  /// False on the real clock; true in the fiber checker's build, where steady time is the
  /// runtime's virtual time and a program's times are its own.
  [[nodiscard]] bool moved_by_caller() const override;
};

}  // namespace broker
