// The seam of the conformance kit: an engine the model-based suite can drive. The kit
// speaks the operation language (oplang/ops.h); a target serves the part of it an outside
// broker can (SPEC "Conformance"), and answers in the model's terms (oplang::Outcome).
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "oplang/ops.h"
#include "oplang/outcome.h"

namespace conformance {

/// The engine itself failed (a server that died, a connection lost, a reply that never
/// came): the run stops and reports it as such, never as a contract violation.
class TargetFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Whether op is in the common subset every target serves.
bool in_subset(const oplang::Op& op);

/// Whether op is a create_topic that keeps the newest N > 0 messages, and nothing else
/// bounds it (no byte limit, one partition): retention an engine with a length cap serves
/// (Redis's MAXLEN), not in the common subset because JetStream's adapter has no cap yet.
bool retention_by_messages(const oplang::Op& op);

/// Whether op is a subscribe_pull of the common subset but for a max_in_flight > 0 (R22):
/// what an engine with a cap on unacknowledged messages serves (JetStream's MaxAckPending).
bool pull_with_max_in_flight(const oplang::Op& op);

/// Whether op is a push subscribe with no group whose handler script only answers (no side
/// effects, no idempotent wrapper, back-off, durable attempts or resubscribe; a start at
/// the beginning or the end), or a drain: R8 as an engine that pushes to one consumer serves
/// it (JetStream's push consumers), the handler's answers its acks.
bool push_without_effects(const oplang::Op& op);

/// Whether op is a nack by offset with a delay (R24): what an engine with a delayed retry
/// serves (JetStream's `-NAK {"delay": ...}`).
bool nack_with_delay(const oplang::Op& op);

/// One engine under test. Ops in the common subset: create_topic (no retention; see serves),
/// delete_topic, publish (payload, headers), subscribe_pull (header filter, ack timeout,
/// max deliveries, start at the beginning or the end; no backoff; a max_in_flight where served, see
/// pull_with_max_in_flight), unsubscribe, poll, ack, nack (no delay), term (by offset), extend (by
/// offset, by the subscription's ack timeout: a target throws std::invalid_argument for another
/// extension it cannot express), advance, expire, dead_letters. Not thread-safe: one step at a time
/// (workers() are the way to run calls at once).
class Target {
 public:
  virtual ~Target() = default;
  /// The name reports use ("inproc", "jetstream", "redis").
  [[nodiscard]] virtual std::string name() const = 0;
  /// Whether step serves op: the common subset, and what this engine adds to it (see
  /// retention_by_messages, pull_with_max_in_flight). The generator asks, so scripts use what the
  /// engine serves.
  [[nodiscard]] virtual bool serves(const oplang::Op& op) const { return in_subset(op); }
  /// Runs one op of the subset and returns what the engine did. Throws
  /// std::invalid_argument for an op outside the subset, TargetFailure if the engine failed.
  virtual oplang::Outcome step(const oplang::Op& op) = 0;
  /// How many model milliseconds an engine on real time has run ahead of the model's clock
  /// (calls take time; `advance` catches up). A run whose lag passes half the margin is
  /// void: it no longer says which side of a deadline a call was. 0 on the model's clock.
  [[nodiscard]] virtual model::Millis lag() const { return 0; }
  /// Whether a subscription's header filter is the adapter's, not the engine's (it reads every
  /// message and settles those the filter passes over itself): the engine's own counts, such
  /// as lag (R27), then include what the adapter has not passed over yet, so scripts ask them
  /// only of subscriptions without a filter.
  [[nodiscard]] virtual bool filter_is_the_adapters() const { return false; }
  /// A second client of the same engine, for parallel runs (conformance/parallel.h): it
  /// serves poll, ack and nack on the subscriptions that exist when it is made, at the
  /// target's clock as it is then, and several workers may step on their own threads at
  /// once while the target itself is idle. Destroy workers before the target. nullptr: the
  /// engine has no such client. Throws TargetFailure.
  virtual std::unique_ptr<Target> worker() { return nullptr; }
  /// R13's counters of a subscription as the engine keeps them, read while the target is
  /// idle. nullopt: the engine keeps none (JetStream counts differently), and the history
  /// checkers skip their counters check. Throws TargetFailure.
  virtual std::optional<model::Stats> stats(const std::string& /*topic*/,
                                            const std::string& /*subscription*/) {
    return std::nullopt;
  }
};

}  // namespace conformance
