// The model's names read back: the inverse of to_string for error codes and ack outcomes,
// for lines read from a wire (the served broker's, the target protocol's).
#pragma once

#include <optional>
#include <string_view>

#include "model/errors.h"
#include "model/types.h"

namespace model {

/// The code whose to_string is `name`; none for another name. Throws nothing.
std::optional<ErrorCode> error_code_named(std::string_view name) noexcept;

/// The outcome whose to_string is `name`; none for another name. Throws nothing.
std::optional<AckOutcome> ack_outcome_named(std::string_view name) noexcept;

}  // namespace model
