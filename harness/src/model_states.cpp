// R33: undecided calls, as a set of model states.
#include "harness/model_states.h"

#include <string>
#include <utility>
#include <variant>

namespace harness {
namespace {

/// The states an undecided call may have left, each failed (refusing until a reopen).
std::vector<oplang::ModelRunner> undecided(const oplang::ModelRunner& before,
                                           oplang::ModelRunner after, const oplang::Op& op,
                                           std::size_t offers) {
  std::vector<oplang::ModelRunner> out{before, std::move(after)};
  if (std::holds_alternative<oplang::Drain>(op)) {
    for (auto& m : partial_drains(before, offers, 0, true)) out.push_back(std::move(m));
  }
  if (std::holds_alternative<oplang::Expire>(op)) {
    for (auto& m : partial_expires(before)) out.push_back(std::move(m));
  }
  if (const auto* r = std::get_if<oplang::RedriveTo>(&op)) {
    // Its publishes come before the commit that drops the dead letters (R25).
    try {
      oplang::ModelRunner look = before;
      const std::size_t dead = look.model().dead_letters(r->topic, r->name).size();
      for (std::size_t n = 1; n <= dead; ++n) {
        oplang::ModelRunner partial = before;
        partial.model().redrive_to_interrupted(r->topic, r->name, r->to, n);
        out.push_back(std::move(partial));
      }
    } catch (const model::Error&) {
      // refused before it published anything
    }
  }
  // A group's first join records each partition's subscription in turn (R32): a failure
  // may leave the first few, without the group (a restart forgets groups anyway).
  const auto* pull = std::get_if<oplang::JoinGroup>(&op);
  const auto* push = std::get_if<oplang::JoinGroupPush>(&op);
  if (pull != nullptr || push != nullptr) {
    const std::string& topic = pull != nullptr ? pull->topic : push->topic;
    const std::string& group = pull != nullptr ? pull->group : push->group;
    std::size_t parts = 0;
    try {
      oplang::ModelRunner look = before;
      parts = look.model().partitions(topic);
    } catch (const model::Error&) {
    }
    for (std::size_t k = 1; parts > 1 && k < parts; ++k) {
      oplang::ModelRunner partial = before;
      try {
        for (std::size_t p = 0; p < k; ++p) {
          const std::string part = topic + "-" + std::to_string(p);
          if (pull != nullptr) {
            partial.model().subscribe_pull(
                part, group,
                {pull->filter, pull->ack_timeout, pull->max_deliveries, pull->start,
                 pull->max_in_flight, pull->backoff, pull->ordered_by_key, pull->durable_attempts});
          } else {
            model::PushOptions o;
            o.header_filter = push->filter;
            o.max_deliveries = push->max_deliveries;
            o.start = push->start;
            o.backoff = push->backoff;
            partial.model().subscribe(part, group, o);
          }
        }
      } catch (const model::Error&) {
        break;  // the join was refused before it recorded anything
      }
      out.push_back(std::move(partial));
    }
  }
  for (auto& m : out) m.model().fail_storage();
  return out;
}

}  // namespace

std::vector<oplang::ModelRunner> partial_drains(const oplang::ModelRunner& before,
                                                std::size_t offers, std::size_t called,
                                                bool effect_undecided) {
  std::vector<oplang::ModelRunner> out;
  // With effect_undecided, one offer more: the failing write may be its attempt's save
  // (R34), before its handler was called (the state of an offer whose effect was undone).
  const std::size_t last_offer = effect_undecided ? offers + 1 : offers;
  for (std::size_t n = called; n <= last_offer; ++n) {
    // The last offer answered; unanswered; unanswered with its handler's effect undone too.
    for (const int last : {0, 1, 2}) {
      if ((n == 0 && last > 0) || (last == 2 && !effect_undecided)) continue;
      if (n > offers && last < 2) continue;
      oplang::ModelRunner partial = before;
      try {
        partial.model().drain_offers(n, last > 0, last > 1);
      } catch (const model::Error&) {
      }
      partial.model().take_calls();
      out.push_back(std::move(partial));
    }
  }
  return out;
}

std::vector<oplang::ModelRunner> partial_expires(const oplang::ModelRunner& before) {
  // At least one name per subscription: more states than needed only repeat the last.
  std::size_t subscriptions = 0;
  for (const std::string& t : before.model().topics()) {
    try {
      subscriptions += before.model().subscriptions(t).size();
    } catch (const model::Error&) {
      // a topic with partitions holds none itself (they are listed as topics too)
    }
  }
  std::vector<oplang::ModelRunner> out;
  for (std::size_t k = 1; k < subscriptions; ++k) {
    oplang::ModelRunner partial = before;
    partial.model().expire(partial.model().now(), k);
    out.push_back(std::move(partial));
  }
  return out;
}

namespace {

using model::Offset;

// R21: why a damaged reopen's cut is not one recovery may make of `m` (restarted), or "".
std::string refused_cut(const model::Model& m, const oplang::Crash& crash,
                        const oplang::CutResult& cut) {
  if (cut.file.empty()) {
    return cut.topic.empty() && !cut.noticed ? "" : "nothing was damaged, yet recovery cut a log";
  }
  if (cut.topic.empty()) {
    if (crash.damage == oplang::Damage::kCorrupt && !cut.noticed)
      return "a flipped bit in a segment went unnoticed: no CorruptLog, no truncation reported";
    return "";
  }
  Offset model_end = 0;
  try {
    model_end = m.end_offset(cut.topic);
  } catch (const model::Error&) {
    return "the log of " + cut.topic + ", which the model does not have, lost its tail";
  }
  if (cut.end >= model_end) {
    return cut.topic + " ends at " + std::to_string(cut.end) +
           " after the reopen, the model's at " + std::to_string(model_end);
  }
  if (cut.end < cut.damaged) {
    return "recovery dropped " + cut.topic + " from offset " + std::to_string(cut.end) +
           ", below the damaged segment (base " + std::to_string(cut.damaged) + ")";
  }
  if (crash.damage == oplang::Damage::kCorrupt && !cut.corrupt && cut.end + 1 < model_end) {
    return "a flipped bit took " + cut.topic + " back from " + std::to_string(model_end) + " to " +
           std::to_string(cut.end) + " without CorruptLog: only the newest record may pass " +
           "for a torn write (a record followed by a good one is never dropped silently)";
  }
  if (!cut.corrupt && cut.end < cut.newest) {
    return "a cut without CorruptLog took " + cut.topic + " back to " + std::to_string(cut.end) +
           ", below its newest segment (base " + std::to_string(cut.newest) +
           "): only a torn tail of the newest segment may be cut silently";
  }
  return "";
}

}  // namespace

ModelStates::Verdict ModelStates::step_damaged(const oplang::Crash& crash,
                                               const oplang::Outcome& broker) {
  fault_armed_ = false;  // a fault that has not fired is forgotten at a reopen
  Verdict v;
  const oplang::Crash plain{crash.seed, oplang::Damage::kNone};
  const auto* cut = std::get_if<oplang::CutResult>(&broker.value);
  std::vector<oplang::ModelRunner> agree;
  for (auto& m : states_) {
    v.expected = m.step(plain);
    if (broker.error || cut == nullptr) {
      v.why = "a damaged reopen answers with what it cut (the runner repairs after CorruptLog)";
      continue;
    }
    const std::string why = refused_cut(m.model(), crash, *cut);
    if (!why.empty()) {
      v.why = why;
      continue;
    }
    if (!cut->topic.empty()) {
      // Retention applied again may find messages it had dropped (Model::lose_tail): the
      // model takes back those from the reopened log's oldest offset, and must then agree.
      m.model().lose_tail(cut->topic, cut->end, cut->oldest);
      const Offset oldest = m.model().oldest_offset(cut->topic);
      if (oldest != cut->oldest) {
        v.why = "the reopened " + cut->topic + " keeps from offset " + std::to_string(cut->oldest) +
                "; retention applied again to the model's " + "messages keeps from " +
                std::to_string(oldest);
        continue;
      }
    }
    agree.push_back(std::move(m));
  }
  if (!agree.empty()) {
    states_ = std::move(agree);
    v.expected = broker;
    v.agrees = true;
    v.why.clear();
  }
  return v;
}

ModelStates::Verdict ModelStates::step(const oplang::Op& op, const oplang::Outcome& broker) {
  if (const auto* crash = std::get_if<oplang::Crash>(&op);
      crash != nullptr && crash->damage != oplang::Damage::kNone) {
    return step_damaged(*crash, broker);
  }
  // Copied only while a fault may fire: the states before the call, should it be undecided.
  std::vector<oplang::ModelRunner> before;
  if (fault_armed_) before = states_;
  std::vector<oplang::Outcome> outcomes;
  for (auto& m : states_) outcomes.push_back(m.step(op));
  Verdict v;
  v.expected = outcomes.front();
  if (std::holds_alternative<oplang::Fault>(op)) fault_armed_ = true;
  if (std::holds_alternative<oplang::Restart>(op) || std::holds_alternative<oplang::Crash>(op)) {
    fault_armed_ = false;  // a fault that has not fired is forgotten at a reopen
  }
  std::vector<oplang::ModelRunner> agree;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i] == broker) agree.push_back(std::move(states_[i]));
  }
  if (!agree.empty()) {
    states_ = std::move(agree);
    v.expected = broker;  // what the states that stay answered (not the first state's)
    v.agrees = true;
    return v;
  }
  if (fault_armed_ && broker.error == model::ErrorCode::kIoError) {
    std::vector<oplang::ModelRunner> next;
    for (std::size_t i = 0; i < before.size(); ++i) {
      for (auto& m : undecided(before[i], std::move(states_[i]), op, broker.calls.size())) {
        next.push_back(std::move(m));
      }
    }
    states_ = std::move(next);
    fault_armed_ = false;  // the store refuses every call until a reopen
    v.agrees = true;
    v.undecided = true;
  }
  return v;
}

}  // namespace harness
