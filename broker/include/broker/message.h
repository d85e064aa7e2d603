// Messages as stored in a topic's log and as handed to subscribers, and the time types.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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

/// One published message: a record of bytes in its topic's log, read through accessors.
/// Immutable once published; shared by every subscription (a MessagePtr keeps the run of
/// records it lives in alive), never copied. The record is the durable log's record body
/// (little-endian): offset u64 | publish time i64 (ms) | key (u32 length, bytes) | header
/// count u32 | each header's name and value (u32 length, bytes) | payload (u32 length,
/// bytes); so memory and disk share one shape and a durable append writes these bytes.
/// A Message exists only where make_message or the log put a whole record.
class Message {
 public:
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;

  [[nodiscard]] Offset offset() const { return Offset{u64(0)}; }
  [[nodiscard]] Time publish_time() const {
    return Time{Millis{static_cast<std::int64_t>(u64(8))}};
  }
  [[nodiscard]] std::string_view key() const { return str(kKeyAt); }
  /// A view of the payload, valid for as long as the message is.
  [[nodiscard]] std::string_view payload() const;
  /// How many headers it has.
  [[nodiscard]] std::size_t header_count() const { return u32(kKeyAt + 4 + u32(kKeyAt)); }
  /// The value of header `name`, if the message has it (no allocation).
  [[nodiscard]] std::optional<std::string_view> header(std::string_view name) const;
  /// Its headers, copied into a map.
  [[nodiscard]] Headers headers() const;
  /// The whole record (what the durable log writes as a record body).
  [[nodiscard]] std::string_view record() const;

 private:
  static constexpr std::size_t kKeyAt = 16;
  Message() = default;
  [[nodiscard]] const unsigned char* bytes() const { return &first_; }
  [[nodiscard]] std::uint64_t u64(std::size_t at) const;
  [[nodiscard]] std::uint32_t u32(std::size_t at) const;
  [[nodiscard]] std::string_view str(std::size_t at) const {
    return {reinterpret_cast<const char*>(bytes() + at + 4), u32(at)};
  }
  /// Calls visit(name, value) for each header in order while it returns true; false if it
  /// stopped early. Defined (and used) in message.cpp only.
  template <class Visit>
  bool each_header(Visit visit) const;
  /// The position after the headers (where the payload's length is).
  [[nodiscard]] std::size_t payload_at() const;

  unsigned char first_;  // the record's first byte; the rest follows it in the same storage
};

// Records are little-endian, as is every host we build for (message.cpp asserts it).
inline std::uint64_t Message::u64(std::size_t at) const {
  std::uint64_t v;
  std::memcpy(&v, bytes() + at, sizeof v);
  return v;
}
inline std::uint32_t Message::u32(std::size_t at) const {
  std::uint32_t v;
  std::memcpy(&v, bytes() + at, sizeof v);
  return v;
}
inline std::size_t Message::payload_at() const {
  std::size_t at = kKeyAt + 4 + u32(kKeyAt);
  const std::uint32_t headers = u32(at);
  at += 4;
  for (std::uint32_t i = 0; i < 2 * headers; ++i) at += 4 + u32(at);
  return at;
}
inline std::string_view Message::payload() const { return str(payload_at()); }

/// A message kept alive for as long as a holder needs it, even after retention drops it.
using MessagePtr = std::shared_ptr<const Message>;

/// Prints it as `Message{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const Message& v);

/// A message of its own (not in a topic's log): for tests, tools and messages read back
/// from files. Throws std::bad_alloc, or std::length_error if a field is 4 GiB or longer.
MessagePtr make_message(Offset offset, std::string_view payload, const Headers& headers = {},
                        std::string_view key = {}, Time publish_time = {});

/// What a push handler receives: the topic, the message and which offer this is (1 for
/// the first). Every field may be kept past the handler call.
struct Delivery {
  std::shared_ptr<const std::string> topic;
  MessagePtr message;
  int attempt = 0;
};

/// Prints it as `Delivery{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const Delivery& v);

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

/// Prints it as `Receipt{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const Receipt& v);

/// What a pull worker receives from poll: the message, its attempt, its ack deadline and
/// the receipt that acks it.
struct Received {
  MessagePtr message;
  int attempt = 0;
  Time deadline{};
  Receipt receipt;
};

/// Prints it as `Received{field=value, ...}` (strings quoted, other bytes as \xNN), for test
/// failures and logs. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const Received& v);

}  // namespace broker
