#include "reached.h"

#include <rapidcheck.h>

#include <algorithm>
#include <type_traits>
#include <variant>

#include "op_generators.h"

namespace props {

void Reached::observe(const oplang::Op& op, const oplang::Outcome& outcome) {
  pairs.observe(op, outcome);
  if (outcome.error) states.insert("typed error");
  publishes_in_a_row = std::holds_alternative<oplang::Publish>(op) ? publishes_in_a_row + 1 : 0;
  if (publishes_in_a_row >= 5) states.insert("5 publishes in a row");
  if (std::holds_alternative<oplang::Drain>(op) && outcome.calls.size() >= 5) {
    states.insert("drain of 5+ calls");
  }
  for (const auto& call : outcome.calls) {
    if (call.attempt > 1) states.insert("redelivery");
    if (call.attempt >= 3) states.insert("offer attempt 3+");
    if (call.effect == "idempotent -> repeat") states.insert("idempotent repeat");
    if (call.effect.rfind("unsubscribe -> true", 0) == 0) states.insert("unsubscribe in handler");
    if (call.effect.rfind("publish -> ", 0) == 0 && call.effect != "publish -> unknown_topic") {
      states.insert("publish in handler");
    }
    if (call.effect == "seek -> ok") states.insert("seek in handler");
    if (call.effect == "unsubscribe -> unknown_topic") states.insert("unsubscribe unknown topic");
  }
  if (std::holds_alternative<oplang::Seek>(op) && !outcome.error) states.insert("seek");
  // R22: a poll on a bounded subscription that got less than it asked for while the
  // subscription held its bound (as counted here, a lower bound: so it surely did).
  if (const auto* o = std::get_if<oplang::SubscribePull>(&op);
      o != nullptr && !outcome.error && o->max_in_flight > 0) {
    bounded.emplace(std::pair(o->topic, o->name), std::pair(o->max_in_flight, std::size_t{0}));
  }
  if (const auto* o = std::get_if<oplang::Poll>(&op)) {
    auto it = bounded.find({o->topic, o->sub});
    const auto* got = std::get_if<std::vector<model::Received>>(&outcome.value);
    if (it != bounded.end() && got != nullptr) {
      it->second.second += got->size();
      if (got->size() < o->max && it->second.second >= it->second.first) {
        states.insert("poll held back by max_in_flight");
      }
    }
  }
  if (const auto* o = std::get_if<oplang::Unsubscribe>(&op)) bounded.erase({o->topic, o->name});
  if (std::holds_alternative<oplang::Expire>(op) || std::holds_alternative<oplang::Seek>(op) ||
      std::holds_alternative<oplang::Restart>(op) || std::holds_alternative<oplang::Crash>(op)) {
    for (auto& [key, bound] : bounded) bound.second = 0;
  }
  auto settled = [&](const std::string& topic, const std::string& sub) {
    auto it = bounded.find({topic, sub});
    if (it != bounded.end() && oplang::accepted(outcome.value).value_or(false) &&
        it->second.second > 0) {
      --it->second.second;
    }
  };
  if (const auto* o = std::get_if<oplang::Ack>(&op)) settled(o->topic, o->sub);
  if (const auto* o = std::get_if<oplang::Nack>(&op)) settled(o->topic, o->sub);
  if (const auto* o = std::get_if<oplang::Term>(&op)) settled(o->topic, o->sub);
  if (const auto* dead = std::get_if<std::vector<model::DeadLetter>>(&outcome.value)) {
    for (const auto& d : *dead) {
      if (d.reason == "terminated") states.insert("terminated dead letter");
      if (d.reason == "max deliveries") states.insert("spent after a restart");  // R34
    }
  }
  // R25-R28: the controls doing something.
  if (const auto* moved = std::get_if<oplang::MovedResult>(&outcome.value); moved && moved->count) {
    if (std::holds_alternative<oplang::Redrive>(op)) states.insert("redrive moved");
    if (std::holds_alternative<oplang::Purge>(op)) states.insert("dead letters purged");
  }
  if (const auto* o = std::get_if<oplang::OffsetsResult>(&outcome.value);
      o && !o->offsets.empty()) {
    states.insert("redriven to a topic");
  }
  if (const auto* o = std::get_if<oplang::Pause>(&op); o && !outcome.error) {
    paused.insert({o->topic, o->name});
  }
  if (const auto* o = std::get_if<oplang::Resume>(&op)) paused.erase({o->topic, o->name});
  if (std::holds_alternative<oplang::Restart>(op) || std::holds_alternative<oplang::Crash>(op)) {
    paused.clear();
  }
  if (const auto* o = std::get_if<oplang::Poll>(&op); o && paused.contains({o->topic, o->sub})) {
    states.insert("poll while paused");
  }
  if (std::holds_alternative<oplang::Drain>(op) && !paused.empty()) {
    states.insert("drain while paused");
  }
  if (const auto* l = std::get_if<model::Lag>(&outcome.value); l && l->oldest_age > 0) {
    states.insert("lag with age");
  }
  if (std::holds_alternative<oplang::SeekToTime>(op) && !outcome.error) {
    states.insert("seek to time");
  }
  // R31: an ordered, unbounded subscription hands out a first offer that was held back by
  // its key: below an offset it handed out before, or after a poll that came back short with
  // no publish since (so the message was there then).
  if (const auto* o = std::get_if<oplang::SubscribePull>(&op); o && !outcome.error) {
    if (o->ordered_by_key && o->max_in_flight == 0) ordered.try_emplace({o->topic, o->name});
  }
  if (const auto* o = std::get_if<oplang::Poll>(&op)) {
    auto it = ordered.find({o->topic, o->sub});
    const auto* got = std::get_if<std::vector<model::Received>>(&outcome.value);
    if (it != ordered.end() && got != nullptr && !paused.contains(it->first)) {
      OrderedSeen& seen = it->second;
      for (const auto& r : *got) {
        if (r.attempt == 1 && (seen.came_back_short || r.offset + 1 < seen.high)) {
          states.insert("key held back, then handed out");
        }
        seen.high = std::max(seen.high, r.offset + 1);
      }
      seen.came_back_short = got->size() < o->max;
    }
  }
  if (const auto* o = std::get_if<oplang::Unsubscribe>(&op)) ordered.erase({o->topic, o->name});
  // A publish to a topic (or to the partitioned topic it is a partition of) may be what a
  // later poll hands out; seeks, restarts and drains (handlers publish) may too.
  std::string published;
  if (const auto* o = std::get_if<oplang::Publish>(&op)) published = o->topic;
  if (const auto* o = std::get_if<oplang::PublishTo>(&op)) published = o->topic;
  const bool anything =
      std::holds_alternative<oplang::Seek>(op) || std::holds_alternative<oplang::Restart>(op) ||
      std::holds_alternative<oplang::Crash>(op) || std::holds_alternative<oplang::Drain>(op);
  for (auto& [key, seen] : ordered) {
    const std::string& topic = key.first;
    if (anything) seen.high = 0;
    if (anything ||
        (!published.empty() && (topic == published || topic.rfind(published + "-", 0) == 0))) {
      seen.came_back_short = false;
    }
  }
  // R29: routing by key, messages handed out from a partition, and the two typed errors.
  if (const auto* o = std::get_if<oplang::Publish>(&op); o && !o->key.empty()) {
    const auto* r = std::get_if<oplang::OffsetResult>(&outcome.value);
    if (r != nullptr && r->partition) states.insert("keyed publish on a partition");
  }
  const auto on_partition = [](const std::string& topic) {
    return topic.size() > 2 && topic[topic.size() - 2] == '-';
  };
  for (const auto& call : outcome.calls) {
    if (on_partition(call.topic)) states.insert("delivery on a partition");
  }
  if (const auto* o = std::get_if<oplang::Poll>(&op); o && on_partition(o->topic)) {
    const auto* got = std::get_if<std::vector<model::Received>>(&outcome.value);
    if (got != nullptr && !got->empty()) states.insert("delivery on a partition");
  }
  if (outcome.error == model::ErrorCode::kPartitionOutOfRange) {
    states.insert("partition out of range");
  }
  if (const auto* o = std::get_if<oplang::CreateTopic>(&op); o && !outcome.error) {
    if (o->partitions > 1) partitioned.insert(o->name);
    if (o->if_absent && outcome.value == oplang::Value{oplang::BoolResult{false}}) {
      states.insert("topic already there");
    }
  }
  if (const auto* o = std::get_if<oplang::CreateTopic>(&op);
      o && o->if_absent && outcome.error == model::ErrorCode::kOptionsMismatch) {
    states.insert("topic there with other options");
  }
  if (const auto* o = std::get_if<oplang::DeleteTopic>(&op); o && !outcome.error) {
    partitioned.erase(o->name);
    if (with_publisher.contains(o->name)) deleted_under_publisher.insert(o->name);
  }
  // R2: a Publisher made before its topic was deleted (the topic may exist again since).
  if (const auto* o = std::get_if<oplang::Publish>(&op); o && o->via_publisher) {
    if (deleted_under_publisher.contains(o->topic)) {
      states.insert("publish via a Publisher after a delete");
    }
    if (!outcome.error) with_publisher.insert(o->topic);
  }
  // R29: the partitioned topic itself answered end_offset, or stats or lag of a name that
  // every partition has (a group's).
  if (!outcome.error) {
    std::visit(
        [this](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, oplang::EndOffset> ||
                        std::is_same_v<T, oplang::GetStats> || std::is_same_v<T, oplang::GetLag>) {
            if (partitioned.contains(o.topic)) states.insert("totals of a partitioned topic");
          }
        },
        op);
  }
  if (outcome.error == model::ErrorCode::kWrongKind) {
    std::visit(
        [this](const auto& o) {
          if constexpr (requires { o.topic; }) {
            if (partitioned.contains(o.topic))
              states.insert("partitioned topic named for a partition");
          }
        },
        op);
  }
  // R32: a rebalance of a group that had members, a poll_group that got a message back
  // after it moved (attempt > 1 in a later generation), and an answer refused by fencing.
  if (const auto* m = std::get_if<model::Membership>(&outcome.value);
      m != nullptr && std::holds_alternative<oplang::JoinGroup>(op) && m->generation > 1) {
    states.insert("group rebalanced");
  }
  if (const auto* j = std::get_if<oplang::JoinGroupPush>(&op); j != nullptr && !outcome.error) {
    push_members.emplace(j->topic, j->member);
    const auto* m = std::get_if<model::Membership>(&outcome.value);
    if (m != nullptr && m->generation > 1) states.insert("push group rebalanced");
  }
  for (const auto& call : outcome.calls) {
    for (const auto& [topic, member] : push_members) {
      if (call.subscription != member || call.topic.rfind(topic, 0) != 0) continue;
      states.insert("push group delivery");
      if (call.attempt > 1) states.insert("push group redelivery");
    }
  }
  if (std::holds_alternative<oplang::PollGroup>(op)) {
    const auto* got = std::get_if<std::vector<model::Received>>(&outcome.value);
    if (got != nullptr && !got->empty()) states.insert("group delivery");
    if (got != nullptr) {
      for (const auto& r : *got) {
        if (r.attempt > 1) states.insert("group redelivery");
      }
    }
  }
  if (const auto* o = std::get_if<oplang::Ack>(&op); o != nullptr && o->generation != 0) {
    if (const std::optional<bool> yes = oplang::accepted(outcome.value)) {
      states.insert(*yes ? "group ack accepted" : "group ack refused");
    }
  }
  // The observations (issue 13): an unknown topic, and a log whose oldest kept offset moved.
  const bool observation = std::holds_alternative<oplang::Subscriptions>(op) ||
                           std::holds_alternative<oplang::EndOffset>(op) ||
                           std::holds_alternative<oplang::OldestOffset>(op);
  if (observation && outcome.error == model::ErrorCode::kUnknownTopic) {
    states.insert("observation unknown topic");
  }
  if (const auto* r = std::get_if<oplang::OffsetResult>(&outcome.value)) {
    if (std::holds_alternative<oplang::OldestOffset>(op) && r->offset > 0) {
      states.insert("oldest offset moved");
    }
  }
  if (std::holds_alternative<oplang::Unsubscribe>(op) &&
      outcome.error == model::ErrorCode::kUnknownTopic) {
    states.insert("unsubscribe unknown topic");
  }
  // R10: seek, stats or dead_letters that found a push group by its own name.
  if (!outcome.error) {
    const std::string* name = nullptr;
    if (const auto* o = std::get_if<oplang::Seek>(&op)) name = &o->name;
    if (const auto* o = std::get_if<oplang::GetStats>(&op)) name = &o->name;
    if (const auto* o = std::get_if<oplang::GetDeadLetters>(&op)) name = &o->name;
    if (name != nullptr && is_group_name(*name)) states.insert("by group name");
  }
  if (const auto* rs = std::get_if<std::vector<model::Received>>(&outcome.value)) {
    for (const auto& r : *rs) {
      if (r.attempt > 1) states.insert("redelivery");
      if (r.attempt >= 3) states.insert("offer attempt 3+");
    }
    if (!rs->empty() && std::holds_alternative<oplang::PollWait>(op)) {
      states.insert("poll_wait received");
    }
  }
  // R14 (issue 13, finding 7): poll_wait's bad arguments, reported before its names.
  if (std::holds_alternative<oplang::PollWait>(op) &&
      outcome.error == model::ErrorCode::kInvalidArgument) {
    states.insert("poll_wait invalid argument");
  }
  if (const auto* ex = std::get_if<std::vector<model::Expired>>(&outcome.value)) {
    if (ex->size() >= 2) states.insert("expire of 2+");
    for (const auto& e : *ex) states.insert(e.dead_lettered ? "dead letter" : "expired back");
  }
  if (const auto* st = std::get_if<model::Stats>(&outcome.value)) {
    if (st->dead_lettered > 0) states.insert("dead letter");
    if (st->skipped > 0) states.insert("retention gap");
    if (st->filtered > 0) states.insert("filtered");
    if (st->committed < st->cursor) states.insert("committed behind cursor");  // R13
    if (st->backlog >= 5) states.insert("backlog 5+");
  }
  if (const std::optional<bool> yes = oplang::accepted(outcome.value); yes && *yes) {
    if (std::holds_alternative<oplang::Ack>(op)) states.insert("ack accepted");
    if (std::holds_alternative<oplang::Term>(op)) states.insert("term accepted");
    if (const auto* n = std::get_if<oplang::Nack>(&op); n != nullptr && n->delay) {
      states.insert("delayed nack accepted");
    }
  }
  // R20: a restart left a push subscription or group waiting for its handler.
  if (const auto* o = std::get_if<oplang::Topics>(&op); o != nullptr && o->waiting) {
    const auto* names = std::get_if<oplang::NamesResult>(&outcome.value);
    if (names != nullptr && !names->names.empty()) states.insert("waiting for a handler");
  }
  // R20: resubscribe resumed one with the options the broker saved.
  if (const auto* o = std::get_if<oplang::Subscribe>(&op); o != nullptr && o->saved) {
    if (!outcome.error) states.insert("resumed by resubscribe");
  }
  // R11: each reason an answer can be refused for.
  if (const auto* a = std::get_if<model::AckResult>(&outcome.value); a != nullptr && !*a) {
    states.insert(std::string("answer ") + model::to_string(a->outcome));
  }
  if (const auto* b = std::get_if<oplang::BoolResult>(&outcome.value)) {
    const bool wait = std::holds_alternative<oplang::WaitIdle>(op) ||
                      std::holds_alternative<oplang::WaitDelivered>(op);
    if (wait) states.insert(b->value ? "wait: nothing left" : "wait: work left");
  }
}

void Reached::tag() const {
  for (const auto& s : states) RC_TAG(s);
}

}  // namespace props
