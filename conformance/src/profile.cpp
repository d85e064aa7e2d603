#include "conformance/profile.h"

#include <algorithm>
#include <stdexcept>
#include <variant>

namespace conformance {

namespace {

// Everything the kit says about a switch, one row each, so a new switch is one row here.
struct SwitchInfo {
  Switch key;
  const char* name;
  const char* rule;
  const char* sentence;
};

constexpr SwitchInfo kSwitches[] = {
    {Switch::kLateAckAccepted, "late_ack_accepted", "R11",
     "an ack, nack or term from the member a message was last given to still settles it "
     "after its deadline passed, until the message is offered again"},
    {Switch::kRedeliveryInReturnOrder, "redelivery_in_return_order", "R5",
     "returned messages are offered in the order they came back (a nack at once, a delayed "
     "nack when its wait ended, an expiry when its deadline passed), not lowest offset first"},
    {Switch::kDeadLetterWhenOfferedAgain, "dead_letter_when_offered_again", "R7",
     "a pull subscription's message whose last delivery failed comes back like any other and "
     "is dead-lettered when it would be offered again, not when it failed (a push consumer "
     "offers again at once: there it dies at the failure)"},
    {Switch::kEngineExpires, "engine_expires", "R11",
     "the engine expires held messages on its own clock; `expire` reports nothing"},
    {Switch::kDeadLetterReasonUnknown, "dead_letter_reason_unknown", "R7",
     "a dead letter reports its message, its attempts and whether a term ended it (its own "
     "advisory), not why else or when it died"},
    {Switch::kConcurrentPollsInterleave, "concurrent_polls_interleave", "R11",
     "polls that wait at the same time share the messages one by one: one poll's batch need "
     "not be consecutive, and a poll may come back short while another takes the rest (a "
     "batch is not one step)"},
    {Switch::kNoServerDeadline, "no_server_deadline", "R11",
     "the server keeps no deadline: a held message whose ack timeout passed comes back at the "
     "adapter's next call (Redis: the next poll's XAUTOCLAIM, by min-idle time; RabbitMQ: "
     "`expire`, a basic.nack with requeue), with no moment of its own; the kit calls "
     "`expire` right after every `advance`, and what it reports is still compared"},
    {Switch::kTrimmedHeldKeepsOnlyItsOffset, "trimmed_held_keeps_only_its_offset", "R3",
     "a held message that MAXLEN trimmed away keeps only its id in the pending list, and only "
     "until the next poll of its group: that poll's XAUTOCLAIM drops it, idle or not, as an "
     "extend's XCLAIM does (counted as skipped); until then an ack settles it and a nack or "
     "an expiry returns it (then it is skipped), and its dead letter (a term, or its last "
     "delivery failing) has no payload or headers"},
    {Switch::kAckAfterNackSettles, "ack_after_nack_settles", "R11",
     "an ack or term from the member that nacked a message still settles it, until the "
     "message is offered again"},
    {Switch::kLateAckByPreviousHolder, "late_ack_by_previous_holder", "R11",
     "an ack, nack or term from a member the message was given to before still applies to it "
     "after it was offered to another member (or to the same one again), as long as it is not "
     "settled: an ack or term settles it, a nack gives it back"},
    {Switch::kAcksAlwaysConfirmed, "acks_always_confirmed", "R11",
     "the server answers every ack, nack and term of a message the member was given, whether "
     "or not it settled anything (a second ack, a nack after the ack); only what the polls "
     "after it show tells what it did"},
    {Switch::kTermAlwaysAnnounced, "term_always_announced", "R23",
     "every term from a member the message was given to is announced as terminated (a dead "
     "letter with the delivery count that member was given), also a term of a message "
     "already acked, dead or terminated before: two terms, two dead letters"},
    {Switch::kRetentionTerminatesHeld, "retention_terminates_held", "R3",
     "a held or returned message the stream's MaxMsgs discards is terminated by the server "
     "at once: announced as terminated (a dead letter, whose delivery count is its "
     "redeliveries, not its deliveries: its attempts are not compared), never offered "
     "again, and its holder's ack changes nothing"},
    {Switch::kSeekMovesOnlyTheCursor, "seek_moves_only_the_cursor", "R12",
     "a seek (XGROUP SETID) moves only the group's cursor: what is held stays held and what "
     "was returned still comes back, with their delivery counts, and one the cursor reaches "
     "again while still pending is handed out anew to whoever polls, its delivery count "
     "starting over at 1"},
    {Switch::kRetryWaitHoldsAPlace, "retry_wait_holds_a_place", "R22",
     "a message a nack or an expiry returned keeps its place under max_in_flight (MaxAckPending "
     "counts it) until it is offered again: while it waits for a delayed retry, no new message "
     "takes its place; offering it again is never held back by the bound"},
    {Switch::kAnswersResetARetryWait, "answers_reset_a_retry_wait", "R24",
     "a nack or an in-progress ack, through any delivery of a message that was returned and "
     "not yet offered again, sets its wait anew: a nack to its delay from now (a plain nack: "
     "offered again at once), an in-progress ack of one still waiting to the ack timeout from "
     "now"},
    {Switch::kLagAgeUnknown, "lag_age_unknown", "R27",
     "lag reports how many messages are not yet confirmed but not how old the oldest of them "
     "is (JetStream's consumer info has no age and no list of pending sequences, and its ack "
     "floor stays below a message that died of max deliveries until a later ack moves it; "
     "Redis's XINFO GROUPS has no age): the adapter answers an age of 0, and only the count "
     "is compared"},
    {Switch::kLagCountsTrimmed, "lag_counts_trimmed", "R27",
     "lag (XINFO GROUPS: pending plus lag) counts what MAXLEN trimmed: for good, every entry "
     "trimmed before the group's cursor reached it, once the group's read counter is known "
     "(from its creation at the end with ENTRIESREAD, its first read of a new entry, or a "
     "seek, SETID with ENTRIESREAD, which starts the count again; before that, kept entries "
     "only); and an entry returned (XCLAIM) while kept and trimmed after, which stays pending "
     "until the group's next poll (its XAUTOCLAIM drops it; an XCLAIM of one already trimmed "
     "drops it at once)"},
    {Switch::kAnswersNameNoReason, "answers_name_no_reason", "R11",
     "ack, nack, term and extend are answered yes or no, never why: a refusal does not say "
     "whether the message was late, held by another member, settled already or never handed "
     "out, so only whether an answer was taken is compared"},
    {Switch::kStartsAtTheEnd, "starts_at_the_end", "R4",
     "a subscription is given only what is published after it is made: one asked to start at "
     "the beginning starts at the end (a queue bound to an exchange holds nothing routed "
     "before)"},
    {Switch::kReturnedToTheBack, "returned_to_the_back", "R5",
     "a subscription without max deliveries is one queue: a returned message goes behind "
     "every message published before it came back (and ahead of later ones), not ahead of "
     "every new message; with max deliveries (a quorum queue's delivery limit) returned "
     "messages still come first"},
};

// The row of s; nullptr for a value outside the enum (its texts then read "?").
const SwitchInfo* info_of(Switch s) {
  for (const SwitchInfo& i : kSwitches) {
    if (i.key == s) return &i;
  }
  return nullptr;
}

}  // namespace

const char* rule_of(Switch s) {
  const SwitchInfo* i = info_of(s);
  return i != nullptr ? i->rule : "?";
}

const char* name_of(Switch s) {
  const SwitchInfo* i = info_of(s);
  return i != nullptr ? i->name : "?";
}

const char* sentence_of(Switch s) {
  const SwitchInfo* i = info_of(s);
  return i != nullptr ? i->sentence : "?";
}

bool Profile::has(Switch s) const {
  return std::find(switches.begin(), switches.end(), s) != switches.end();
}

Profile Profile::without(Switch s) const {
  Profile p = *this;
  std::erase(p.switches, s);
  return p;
}

Profile strict_profile() { return Profile{"strict", {}}; }

Profile jetstream_profile() {
  return Profile{
      "jetstream",
      {Switch::kLateAckAccepted, Switch::kRedeliveryInReturnOrder,
       Switch::kDeadLetterWhenOfferedAgain, Switch::kEngineExpires,
       Switch::kDeadLetterReasonUnknown, Switch::kConcurrentPollsInterleave,
       Switch::kAckAfterNackSettles, Switch::kLateAckByPreviousHolder, Switch::kAcksAlwaysConfirmed,
       Switch::kTermAlwaysAnnounced, Switch::kRetentionTerminatesHeld,
       Switch::kRetryWaitHoldsAPlace, Switch::kAnswersResetARetryWait, Switch::kLagAgeUnknown,
       Switch::kAnswersNameNoReason}};
}

Profile redis_profile() {
  return Profile{"redis",
                 {Switch::kNoServerDeadline, Switch::kTrimmedHeldKeepsOnlyItsOffset,
                  Switch::kSeekMovesOnlyTheCursor, Switch::kLagAgeUnknown,
                  Switch::kLagCountsTrimmed, Switch::kAnswersNameNoReason}};
}

Profile rabbitmq_profile() {
  return Profile{
      "rabbitmq",
      {Switch::kStartsAtTheEnd, Switch::kRedeliveryInReturnOrder, Switch::kReturnedToTheBack,
       Switch::kNoServerDeadline, Switch::kDeadLetterReasonUnknown, Switch::kAnswersNameNoReason}};
}

Profile profile_named(const std::string& name) {
  if (name == "strict" || name == "inproc") return strict_profile();
  if (name == "jetstream") return jetstream_profile();
  if (name == "redis") return redis_profile();
  if (name == "rabbitmq") return rabbitmq_profile();
  throw std::invalid_argument("unknown profile '" + name +
                              "' (strict, jetstream, redis, rabbitmq)");
}

bool expires_with_advance(const Profile& p) {
  return p.has(Switch::kEngineExpires) || p.has(Switch::kNoServerDeadline);
}

model::Profile model_switches(const Profile& p) {
  model::Profile m;
  m.late_ack_accepted = p.has(Switch::kLateAckAccepted);
  m.redelivery_in_return_order = p.has(Switch::kRedeliveryInReturnOrder);
  m.dead_letter_when_offered_again = p.has(Switch::kDeadLetterWhenOfferedAgain);
  m.trimmed_held_keeps_only_its_offset = p.has(Switch::kTrimmedHeldKeepsOnlyItsOffset);
  m.ack_after_nack_settles = p.has(Switch::kAckAfterNackSettles);
  m.late_ack_by_previous_holder = p.has(Switch::kLateAckByPreviousHolder);
  m.acks_always_confirmed = p.has(Switch::kAcksAlwaysConfirmed);
  m.term_always_announced = p.has(Switch::kTermAlwaysAnnounced);
  m.retention_terminates_held = p.has(Switch::kRetentionTerminatesHeld);
  m.seek_moves_only_the_cursor = p.has(Switch::kSeekMovesOnlyTheCursor);
  m.retry_wait_holds_a_place = p.has(Switch::kRetryWaitHoldsAPlace);
  m.answers_reset_a_retry_wait = p.has(Switch::kAnswersResetARetryWait);
  m.lag_counts_trimmed = p.has(Switch::kLagCountsTrimmed);
  m.answers_name_no_reason = p.has(Switch::kAnswersNameNoReason);
  m.starts_at_the_end = p.has(Switch::kStartsAtTheEnd);
  m.returned_to_the_back = p.has(Switch::kReturnedToTheBack);
  return m;
}

bool agree(const oplang::Op& op, const oplang::Outcome& model, const oplang::Outcome& engine,
           const Profile& p, std::optional<model::Offset> oldest) {
  if (model == engine) return true;
  if (model.error != engine.error) return false;
  if (std::holds_alternative<oplang::Expire>(op) && p.has(Switch::kEngineExpires)) return true;
  if (std::holds_alternative<oplang::GetLag>(op) && p.has(Switch::kLagAgeUnknown)) {
    const auto* a = std::get_if<model::Lag>(&model.value);
    const auto* b = std::get_if<model::Lag>(&engine.value);
    return a != nullptr && b != nullptr && a->messages == b->messages;
  }
  const bool reason_unknown = p.has(Switch::kDeadLetterReasonUnknown);
  const bool retention_count = p.has(Switch::kRetentionTerminatesHeld) && oldest.has_value();
  if (std::holds_alternative<oplang::GetDeadLetters>(op) && (reason_unknown || retention_count)) {
    const auto* a = std::get_if<std::vector<model::DeadLetter>>(&model.value);
    const auto* b = std::get_if<std::vector<model::DeadLetter>>(&engine.value);
    if (a == nullptr || b == nullptr || a->size() != b->size()) return false;
    for (std::size_t i = 0; i < a->size(); ++i) {
      model::DeadLetter x = (*a)[i];
      model::DeadLetter y = (*b)[i];
      // Only a term has an advisory of its own: terminated or not is still judged.
      if (reason_unknown) {
        if ((x.reason == "terminated") == (y.reason == "terminated")) x.reason = y.reason;
        x.died_at = y.died_at;
      }
      // The server announces a message its stream discarded with its redelivery count, not
      // its deliveries (JetStreamRawProbe.RetentionTerminatesHeld).
      if (retention_count && x.offset < *oldest) x.attempts = y.attempts;
      if (!(x == y)) return false;
    }
    return true;
  }
  return false;
}

}  // namespace conformance
