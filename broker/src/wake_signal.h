// A lock-free "a wake-up is already on its way" flag between publishers and a consumer.
#pragma once

#include <atomic>

#include "sync/atomic.h"

namespace broker {

/// Lets publishers skip a dispatcher's locks when its consumer is already woken. Thread-safe.
/// Memory order: raise and clear are acq_rel exchanges on one flag, so they are totally
/// ordered: a raise that finds the flag set comes after the consumer's clear-free stretch
/// began and before its next clear, whose acquire makes every append the publisher made
/// before that raise visible to the consumer's look after the clear.
class WakeSignal {
 public:
  /// Sets the flag; returns true if it was already set (the caller need not wake anyone).
  bool raise() { return pending_.exchange(true, std::memory_order_acq_rel); }
  /// Clears the flag; the consumer calls it before it looks for work.
  void clear() { pending_.exchange(false, std::memory_order_acq_rel); }

 private:
  sync::Atomic<bool> pending_{false};
};

}  // namespace broker
