// How a Broker is built: its clock, its dispatcher, automatic expiry and storage.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include "broker/clock.h"
#include "broker/message.h"
#include "broker/storage_options.h"

namespace broker {

/// Construction options of a Broker, built by a named constructor (which dispatcher runs
/// push deliveries, with its own arguments) and refined with `with_*`:
/// `BrokerOptions::pool(4, Millis{500}).with_retry_backoff(Millis{10})`. Bad values throw
/// InvalidArgument at once (nothing is built). A value type; locks nothing.
class BrokerOptions {
 public:
  /// Which dispatcher runs push deliveries (SPEC R8, R15).
  enum class Dispatcher { kSynchronous, kLane, kPool };

  /// Deliveries run only inside drain(), on the caller's thread (the default).
  static BrokerOptions synchronous() { return BrokerOptions(Dispatcher::kSynchronous); }
  /// One thread per push subscription (or group).
  static BrokerOptions lane() { return BrokerOptions(Dispatcher::kLane); }
  /// `threads` threads shared by every push subscription; a handler running longer than
  /// `handler_timeout` (real time; 0 = none) counts as failed ("handler timeout") and its
  /// thread is replaced. The timeout is the pool's own argument: only a pool can abandon a
  /// running handler, so no other dispatcher can be given one. Throws InvalidArgument (0
  /// threads, a negative timeout).
  static BrokerOptions pool(std::size_t threads, Millis handler_timeout = Millis{0});

  /// The clock publish times and pull deadlines come from (default: a SteadyClock).
  /// Throws InvalidArgument (null).
  [[nodiscard]] BrokerOptions with_clock(std::shared_ptr<Clock> clock) const;
  /// Lane and pool: the wait before re-offering after a second failure in a row.
  /// Throws InvalidArgument (synchronous dispatcher, or negative).
  [[nodiscard]] BrokerOptions with_retry_backoff(Millis backoff) const;
  /// Runs expire(clock().now()) by itself at ack deadlines, so a crashed worker's messages
  /// come back without application code. For brokers on a real clock; with a ManualClock
  /// the timer looks every `period` (real time) whether the clock has passed a deadline.
  /// Throws InvalidArgument (period <= 0).
  [[nodiscard]] BrokerOptions with_auto_expire(Millis period = Millis{50}) const;

  /// Keeps topics, subscriptions, positions and dead letters in storage.directory; a broker
  /// opened on that directory again rebuilds them (SPEC R18-R21). Throws InvalidArgument
  /// (empty directory, interval policy with interval <= 0, segment_bytes < 256,
  /// journal_compact_bytes < 1024).
  [[nodiscard]] BrokerOptions with_storage(StorageOptions storage) const;

  [[nodiscard]] Dispatcher dispatcher() const { return dispatcher_; }
  /// The pool's threads (2 unless pool() said; used by a pool only).
  [[nodiscard]] std::size_t pool_threads() const { return pool_threads_; }
  /// The pool's handler timeout; 0 = none (and for every other dispatcher).
  [[nodiscard]] Millis handler_timeout() const { return handler_timeout_; }
  /// Lane and pool: a failure is re-offered at once; a second in a row waits this first.
  [[nodiscard]] Millis retry_backoff() const { return retry_backoff_; }
  [[nodiscard]] const std::optional<StorageOptions>& storage() const { return storage_; }
  [[nodiscard]] const std::shared_ptr<Clock>& clock() const { return clock_; }
  [[nodiscard]] bool auto_expire() const { return auto_expire_period_.count() > 0; }
  [[nodiscard]] Millis auto_expire_period() const { return auto_expire_period_; }

 private:
  explicit BrokerOptions(Dispatcher dispatcher) : dispatcher_(dispatcher) {}

  Dispatcher dispatcher_;
  std::size_t pool_threads_ = 2;
  Millis handler_timeout_{0};
  Millis retry_backoff_{5};
  std::shared_ptr<Clock> clock_;
  Millis auto_expire_period_{0};
  std::optional<StorageOptions> storage_;
};

}  // namespace broker
