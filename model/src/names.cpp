// The model's names read back (model/names.h).
#include "model/names.h"

namespace model {

std::optional<ErrorCode> error_code_named(std::string_view name) noexcept {
  for (int c = 0; c <= static_cast<int>(ErrorCode::kPartitionOutOfRange); ++c) {
    if (name == to_string(static_cast<ErrorCode>(c))) return static_cast<ErrorCode>(c);
  }
  return std::nullopt;
}

std::optional<AckOutcome> ack_outcome_named(std::string_view name) noexcept {
  for (int a = 0; a <= static_cast<int>(AckOutcome::kLate); ++a) {
    if (name == to_string(static_cast<AckOutcome>(a))) return static_cast<AckOutcome>(a);
  }
  return std::nullopt;
}

}  // namespace model
