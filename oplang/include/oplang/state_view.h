// The state a script leaves after a step, as the spec site draws it: each topic's log, each
// subscription's cursor and committed position, held messages with holder and deadline,
// the times returned messages wait until, and dead letters. Read through model::Model's
// public API only, on a copy of the model, so looking changes nothing of the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "oplang/ops.h"

namespace oplang {

/// One kept message of a log: its offset and payload.
struct LogCell {
  model::Offset offset = 0;
  std::string payload;
};

/// One name subscriptions() lists, or a push group's name (R10).
struct SubscriptionView {
  std::string name;
  /// "pull", "push", "push group", "consumer group" (R32, on a partition or its topic) or
  /// "no handler" (R20: a push subscription a restart left without one).
  std::string kind;
  model::Stats stats;  // R13; cursor and committed among them
  /// Pull only (the model shows no other): offset, holder, deadline, by offset.
  std::vector<model::Model::HeldView> held;
  /// Pull only: when each returned message that waits (R24) may be offered again, in offset
  /// order. The model does not say which offset waits until when, nor which returned
  /// messages wait for nothing.
  std::vector<model::Millis> retry_waits;
  std::vector<model::DeadLetter> dead;  // R7, in the order they died
};

struct TopicView {
  std::string name;
  std::uint32_t partitions = 1;         // > 1: a partitioned topic (R29), no log of its own
  std::optional<model::Offset> oldest;  // none where the model refuses (a partitioned topic)
  std::optional<model::Offset> end;
  std::vector<LogCell> log;  // kept messages, oldest first
  std::vector<SubscriptionView> subscriptions;
};

struct StateView {
  std::size_t step = 0;  // after this many steps (0: before the first)
  model::Millis now = 0;
  std::vector<TopicView> topics;                 // creation order
  std::vector<model::Model::GroupView> groups;   // consumer groups (R32)
  std::vector<std::string> waiting_for_handler;  // R20
};

/// What m holds now. m itself is not touched: stats, dead_letters and the log's payloads
/// are read on a copy (stats and dead_letters catch a subscription up past retention, R3;
/// the payloads come from a fresh pull subscription that polls the whole log).
StateView view(const model::Model& m);
/// Runs the first `steps` ops of script on a fresh model exactly as model_trace() does
/// (ModelRunner, run_step) and views the model after them. REQUIRES: steps <= script.size().
StateView state_after(const Script& script, std::size_t steps);
/// The view as one JSON object. Strings carry the model's bytes: each byte >= 0x80 is the
/// code point of the same number (\u0080..\u00ff), so the text is ASCII.
std::string to_json(const StateView& state);

}  // namespace oplang
