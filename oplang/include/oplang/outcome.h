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
/// unsubscribe, pause, ...; ack / nack / term / extend on an engine whose answers name no
/// reason (model::Profile::answers_name_no_reason; else their value is a model::AckResult).
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

/// A crash with damage at rest (R21): what the reopen did. The damaged file is a segment
/// of some topic's log; `topic` is the one whose log's end fell (if any), and `end` its end
/// after the reopen.
struct CutResult {
  std::string file;           // the damaged segment ("" if the disk held none)
  bool corrupt = false;       // the reopen threw CorruptLog (then one with repair opened it)
  bool noticed = false;       // it threw, or its RecoveryReport names a truncation
  std::string topic;          // "" when no log's end fell
  model::Offset end = 0;      // that log's end after the reopen
  model::Offset oldest = 0;   // and its oldest kept offset (R3 applied again)
  model::Offset damaged = 0;  // base offset of the damaged segment
  model::Offset newest = 0;   // base offset of the newest segment of the damaged one's log
  bool operator==(const CutResult&) const = default;
};

/// Any return value of an op.
using Value =
    std::variant<Done, OffsetResult, BoolResult, CountResult, std::vector<model::Received>,
                 std::vector<model::Expired>, model::Stats, std::vector<model::DeadLetter>,
                 NamesResult, MovedResult, OffsetsResult, model::Lag, PartitionsResult,
                 model::Membership, model::GroupStats, CutResult, model::AckResult>;

/// Whether an ack, nack, term or extend took effect: its AckResult's or BoolResult's
/// answer; none for any other value.
std::optional<bool> accepted(const Value& value);

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
