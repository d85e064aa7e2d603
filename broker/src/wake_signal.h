// A lock-free "a wake-up is already on its way" flag between publishers and a consumer.
#pragma once

#include <atomic>

namespace broker {

/// Lets publishers skip a dispatcher's locks when its consumer is already woken. Thread-safe.
/// Memory order: raise and clear are acq_rel exchanges, so every append a publisher made
/// before a raise that found the flag set is visible to the consumer's look after clear.
class WakeSignal {
 public:
  /// Sets the flag; returns true if it was already set (the caller need not wake anyone).
  bool raise() { return pending_.exchange(true, std::memory_order_acq_rel); }
  /// Clears the flag; the consumer calls it before it looks for work.
  void clear() { pending_.exchange(false, std::memory_order_acq_rel); }

 private:
  std::atomic<bool> pending_{false};
};

}  // namespace broker
