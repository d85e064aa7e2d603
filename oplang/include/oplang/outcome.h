// Everything observable about one operation: its result or error, and the handler calls
// it caused, in order. Two runs agree exactly when their outcomes compare equal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/errors.h"
#include "model/types.h"

namespace oplang {

/// The result of an op that returns nothing (create_topic, seek, advance, ...).
struct Done {
  bool operator==(const Done&) const = default;
};
/// publish's offset; on a partitioned topic also the partition send picked (R29).
struct OffsetResult {
  model::Offset offset = 0;
  std::optional<std::uint32_t> partition{};
  bool operator==(const OffsetResult&) const = default;
};
/// unsubscribe / ack / nack / extend.
struct BoolResult {
  bool value = false;
  bool operator==(const BoolResult&) const = default;
};
/// partitions(topic) (R29).
struct PartitionsResult {
  std::uint32_t count = 0;
  bool operator==(const PartitionsResult&) const = default;
};
/// drain's number of confirmations.
struct CountResult {
  std::uint64_t count = 0;
  bool operator==(const CountResult&) const = default;
};

/// redrive / purge_dead_letters: how many dead letters left.
struct MovedResult {
  std::uint64_t count = 0;
  bool operator==(const MovedResult&) const = default;
};
/// redrive_to: the offsets it published, in order.
struct OffsetsResult {
  std::vector<model::Offset> offsets;
  bool operator==(const OffsetsResult&) const = default;
};

/// subscriptions / topics: names in order.
struct NamesResult {
  std::vector<std::string> names;
  bool operator==(const NamesResult&) const = default;
};

/// Any return value of an op.
using Value = std::variant<Done, OffsetResult, BoolResult, CountResult,
                           std::vector<model::Received>, std::vector<model::Expired>, model::Stats,
                           std::vector<model::DeadLetter>, NamesResult, MovedResult, OffsetsResult,
                           model::Lag, PartitionsResult, model::Membership, model::GroupStats>;

/// What one op did: its error (then `value` is Done) or value, plus its handler calls.
struct Outcome {
  std::optional<model::ErrorCode> error;
  Value value;
  std::vector<model::HandlerCall> calls;
  bool operator==(const Outcome&) const = default;
};

/// Multi-line readable form: the result on the first line, then one line per handler call.
std::string print(const Outcome& outcome);

}  // namespace oplang
