// Typed errors. Every call that throws one of these has changed nothing.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace broker {

/// The kinds of bad input and misuse the broker reports.
enum class ErrorCode {
  kUnknownTopic,           // the topic does not exist
  kDuplicateTopic,         // create_topic with a name already in use
  kTopicInUse,             // delete_topic while subscriptions remain
  kUnknownSubscription,    // no subscription of that name on the topic
  kDuplicateSubscription,  // subscribe with a name already in use on the topic
  kOptionsMismatch,        // same name (or group) again with different options
  kWrongKind,              // a pull call on a push subscription or the other way round
  kOffsetOutOfRange,       // seek or start outside [oldest kept, end]
  kInvalidArgument,        // empty name, zero max_messages, missing handler, ...
  kReentrantDrain,         // drain() called from inside a handler
  kNotSynchronous,         // drain() on a broker with a threaded dispatcher
  kIoError,                // the file system refused a read, write or sync
  kCorruptLog,             // a stored record fails its checksum before the tail
  kStorageLocked,          // the storage directory is open in another broker
  kNotBrokerStorage,       // the directory holds files that are not a broker's
  kUnsupportedFormat,      // the storage was written by a newer format version
  kPartitionOutOfRange,    // publish_to a partition the topic does not have
};

/// Stable lower-case name of an error code, as printed by scripts ("unknown_topic").
const char* to_string(ErrorCode code) noexcept;

/// Base of every broker error: a std::runtime_error that carries its code.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

#define BROKER_DEFINE_ERROR(Name, Code)                                      \
  class Name : public Error {                                                \
   public:                                                                   \
    explicit Name(const std::string& what) : Error(ErrorCode::Code, what) {} \
  }

BROKER_DEFINE_ERROR(UnknownTopic, kUnknownTopic);
BROKER_DEFINE_ERROR(DuplicateTopic, kDuplicateTopic);
BROKER_DEFINE_ERROR(TopicInUse, kTopicInUse);
BROKER_DEFINE_ERROR(UnknownSubscription, kUnknownSubscription);
BROKER_DEFINE_ERROR(DuplicateSubscription, kDuplicateSubscription);
BROKER_DEFINE_ERROR(WrongKind, kWrongKind);
BROKER_DEFINE_ERROR(OffsetOutOfRange, kOffsetOutOfRange);
BROKER_DEFINE_ERROR(InvalidArgument, kInvalidArgument);
BROKER_DEFINE_ERROR(ReentrantDrain, kReentrantDrain);
BROKER_DEFINE_ERROR(NotSynchronous, kNotSynchronous);
BROKER_DEFINE_ERROR(IoError, kIoError);
BROKER_DEFINE_ERROR(StorageLocked, kStorageLocked);
BROKER_DEFINE_ERROR(NotBrokerStorage, kNotBrokerStorage);
BROKER_DEFINE_ERROR(UnsupportedFormat, kUnsupportedFormat);
BROKER_DEFINE_ERROR(PartitionOutOfRange, kPartitionOutOfRange);

#undef BROKER_DEFINE_ERROR

/// The same subscription name (or group) again with other options; names the first option
/// that differs ("header_filter", "max_deliveries", "start", "ack_timeout").
/// A checksum or framing failure before the last record of a file: names the file and
/// the byte position of the bad record (never skipped silently; see SPEC R19).
class CorruptLog : public Error {
 public:
  CorruptLog(std::string file, std::uint64_t position, const std::string& what)
      : Error(ErrorCode::kCorruptLog, what), file_(std::move(file)), position_(position) {}
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] std::uint64_t position() const noexcept { return position_; }

 private:
  std::string file_;
  std::uint64_t position_;
};

class OptionsMismatch : public Error {
 public:
  OptionsMismatch(std::string option, const std::string& what)
      : Error(ErrorCode::kOptionsMismatch, what), option_(std::move(option)) {}
  [[nodiscard]] const std::string& option() const noexcept { return option_; }

 private:
  std::string option_;
};

}  // namespace broker
