// Engine profiles: the places where an engine documents a rule other than the model's,
// each a named switch with a one-sentence rule (SPEC "Conformance"). Everything a profile
// does not switch is checked strictly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "oplang/ops.h"
#include "oplang/outcome.h"

namespace conformance {

/// One documented difference. Model switches change what the model does; observation
/// switches say which part of an outcome the engine cannot show.
enum class Switch {
  kLateAckAccepted,             // model: an ack or nack after the deadline still settles
  kRedeliveryInReturnOrder,     // model: returned messages come back in the order they returned
  kDeadLetterWhenOfferedAgain,  // model: a message that used its deliveries dies at the next poll
  kEngineExpires,               // observation: expiry runs in the engine; expire returns nothing
  kDeadLetterReasonUnknown,     // observation: a dead letter's reason and time are not reported
  kConcurrentPollsInterleave,   // parallel runs: concurrent polls share messages one by one
  kNoServerDeadline,            // schedule: a deadline has no moment of its own; expire follows
                                // every advance
  kTrimmedHeldKeepsOnlyItsOffset,  // model: a held message retention dropped has no body
                                   // left to dead-letter; the next poll or an extend
                                   // forgets it
  kAckAfterNackSettles,            // model: an ack or term by the member that nacked a message
                                   // still settles it until it is offered again
  kLateAckByPreviousHolder,        // model: a member a message was given to before settles it
                                   // (ack, nack, term) after it was offered to another
  kAcksAlwaysConfirmed,            // model: ack, nack and term answer true to any member the
                                   // message was ever given to, whether they settled anything
  kTermAlwaysAnnounced,            // model: every term from a member the message was given to
                                   // is a dead letter, settled before or not
  kRetentionTerminatesHeld,        // model: a held or returned message retention dropped is
                                   // terminated at once
  kSeekMovesOnlyTheCursor,         // model: a seek keeps what is held and returned; a held one
                                   // the cursor reaches again is handed out anew, attempt 1
  kRetryWaitHoldsAPlace,           // model: a returned message counts under max_in_flight
  kAnswersResetARetryWait,         // model: a nack or extend of a returned message by a member
                                   // it was given to sets its wait anew
  kLagAgeUnknown,                  // observation: lag reports how many messages wait, not how
                                   // old the oldest is
  kLagCountsTrimmed,               // model: lag counts for good what retention dropped before
                                   // the cursor reached it, once the subscription has read
  kAnswersNameNoReason,            // model: ack, nack, term and extend answer true or false,
                                   // not why (no AckOutcome)
  kStartsAtTheEnd,                 // model: a subscription from the beginning starts at the end
  kReturnedToTheBack,              // model: without max deliveries, a returned message goes
                                   // behind what was published before it came back
};

/// The SPEC rule a switch relaxes ("R11"), and its one-sentence statement.
const char* rule_of(Switch s);
const char* name_of(Switch s);
const char* sentence_of(Switch s);

/// An engine's switches.
struct Profile {
  std::string name;
  std::vector<Switch> switches;
  [[nodiscard]] bool has(Switch s) const;
  /// The same profile without s (to find which switch explains a difference).
  [[nodiscard]] Profile without(Switch s) const;
};

/// No switch: the model as SPEC.md states it.
Profile strict_profile();
/// NATS JetStream 2.9 as its documentation and the kit's runs describe it.
Profile jetstream_profile();
/// Redis 7 Streams through the kit's adapter (conformance/redis_target.h), as the kit's runs
/// describe it.
Profile redis_profile();
/// RabbitMQ 3.10 quorum queues through the kit's Python adapter
/// (conformance/adapters/rabbitmq), as the kit's runs describe them.
Profile rabbitmq_profile();
/// The profile named ("strict", "jetstream", "redis", "rabbitmq"); throws
/// std::invalid_argument.
Profile profile_named(const std::string& name);

/// Whether scripts judged under p call expire right after every advance (an engine with no
/// moment between a deadline passing and its message being given back).
bool expires_with_advance(const Profile& p);

/// The model's switches under p.
model::Profile model_switches(const Profile& p);

/// Whether the engine's outcome of op agrees with the model's under p's observation
/// switches (equal outcomes always agree). `oldest`: the model's oldest kept offset of op's
/// topic, for retention_terminates_held (a dead letter below it is compared without its
/// attempts).
bool agree(const oplang::Op& op, const oplang::Outcome& model, const oplang::Outcome& engine,
           const Profile& p, std::optional<model::Offset> oldest = std::nullopt);

}  // namespace conformance
