// What ack, nack, term and extend answer: whether they took the receipt and, if not, why.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string_view>

namespace broker {

/// Why an answer to a held message (ack, nack, term, extend) was taken or refused (SPEC
/// R11, R32), checked in this order:
enum class AckOutcome : std::uint8_t {
  kAccepted,         // its member holds it, before its deadline: the answer took effect
  kStaleGeneration,  // a group receipt whose member has not owned the partition since its
                     // generation (fenced, R32)
  kUnknownOffset,    // nobody holds it and the subscription never handed it out since its
                     // last seek: at or past its cursor
  kAlreadySettled,   // nobody holds it any more: acked, handed back, expired, dead-lettered
                     // or passed over
  kNotHolder,        // another member holds it
  kLate,             // its member holds it, but its deadline has passed (expire has not yet
                     // taken it back)
};

/// The outcome's name as SPEC writes it: "accepted", "stale_generation", "unknown_offset",
/// "already_settled", "not_holder", "late". Throws nothing.
std::string_view to_string(AckOutcome outcome);

/// Prints to_string(outcome). Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, AckOutcome outcome);

/// The answer of ack, nack, term or extend: true exactly when the call took effect, and
/// the outcome that says why not. Plain data.
struct AckResult {
  AckOutcome outcome = AckOutcome::kAccepted;
  constexpr explicit operator bool() const { return outcome == AckOutcome::kAccepted; }
  bool operator==(const AckResult&) const = default;
};

/// Prints it as `AckResult{outcome=late}`. Throws what the stream throws.
std::ostream& operator<<(std::ostream& out, const AckResult& v);

}  // namespace broker
