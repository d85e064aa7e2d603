// Automatic expiry: a thread that runs the broker's expire at ack deadlines.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "broker/clock.h"
#include "sync/sync.h"

namespace broker {

/// Calls `expire` soon after every deadline has passed on the injected clock, and at least
/// once per `period` (real time) in any case, so clocks that jump are caught within one
/// period. It knows a deadline from `arm` or from `expire` itself, which returns the
/// earliest deadline still held after it ran (an extended one, a later poll's). Thread-safe;
/// its mutex is a leaf. `expire` runs on the timer's thread with no lock held.
class ExpiryTimer {
 public:
  using Expire = std::function<std::optional<Time>()>;
  ExpiryTimer(std::shared_ptr<const Clock> clock, Millis period, Expire expire);
  /// Stops the thread; waits for a running expire to return.
  ~ExpiryTimer();
  ExpiryTimer(const ExpiryTimer&) = delete;
  ExpiryTimer& operator=(const ExpiryTimer&) = delete;

  /// A message is held until deadline: wake up then if that is earlier than planned.
  /// Locks the timer's mutex; call it with no broker lock held.
  void arm(Time deadline) EXCLUDES(mu_);

 private:
  void run() EXCLUDES(mu_);

  // Constant after construction.
  const std::shared_ptr<const Clock> clock_;
  const Millis period_;
  const Expire expire_;

  sync::Mutex mu_;
  sync::CondVar wake_;
  std::optional<Time> next_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  sync::Thread thread_;  // last: starts after every member above exists
};

}  // namespace broker
