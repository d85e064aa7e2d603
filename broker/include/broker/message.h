// Messages as stored in a topic's log and as handed to subscribers.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace broker {

/// Absolute position of a message in its topic: 0 for the first, then 1, 2, ...
using Offset = std::uint64_t;
/// String headers, compared exactly by header filters.
using Headers = std::map<std::string, std::string>;
/// Durations and points in time of the injected clock, in milliseconds.
using Millis = std::chrono::milliseconds;
/// A point in time of the injected clock: milliseconds since the clock's epoch.
using Time = std::chrono::milliseconds;

/// One published message. Immutable once published; shared by every subscription.
struct Message {
  Offset offset = 0;
  std::string payload;
  Headers headers;
  std::string key;
  Time publish_time{0};
};

/// A message kept alive for as long as a holder needs it, even after retention drops it.
using MessagePtr = std::shared_ptr<const Message>;

/// What a push handler receives: the message and which offer this is (1 for the first).
/// The references are valid only during the handler call.
struct Delivery {
  const std::string& topic;
  const Message& message;
  int attempt;
};

/// A push handler. Returns true to confirm; false or any exception is a failure and the
/// message is offered again (or dead-lettered after max_deliveries).
using Handler = std::function<bool(const Delivery&)>;

/// A message filter. Runs under its subscription's lock: it must be quick and must not
/// call the broker.
using Predicate = std::function<bool(const Message&)>;

/// What a pull worker receives from poll: the message, its attempt and its ack deadline.
struct Received {
  MessagePtr message;
  int attempt = 0;
  Time deadline{0};
};

}  // namespace broker
