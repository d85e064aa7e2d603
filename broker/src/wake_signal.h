// An event count between publishers and one consumer: wake-ups cost a publisher one atomic
// exchange while the consumer is awake, and nothing but a look when it is about to sleep.
#pragma once

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
  /// Returns true if a raise came.
  bool spin_for_raise() const {
    for (int i = 0; i < sync::kSpinLooks; ++i) {
      if (pending()) return true;
      sync::spin_pause();
    }
    return false;
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

}  // namespace broker
