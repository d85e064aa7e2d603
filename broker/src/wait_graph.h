// Who waits for whose offer to end, so unsubscribe can wait without ever deadlocking.
#pragma once

#include <map>

#include "sync/sync.h"

namespace broker {

class SubscriptionState;

/// Edges "the handler running for A waits for B's offer to end" (SPEC R9). Thread-safe;
/// its mutex is a leaf.
class WaitGraph {
 public:
  /// Adds waiter -> target unless that closes a cycle; returns whether it was added.
  bool add(const SubscriptionState* waiter, const SubscriptionState* target) EXCLUDES(mu_);
  /// Removes waiter's edge.
  void remove(const SubscriptionState* waiter) EXCLUDES(mu_);

 private:
  sync::Mutex mu_;
  std::map<const SubscriptionState*, const SubscriptionState*> edges_ GUARDED_BY(mu_);
};

}  // namespace broker
