// Dispatchers decide which thread runs push offers (Strategy). Internal interface.
#pragma once

#include <functional>
#include <memory>

#include "broker/broker.h"
#include "subscription_state.h"

namespace broker {

/// Runs push offers for the subscriptions attached to it. Methods are thread-safe and are
/// called with no broker lock held; none of them runs a handler on the caller's thread.
class Dispatcher {
 public:
  virtual ~Dispatcher() = default;
  /// Whether drain() delivers (the synchronous dispatcher) or threads do.
  [[nodiscard]] virtual bool synchronous() const = 0;
  /// Whether its consumers register on their log (TopicLog::add_sleeper) before they may
  /// sleep and, while awake, look for its end to move as well as for notify: a publish
  /// then notifies only while one is registered (TopicLog::Appended::sleepers). False: every
  /// publish notifies each push subscription of its topic.
  [[nodiscard]] virtual bool watches_log() const { return false; }
  /// A push subscription (or group) was created.
  virtual void attach(const std::shared_ptr<SubscriptionState>& s) = 0;
  /// A push subscription is gone (already marked dead). Safe from inside its own handler.
  virtual void detach(const std::shared_ptr<SubscriptionState>& s) = 0;
  /// s may have something to offer now. Never blocks on a handler.
  virtual void notify(const std::shared_ptr<SubscriptionState>& s) = 0;
  /// Stops every thread; waits for running handlers except abandoned (timed-out) ones.
  virtual void stop() = 0;
};

/// A threaded dispatcher's timing knobs, from BrokerOptions (SPEC R15).
struct DispatcherOptions {
  std::size_t pool_threads = 2;  // pool only
  Millis handler_timeout{0};     // pool only; 0 = no timeout. Real (steady) time.
  Millis retry_backoff{5};       // a failure is re-offered at once; a second failure in a row
                                 // waits this long first (real time)
};

/// Delivers nothing by itself: Broker::drain runs offers on the caller's thread.
std::unique_ptr<Dispatcher> make_synchronous_dispatcher();
/// One thread per push subscription. on_progress runs after every offer (no lock held).
std::unique_ptr<Dispatcher> make_lane_dispatcher(const DispatcherOptions& options,
                                                 std::function<void()> on_progress);
/// N threads, at most one task per subscription at a time, FIFO between subscriptions.
std::unique_ptr<Dispatcher> make_pool_dispatcher(const DispatcherOptions& options,
                                                 std::function<void()> on_progress);

}  // namespace broker
