// How a Broker is built: its clock, its dispatcher, automatic expiry and storage.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include "broker/clock.h"
#include "broker/message.h"
#include "broker/storage_options.h"

namespace broker {

/// Which dispatcher runs push deliveries, and its timing knobs (see SPEC R15).
struct DispatcherOptions {
  enum class Kind { kSynchronous, kLane, kPool };
  Kind kind = Kind::kSynchronous;
  std::size_t pool_threads = 2;  // kPool only
  Millis handler_timeout{0};     // kPool only; 0 = no timeout. Real (steady) time.
  Millis retry_backoff{5};       // kLane/kPool: a failure is re-offered at once; a second failure
                                 // in a row waits this long first (real time)
};

/// Construction options of a Broker, built by a named constructor and refined with
/// `with_*`:  `BrokerOptions::pool(4).with_handler_timeout(Millis{500})`.
/// Bad values throw InvalidArgument at once (nothing is built).
class BrokerOptions {
 public:
  /// Deliveries run only inside drain(), on the caller's thread (the default).
  static BrokerOptions synchronous() {
    return BrokerOptions(DispatcherOptions::Kind::kSynchronous);
  }
  /// One thread per push subscription (or group).
  static BrokerOptions lane() { return BrokerOptions(DispatcherOptions::Kind::kLane); }
  /// `threads` threads shared by every push subscription. Throws InvalidArgument (0 threads).
  static BrokerOptions pool(std::size_t threads);

  /// The clock publish times and pull deadlines come from (default: a SteadyClock).
  /// Throws InvalidArgument (null).
  [[nodiscard]] BrokerOptions with_clock(std::shared_ptr<Clock> clock) const;
  /// Pool only: a handler running longer counts as failed ("handler timeout"); 0 = none.
  /// Throws InvalidArgument (not a pool, or negative).
  [[nodiscard]] BrokerOptions with_handler_timeout(Millis timeout) const;
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

  [[nodiscard]] const DispatcherOptions& dispatcher() const { return dispatcher_; }
  [[nodiscard]] const std::optional<StorageOptions>& storage() const { return storage_; }
  [[nodiscard]] const std::shared_ptr<Clock>& clock() const { return clock_; }
  [[nodiscard]] bool auto_expire() const { return auto_expire_period_.count() > 0; }
  [[nodiscard]] Millis auto_expire_period() const { return auto_expire_period_; }

 private:
  explicit BrokerOptions(DispatcherOptions::Kind kind) { dispatcher_.kind = kind; }

  DispatcherOptions dispatcher_;
  std::shared_ptr<Clock> clock_;
  Millis auto_expire_period_{0};
  std::optional<StorageOptions> storage_;
};

}  // namespace broker
