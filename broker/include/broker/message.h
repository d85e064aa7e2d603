// Messages as stored in a topic's log and as handed to subscribers, and the time types.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace broker {

/// Absolute position of a message in its topic: 0 for the first, then 1, 2, ...
using Offset = std::uint64_t;
/// String headers, compared exactly by header filters.
using Headers = std::map<std::string, std::string>;
/// A duration (timeouts, back-offs, extensions), in milliseconds.
using Millis = std::chrono::milliseconds;

/// The time line of the injected clock (a tag: a Time is never a std::chrono clock's).
struct TimeLine {
  using rep = Millis::rep;
  using period = Millis::period;
  using duration = Millis;
  using time_point = std::chrono::time_point<TimeLine, Millis>;
  static constexpr bool is_steady = true;
};
/// A point in time of the injected clock. Distinct from Millis, so a duration never passes
/// where a time point is meant: `Time{} + Millis{30}` is a Time, `t2 - t1` a Millis.
using Time = TimeLine::time_point;
/// The time point `since_epoch` after the clock's epoch.
constexpr Time at(Millis since_epoch) { return Time{since_epoch}; }

/// One published message. Immutable once published; shared by every subscription.
struct Message {
  Offset offset = 0;
  std::string payload;
  Headers headers;
  std::string key;
  Time publish_time{};
};

/// A message kept alive for as long as a holder needs it, even after retention drops it.
using MessagePtr = std::shared_ptr<const Message>;

/// What a push handler receives: the topic, the message and which offer this is (1 for
/// the first). Every field may be kept past the handler call.
struct Delivery {
  std::shared_ptr<const std::string> topic;
  MessagePtr message;
  int attempt = 0;
};

/// A push handler. Returns true to confirm; false or any exception is a failure and the
/// message is offered again (or dead-lettered after max_deliveries); a Terminate gives up.
using Handler = std::function<bool(const Delivery&)>;

/// Thrown by a push handler that gives up on a message on purpose (a poison message): it
/// goes to the dead letters at once with reason "terminated", whatever its attempts (SPEC
/// R23; the pull form is Broker::term).
class Terminate : public std::exception {
 public:
  [[nodiscard]] const char* what() const noexcept override { return "terminated"; }
};

/// A message filter. Runs under its subscription's lock: it must be quick and must not
/// call the broker.
using Predicate = std::function<bool(const Message&)>;

/// Names one message handed out by poll: ack, nack and extend take it, so a message is
/// named by one value. Plain data: it may be copied, stored and sent to another thread.
struct Receipt {
  std::string topic;
  std::string subscription;
  std::string member;
  Offset offset = 0;
  /// R32: the consumer group generation poll_group handed it out in (0: poll's).
  std::uint64_t generation = 0;
  bool operator==(const Receipt&) const = default;
};

/// What a pull worker receives from poll: the message, its attempt, its ack deadline and
/// the receipt that acks it.
struct Received {
  MessagePtr message;
  int attempt = 0;
  Time deadline{};
  Receipt receipt;
};

}  // namespace broker
