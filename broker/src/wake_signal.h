// An event count between publishers and one consumer: wake-ups cost a publisher one atomic
// exchange while the consumer is awake, and nothing but a look when it is about to sleep.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "sync/atomic.h"
#include "sync/sync.h"

namespace broker {

/// Lets publishers skip a dispatcher's locks unless its consumer sleeps. Thread-safe.
/// States: idle (the consumer sleeps or is about to: a publisher must wake it through the
/// dispatcher's locks), awake (it will look for work again before it sleeps), pending (a
/// raise came since its look began). Memory order: every change is an acq_rel exchange or
/// compare-exchange of one variable, so they are totally ordered; a publisher appends
/// before its raise, and the consumer's look begins with an acquire (look()) or follows
/// one (try_sleep failing on pending), so an append raised before a look began is seen by
/// that look, and one raised after it leaves `pending`, which try_sleep cannot pass.
class WakeSignal {
 public:
  /// Marks work pending; returns true if the consumer is awake (the caller need not wake
  /// it: it looks again before sleeping), false if it sleeps (the caller must wake it).
  bool raise() { return state_.exchange(kPending, std::memory_order_acq_rel) != kIdle; }
  /// The consumer is about to look for work: awake, nothing pending.
  void look() { state_.exchange(kAwake, std::memory_order_acq_rel); }
  /// Whether a raise came since the last look (the consumer's spin reads it).
  [[nodiscard]] bool pending() const { return state_.load(std::memory_order_acquire) == kPending; }
  /// The consumer found nothing and goes to sleep: true if it may (from now on raise returns
  /// false, so a publisher wakes it), false if a raise came since its look (look again).
  bool try_sleep() {
    std::uint8_t expected = kAwake;
    return state_.compare_exchange_strong(expected, kIdle, std::memory_order_acq_rel);
  }
  /// A consumer that found nothing first spins this long for a raise before try_sleep: a
  /// publisher that keeps up pays no wake-up, the consumer no sleep (a futex each). Bounded,
  /// so an idle consumer costs a core for at most this long after its last message. On the
  /// fiber back-end each look is a scheduling point: a short spin explores the same races.
  /// `other()` says whether work came by another way (a log's end moved) and is asked at
  /// each look too. Returns true if a raise or other work came.
  template <class Other>
  bool spin_for_raise(const Other& other) const {
    for (int i = 0; i < sync::kSpinLooks; ++i) {
      if (pending() || other()) return true;
      sync::spin_pause();
    }
    return false;
  }
  /// After spin_for_raise found nothing: looks for a raise for up to `extra_ns` more (at
  /// most sync::kMaxSpinNs; SpinBudget sizes it) with a yield between looks, so the spinning
  /// consumer gives its core to any thread that is ready (the publisher it waits for, where
  /// threads outnumber cores). Looks for other() as spin_for_raise. Returns true if a
  /// raise or other work came.
  template <class Other>
  bool spin_longer(std::int64_t extra_ns, const Other& other) const {
    const std::int64_t until = sync::spin_clock_ns() + std::min(extra_ns, sync::kMaxSpinNs);
    for (int i = 0; i < sync::kMaxSpinYields && sync::spin_clock_ns() < until; ++i) {
      if (pending() || other()) return true;
      sync::yield_now();
    }
    return pending() || other();
  }

 private:
  static constexpr std::uint8_t kIdle = 0;
  static constexpr std::uint8_t kAwake = 1;
  static constexpr std::uint8_t kPending = 2;
  // Starts idle: a new consumer looks first anyway (the dispatchers start it pending). A
  // cache line of its own (alignas pads the class to 64): publishers write it at every
  // message, and the consumer's lock next to it must not move with it.
  alignas(64) sync::Atomic<std::uint8_t> state_{kIdle};
};

/// How long a consumer spins after its base looks (WakeSignal::spin_longer), learned from
/// the gaps between its base spin finding nothing and the next wake-up: a consumer whose work
/// comes every 100 us (10k messages/s) spins 150 us and finds the next message without a
/// sleep; one idle longer than sync::kMaxSpinNs spins only its base looks. The consumer's
/// own (not thread-safe).
class SpinBudget {
 public:
  /// The consumer's base spin found nothing at now_ns.
  void idle_from(std::int64_t now_ns) { idle_since_ = now_ns; }
  /// A raise came at now_ns (during the longer spin, or it woke the sleeping consumer): the
  /// next spin covers half as much again as this gap, if it was short enough to spin
  /// through at all.
  void woken_at(std::int64_t now_ns) {
    const std::int64_t gap = now_ns - idle_since_;
    // At least 1: on the fiber back-end virtual time stands still while fibers run, so a
    // short gap measures 0, and the longer spin (its yields bounded by count there) must
    // still be explored.
    extra_ns_ =
        gap > sync::kMaxSpinNs ? 0 : std::clamp(gap + gap / 2, std::int64_t{1}, sync::kMaxSpinNs);
  }
  /// How long the next spin may go on after its base looks.
  [[nodiscard]] std::int64_t extra_ns() const { return extra_ns_; }

 private:
  std::int64_t idle_since_ = 0;
  std::int64_t extra_ns_ = 0;
};

}  // namespace broker
