// Names of error codes and of scripted side-effect results.
#include "model/errors.h"

#include "model/script.h"

namespace model {

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
  }
  return "unknown_error_code";
}

std::string effect_result(EffectKind kind, const std::string& result) {
  const char* name = "";
  switch (kind) {
    case EffectKind::kNone:
      return "";
    case EffectKind::kUnsubscribeSelf:
    case EffectKind::kUnsubscribe:
      name = "unsubscribe";
      break;
    case EffectKind::kPublish:
      name = "publish";
      break;
    case EffectKind::kSeek:
      name = "seek";
      break;
    case EffectKind::kDrain:
      name = "drain";
      break;
  }
  return std::string(name) + " -> " + result;
}

}  // namespace model
