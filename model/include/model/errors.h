// The model's typed errors: one code per broker::ErrorCode, same names, no shared code.
#pragma once

#include <exception>
#include <string>

namespace model {

/// Every kind of refused call; mirrors broker::ErrorCode name for name (SPEC R1-R14).
enum class ErrorCode {
  kUnknownTopic,
  kDuplicateTopic,
  kTopicInUse,
  kUnknownSubscription,
  kDuplicateSubscription,
  kOptionsMismatch,
  kWrongKind,
  kOffsetOutOfRange,
  kInvalidArgument,
  kReentrantDrain,
  kNotSynchronous,
  // Storage (R18-R21): the model never throws these, but kIoError once the storage has
  // failed (R33, Model::fail_storage); a durable broker that throws another has failed.
  kIoError,
  kCorruptLog,
  kStorageLocked,
  kNotBrokerStorage,
  kUnsupportedFormat,
  kPartitionOutOfRange,  // R29: a partition the topic does not have
};

/// Stable lower-case name of a code ("unknown_topic"), the spelling scripts print.
const char* to_string(ErrorCode code) noexcept;

/// What a refused model call throws. A call that throws has changed nothing (R14).
class Error : public std::exception {
 public:
  explicit Error(ErrorCode code) : code_(code) {}
  [[nodiscard]] ErrorCode code() const noexcept { return code_; }
  [[nodiscard]] const char* what() const noexcept override { return to_string(code_); }

 private:
  ErrorCode code_;
};

}  // namespace model
