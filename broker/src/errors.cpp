#include "broker/errors.h"

namespace broker {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kUnknownTopic:
      return "unknown_topic";
    case ErrorCode::kDuplicateTopic:
      return "duplicate_topic";
    case ErrorCode::kTopicInUse:
      return "topic_in_use";
    case ErrorCode::kUnknownSubscription:
      return "unknown_subscription";
    case ErrorCode::kDuplicateSubscription:
      return "duplicate_subscription";
    case ErrorCode::kOptionsMismatch:
      return "options_mismatch";
    case ErrorCode::kWrongKind:
      return "wrong_kind";
    case ErrorCode::kOffsetOutOfRange:
      return "offset_out_of_range";
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kReentrantDrain:
      return "reentrant_drain";
    case ErrorCode::kNotSynchronous:
      return "not_synchronous";
    case ErrorCode::kIoError:
      return "io_error";
    case ErrorCode::kCorruptLog:
      return "corrupt_log";
    case ErrorCode::kStorageLocked:
      return "storage_locked";
    case ErrorCode::kNotBrokerStorage:
      return "not_broker_storage";
    case ErrorCode::kUnsupportedFormat:
      return "unsupported_format";
    case ErrorCode::kPartitionOutOfRange:
      return "partition_out_of_range";
  }
  return "unknown_error";
}

}  // namespace broker
