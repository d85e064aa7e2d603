#include "wait_graph.h"

namespace broker {

bool WaitGraph::add(const SubscriptionState* waiter, const SubscriptionState* target) {
  sync::MutexLock lock(mu_);
  for (const SubscriptionState* x = target;;) {
    if (x == waiter) return false;
    auto it = edges_.find(x);
    if (it == edges_.end()) break;
    x = it->second;
  }
  edges_[waiter] = target;
  return true;
}

void WaitGraph::remove(const SubscriptionState* waiter) {
  sync::MutexLock lock(mu_);
  edges_.erase(waiter);
}

}  // namespace broker
