// Playing operation-language programs on broker_fiber and judging their histories
// (program_runner.h).
#include "program_runner.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "broker/broker.h"
#include "broker/idempotent.h"
#include "durability.h"
#include "history.h"
#include "oplang/text.h"
#include "simfs/sim_file_system.h"
#include "sync/sync.h"
#include "timing.h"
#include "waits.h"

#ifndef FIBER_REPLAY_PATH
#define FIBER_REPLAY_PATH "fiber-replay"
#endif

namespace fiberprop {
namespace {

using broker::Offset;
using std::chrono::milliseconds;
using Key = std::pair<std::string, std::string>;  // (topic, subscription)
using Dispatcher = oplang::BrokerSpec::Dispatcher;

constexpr int kFinalWorker = 1 << 20;
const char* const kFinalMember = "final";

// ---- what gets checked: decided from the program text alone ----

struct Plan {
  std::set<std::string> topics;              // checked topics
  std::set<std::string> retained;            // checked topics with a retention bound
  std::map<std::string, std::size_t> keeps;  // those bounded in messages only: how many they keep
  std::map<Key, int> max_deliveries;         // push subscriptions' and groups' (R23; 0: no limit)
  std::set<Key> push;                        // checked push subscriptions
  std::set<Key> pull;                        // checked pull subscriptions
  std::map<Key, model::Start::Kind> late;    // checked ones a fiber created: start end or begin
  std::set<Key> seeked;               // checked ones a fiber seeks: judged from the last seek on
  std::map<Key, std::size_t> bounds;  // checked pull subscriptions' max_in_flight (R22)
  std::set<Key> paused;               // checked push subscriptions a fiber pauses (R26)
  // Pull subscriptions whose hand-backs may wait (a back-off list, a nack with a delay) or
  // whose readiness hangs on other messages' keys (R31): no "ready at once" judgement.
  std::set<Key> held_back;
  std::set<Key> ordered;                     // pull subscriptions ordered by key (R31)
  std::map<Key, std::int64_t> ack_timeouts;  // pull subscriptions' (R11)
  std::int64_t auto_expire_ms = 0;           // the broker line's (R17; 0: none)
  // Pull subscriptions created once, with no filter, bound, order or back-off, never paused:
  // a seek that leaves a message at or after its offset makes one ready at once.
  std::set<Key> plain_pull;
  // Checked push groups, (topic, group) -> member names: members may join from a fiber while
  // publishers run; the group as a whole is judged like one subscription from the beginning.
  std::map<Key, std::vector<std::string>> groups;
};

bool from_beginning(const model::Start& s) { return s.kind == model::Start::Kind::kBeginning; }

Plan make_plan(const oplang::Program& p) {
  std::map<std::string, int> topics_created;
  std::set<std::string> retained, deleted;
  std::map<std::string, std::size_t> keeps;
  std::map<Key, int> max_deliveries;
  std::map<Key, int> created;
  std::map<Key, model::Start::Kind> late;
  std::set<Key> push_subs, pull_subs, disqualified, unsubscribed, seeked, paused;
  std::map<Key, std::vector<std::string>> group_members;
  std::map<Key, std::size_t> bounds;
  std::set<Key> bad_groups, held_back, disqualified_plain, ordered;
  std::map<Key, std::int64_t> ack_timeouts;
  // Where a subscription starts: from the beginning (setup or fiber), or at the end when a
  // fiber subscribes while publishers run; explicit offsets are not judged.
  auto start_ok = [&](const Key& key, const model::Start& start, bool in_setup) {
    if (from_beginning(start)) {
      if (!in_setup) late[key] = start.kind;
      return true;
    }
    if (in_setup || start.kind != model::Start::Kind::kEnd) return false;
    late[key] = start.kind;
    return true;
  };
  auto scan_script = [&](const oplang::HandlerScript& script, const Key& self) {
    for (const oplang::Step& s : script) {
      if (s.effect == oplang::EffectKind::kSeek) disqualified.insert({s.topic, s.name});
      if (s.effect == oplang::EffectKind::kUnsubscribe) unsubscribed.insert({s.topic, s.name});
      if (s.effect == oplang::EffectKind::kUnsubscribeSelf) unsubscribed.insert(self);
    }
  };
  auto scan = [&](const oplang::Op& op, bool in_setup) {
    if (const auto* o = std::get_if<oplang::CreateTopic>(&op)) {
      if (!in_setup) return;
      topics_created[o->name] += 1;
      if (o->retention_messages || o->retention_bytes) retained.insert(o->name);
      if (o->retention_messages && !o->retention_bytes) keeps[o->name] = o->retention_messages;
    } else if (const auto* o = std::get_if<oplang::DeleteTopic>(&op)) {
      deleted.insert(o->name);
    } else if (const auto* o = std::get_if<oplang::Subscribe>(&op)) {
      const Key key{o->topic, o->name};
      scan_script(o->script, key);
      // idempotent(): the wrapper answers repeats itself, so handler calls are not offers.
      if (o->saved || !o->filter.empty() || !o->group.empty() || o->idempotent ||
          !start_ok(key, o->start, in_setup))
        disqualified.insert(key);
      created[key] += 1;
      push_subs.insert(key);
      max_deliveries[key] = o->max_deliveries;
      if (!o->group.empty()) max_deliveries[{o->topic, o->group}] = o->max_deliveries;
      if (!o->group.empty()) {
        const Key group{o->topic, o->group};
        group_members[group].push_back(o->name);
        if (!o->filter.empty() || o->idempotent || !from_beginning(o->start))
          bad_groups.insert(group);
      }
    } else if (const auto* o = std::get_if<oplang::SubscribePull>(&op)) {
      const Key key{o->topic, o->name};
      if (!o->filter.empty() || !start_ok(key, o->start, in_setup)) disqualified.insert(key);
      created[key] += 1;
      pull_subs.insert(key);
      if (o->max_in_flight > 0) bounds[key] = o->max_in_flight;
      if (!o->backoff.empty() || o->ordered_by_key) held_back.insert(key);
      if (o->ordered_by_key) ordered.insert(key);
      max_deliveries[key] = o->max_deliveries;
      ack_timeouts[key] = o->ack_timeout;
      if (!o->filter.empty() || o->max_in_flight > 0 || o->ordered_by_key || !o->backoff.empty())
        disqualified_plain.insert(key);
    } else if (const auto* o = std::get_if<oplang::Nack>(&op)) {
      if (o->delay) held_back.insert({o->topic, o->sub});
    } else if (const auto* o = std::get_if<oplang::Seek>(&op)) {
      seeked.insert({o->topic, o->name});
    } else if (const auto* o = std::get_if<oplang::Pause>(&op)) {
      paused.insert({o->topic, o->name});
    } else if (const auto* o = std::get_if<oplang::Unsubscribe>(&op)) {
      unsubscribed.insert({o->topic, o->name});
    }
  };
  for (const oplang::Op& op : p.setup) scan(op, true);
  for (const oplang::Fiber& f : p.fibers)
    for (const oplang::Op& op : f.ops) scan(op, false);
  Plan plan;
  plan.held_back = held_back;
  plan.max_deliveries = max_deliveries;
  plan.ack_timeouts = ack_timeouts;
  plan.ordered = ordered;
  plan.auto_expire_ms = p.broker.auto_expire;
  for (const Key& key : pull_subs)
    if (created[key] == 1 && !disqualified_plain.count(key) && !paused.count(key))
      plan.plain_pull.insert(key);
  for (const auto& [name, count] : topics_created) {
    if (count != 1 || deleted.count(name)) continue;
    plan.topics.insert(name);
    if (retained.count(name)) plan.retained.insert(name);
    if (auto k = keeps.find(name); k != keeps.end()) plan.keeps[name] = k->second;
  }
  for (const auto& [key, count] : created) {
    if (count != 1 || disqualified.count(key) || !plan.topics.count(key.first)) continue;
    if (push_subs.count(key) && pull_subs.count(key)) continue;
    // A seek replays from its offset: judged from there on, when nothing else moves it.
    if (seeked.count(key) && (late.count(key) || plan.retained.count(key.first))) continue;
    if (seeked.count(key)) plan.seeked.insert(key);
    if (late.count(key)) plan.late[key] = late[key];
    if (push_subs.count(key)) plan.push.insert(key);
    if (push_subs.count(key) && paused.count(key)) plan.paused.insert(key);
    // A paused pull subscription's empty polls are not poll-skips: not judged.
    if (pull_subs.count(key) && !unsubscribed.count(key) && !paused.count(key))
      plan.pull.insert(key);
    // A seek forgets what was held without a call that says so: no bound check then.
    if (bounds.count(key) && !seeked.count(key)) plan.bounds[key] = bounds[key];
  }
  for (const auto& [group, members] : group_members) {
    bool ok = !bad_groups.count(group) && plan.topics.count(group.first) && !created.count(group) &&
              !seeked.count(group) && !disqualified.count(group);
    for (const std::string& m : members) {
      const Key key{group.first, m};
      ok = ok && created[key] == 1 && !unsubscribed.count(key) && !seeked.count(key);
    }
    if (ok) plan.groups[group] = members;
  }
  return plan;
}

// ---- what a run records ----

struct Line {
  std::uint64_t invoke = 0, ret = 0;
  std::string who, text;
};

struct PullRecord {
  Key sub;  // empty for expire (it spans every pull subscription)
  PullCall call;
  std::vector<broker::Expired> expired;
};

struct PushIncarnation {
  Key key;
  bool checked = false;
};

struct Recorder {
  std::uint64_t clock = 0;
  std::uint64_t tick() {
    observer_synchronizes();  // the history's order is happens-before (history.h)
    return ++clock;
  }
  std::vector<Line> lines;
  std::map<std::string, std::vector<Offset>> published;
  struct PublishedAt {
    std::uint64_t invoke, ret;  // ticks
    std::int64_t ms;            // virtual time when it returned
  };
  std::map<std::string, std::map<Offset, PublishedAt>> published_at;
  std::map<Key, std::pair<std::uint64_t, std::uint64_t>> subscribed;  // invoke, ret ticks
  struct SeekCall {
    std::uint64_t invoke, ret;
    Offset offset;
  };
  std::map<Key, std::vector<SeekCall>> seeks;  // the accepted ones
  // R25: (invoke, return) ticks of the accepted redrives.
  std::map<Key, std::vector<std::pair<std::uint64_t, std::uint64_t>>> redrives;
  // R26: when a pause returned, and (pause return, resume invoke) windows once resumed.
  std::map<Key, std::uint64_t> paused_since;
  std::map<Key, std::vector<std::pair<std::uint64_t, std::uint64_t>>> pause_windows;
  std::vector<PullRecord> pull;
  std::vector<PollSeen> polls;  // every poll and poll_wait, of any subscription (waits.h)
  std::vector<WakeSeen> wakes;  // the calls that must end a poll_wait at once
  std::map<Key, std::vector<std::uint64_t>> subscribe_calls;  // every subscribe's return tick
  std::map<Key, std::vector<std::uint64_t>> moves;  // return ticks of seeks and seeks by time
  std::vector<HandlerCall> handlers;                // HandlerCall::sub indexes `push`
  std::vector<PushIncarnation> push;
  std::map<Key, int> current_push;  // the latest incarnation of a push subscription
  std::map<int, std::uint64_t> unsubscribed_at;
  std::map<std::string, int> members;
  std::map<std::tuple<std::string, std::string, std::string>, std::deque<Offset>> hands;
  // R32: the generation poll_group handed each message of a hand out in (topic, group,
  // member, offset); answers carry it in their receipt.
  std::map<std::tuple<std::string, std::string, std::string, Offset>, std::uint64_t> generations;
  std::string errors;
  Plan plan;  // checked names; the setup drops what it failed to create
  // After the fibers, read by the checks.
  bool stuck = false;
  std::int64_t liveness_bound_ms = 0;  // what wait_delivered was given
  std::uint64_t shutdown_began = 0, shutdown_returned = 0;
  std::map<Key, FinalState> pull_end;
  std::map<int, FinalState> push_alive;
  std::map<Key, FinalState> group_end;
  // A durable program's power cut (the `crash` op) and what the reopened broker holds.
  std::optional<Cut> cut;
  std::uint64_t cut_seed = 0;
  std::map<std::string, DurableTopic> reopened;  // by checked topic: end, kept, positions

  int member_id(const std::string& name) {
    return members.emplace(name, static_cast<int>(members.size())).first->second;
  }
  void note_published(const std::string& topic, Offset o, std::uint64_t invoke) {
    published[topic].push_back(o);
    published_at[topic][o] = {invoke, tick(), broker::sync::steady_now().count()};
  }
  // Content: what each publish sent at (topic, offset) and what every handler call, poll
  // and dead letter saw there; judged after the run (a reader may see a message before its
  // publish returned). Every message is immutable: all must agree (no torn or unwritten
  // message, no other message's content).
  std::map<std::pair<std::string, Offset>, std::string> sent;
  std::map<std::pair<std::string, Offset>, std::string> seen;
  std::map<std::pair<std::string, Offset>, broker::Time> times;  // publish times read back
  bool times_checked = false;  // R28's offset_for_time was asked (check_seek_by_time)
  std::string content_errors;
  static std::string content(std::string_view payload, const broker::Headers& headers,
                             std::string_view key) {
    std::string c = oplang::format_value(payload) + " key=" + oplang::format_value(key);
    for (const auto& [name, value] : headers) c += " " + name + "=" + oplang::format_value(value);
    return c;
  }
  void note_sent(const std::string& topic, Offset o, const std::string& payload,
                 const broker::Headers& headers, const std::string& key) {
    sent[{topic, o}] = content(payload, headers, key);
  }
  /// A deleted topic (and its partitions): a new one of that name starts at offset 0 again.
  void forget_content(const std::string& topic) {
    for (auto* m : {&sent, &seen}) {
      std::erase_if(*m, [&](const auto& e) { return e.first.first.starts_with(topic); });
    }
  }
  void note_seen(const std::string& topic, const broker::MessagePtr& p) {
    const broker::Message& m = *p;
    // A holder keeps its message alive, however long it holds it (R3, Delivery): a pointer
    // that owns nothing reads freed memory once retention lets the message go.
    if (p.use_count() == 0 && content_errors.size() < 2000) {
      content_errors += "wrong-content: " + topic + " offset " + std::to_string(m.offset()) +
                        " was handed out by a pointer that does not keep it alive\n";
    }
    const std::string c = content(m.payload(), m.headers(), m.key());
    times.emplace(std::make_pair(topic, m.offset()), m.publish_time());
    auto [it, first] = seen.emplace(std::make_pair(topic, m.offset()), c);
    if (!first && it->second != c && content_errors.size() < 2000) {
      content_errors += "wrong-content: " + topic + " offset " + std::to_string(m.offset()) +
                        " was read as " + it->second + " and later as " + c + "\n";
    }
  }
  void note_unsubscribed(const Key& key) {
    auto it = current_push.find(key);
    if (it != current_push.end()) unsubscribed_at.emplace(it->second, tick());  // first return
  }
};

std::string text_of(bool b) { return b ? "true" : "false"; }

std::string text_of(const std::vector<broker::Received>& got) {
  std::string out = "[";
  for (const broker::Received& r : got) {
    if (out.size() > 1) out += " ";
    out += std::to_string(r.message->offset()) + "#" + std::to_string(r.attempt) + "@" +
           std::to_string(r.deadline.time_since_epoch().count());
  }
  return out + "]";
}

std::string text_of(const std::vector<broker::Expired>& list) {
  std::string out = "[";
  for (const broker::Expired& e : list) {
    if (out.size() > 1) out += " ";
    out += e.topic + "/" + e.subscription + ":" + std::to_string(e.offset) +
           (e.dead_lettered ? "+dead" : "");
  }
  return out + "]";
}

std::string text_of(const broker::SubscriptionStats& s) {
  std::string out =
      "committed=" + std::to_string(s.committed) + " cursor=" + std::to_string(s.cursor) +
      " backlog=" + std::to_string(s.backlog) + " in_flight=" + std::to_string(s.in_flight) +
      " delivered=" + std::to_string(s.delivered) +
      " redelivered=" + std::to_string(s.redelivered) +
      " confirmed=" + std::to_string(s.confirmed) + " dead=" + std::to_string(s.dead_lettered);
  if (s.skipped) out += " skipped=" + std::to_string(s.skipped);
  if (s.filtered) out += " filtered=" + std::to_string(s.filtered);
  if (s.redriven) out += " redriven=" + std::to_string(s.redriven);
  if (s.purged) out += " purged=" + std::to_string(s.purged);
  if (s.paused) out += " paused";
  return out;
}

std::string text_of(const std::vector<broker::DeadLetter>& list) {
  std::string out = "[";
  for (const broker::DeadLetter& d : list) {
    if (out.size() > 1) out += " ";
    out += std::to_string(d.message->offset()) + "#" + std::to_string(d.attempts);
  }
  return out + "]";
}

std::string text_of(const std::vector<std::string>& names) {
  std::string out = "[";
  for (const std::string& n : names) out += (out.size() > 1 ? " " : "") + oplang::format_value(n);
  return out + "]";
}

broker::StartPosition start_of(const model::Start& s) {
  switch (s.kind) {
    case model::Start::Kind::kEnd:
      return broker::StartPosition::end();
    case model::Start::Kind::kBeginning:
      return broker::StartPosition::beginning();
    case model::Start::Kind::kOffset:
      return broker::StartPosition::at(s.offset);
  }
  return broker::StartPosition::end();
}

broker::FsyncPolicy policy_of(const oplang::SyncPolicy& p) {
  switch (p.kind) {
    case oplang::SyncPolicy::Kind::kAlways:
      return broker::FsyncPolicy::always();
    case oplang::SyncPolicy::Kind::kEvery:
      return broker::FsyncPolicy::every(broker::Millis{p.every});
    case oplang::SyncPolicy::Kind::kNone:
      return broker::FsyncPolicy::none();
  }
  return broker::FsyncPolicy::always();
}

broker::BrokerOptions dispatcher_of(const oplang::BrokerSpec& spec);

// A ManualClock whose every read is a scheduling point (a program with `clock=manual`): a
// publisher's read and its append may then interleave with other publishers and with
// `advance` moving the clock, back too (R28: publish times need not grow along a log).
class FiberClock final : public broker::Clock {
 public:
  [[nodiscard]] broker::Time now() const override {
    fiber::yield("clock read");
    return inner_.now();
  }
  void advance(broker::Millis d) { inner_.advance(d); }
  [[nodiscard]] broker::Time peek() const { return inner_.now(); }
  /// As a ManualClock: the program's time, so any `now` goes (R11).
  [[nodiscard]] bool moved_by_caller() const override { return true; }

 private:
  broker::ManualClock inner_;
};

// The broker of a `broker` line; a durable one on `disk`, with small segments and journal
// (rolls and compactions happen in short programs, as in harness::DurableSetup); on `clock`
// with `clock=manual`.
broker::BrokerOptions options_of(const oplang::BrokerSpec& spec,
                                 const std::shared_ptr<broker::sim::SimFileSystem>& disk,
                                 const std::shared_ptr<FiberClock>& clock) {
  broker::BrokerOptions options = dispatcher_of(spec);
  if (clock) options = options.with_clock(clock);
  if (spec.auto_expire > 0) options = options.with_auto_expire(broker::Millis{spec.auto_expire});
  if (!spec.durable) return options;
  broker::StorageOptions storage;
  storage.directory = "/broker";
  storage.file_system = disk;
  storage.publish_sync = policy_of(spec.publish_sync);
  storage.commit_sync = policy_of(spec.commit_sync);
  storage.segment_bytes = 256;
  storage.journal_compact_bytes = 1024;
  return options.with_storage(storage);
}

broker::BrokerOptions dispatcher_of(const oplang::BrokerSpec& spec) {
  switch (spec.dispatcher) {
    case Dispatcher::kSynchronous:
      return broker::BrokerOptions::synchronous();
    case Dispatcher::kLane:
      return broker::BrokerOptions::lane().with_retry_backoff(broker::Millis{spec.backoff});
    case Dispatcher::kPool:
      return broker::BrokerOptions::pool(spec.threads, broker::Millis{spec.timeout})
          .with_retry_backoff(broker::Millis{spec.backoff});
  }
  return broker::BrokerOptions::synchronous();
}

broker::Time now() { return broker::at(broker::sync::steady_now()); }

// ---- playing ops ----

struct Ctx {
  broker::Broker* b = nullptr;
  std::shared_ptr<Recorder> rec;
  std::shared_ptr<broker::sim::SimFileSystem> disk;  // a durable program's
  std::shared_ptr<FiberClock> clock;                 // a `clock=manual` program's
  /// The `now` calls pass: the manual clock's, else virtual time.
  [[nodiscard]] broker::Time now() const { return clock ? clock->peek() : fiberprop::now(); }
};

// Whether a typed error from `op` is a failure: it names a checked topic or subscription.
bool names_checked(const Plan& plan, const oplang::Op& op) {
  auto sub = [&](const std::string& t, const std::string& s) {
    return plan.push.count({t, s}) > 0 || plan.pull.count({t, s}) > 0;
  };
  return std::visit(
      [&](const auto& o) -> bool {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, oplang::Publish>) return plan.topics.count(o.topic) > 0;
        if constexpr (std::is_same_v<T, oplang::Poll> || std::is_same_v<T, oplang::PollWait> ||
                      std::is_same_v<T, oplang::Ack> || std::is_same_v<T, oplang::Nack> ||
                      std::is_same_v<T, oplang::Term> || std::is_same_v<T, oplang::Extend>)
          return sub(o.topic, o.sub);
        if constexpr (std::is_same_v<T, oplang::Unsubscribe> ||
                      std::is_same_v<T, oplang::GetStats> ||
                      std::is_same_v<T, oplang::GetDeadLetters>)
          return sub(o.topic, o.name);
        if constexpr (std::is_same_v<T, oplang::Subscriptions>)
          return plan.topics.count(o.topic) > 0;
        return false;
      },
      op);
}

std::string effect_text(const oplang::Step& step, const std::string& result) {
  return oplang::effect_result(step.effect, result);
}

// A handler's step: its side effect, from inside the handler; returns the effect's text.
std::string run_effect(Ctx& c, const oplang::Step& step, const Key& self) {
  using oplang::EffectKind;
  if (step.effect == EffectKind::kNone) return "";
  if (step.effect == EffectKind::kStall) {
    fiber::sleep_for(milliseconds(step.ms));
    return effect_text(step, "ok");
  }
  // An abandoned handler may outlive ~Broker; it must not call the broker then (R16).
  if (c.b == nullptr) return effect_text(step, "skipped: the broker was destroyed");
  Recorder& h = *c.rec;
  broker::Broker& b = *c.b;
  try {
    switch (step.effect) {
      case EffectKind::kUnsubscribeSelf: {
        const bool r = b.unsubscribe(self.first, self.second);
        h.note_unsubscribed(self);
        return effect_text(step, text_of(r));
      }
      case EffectKind::kUnsubscribe: {
        const bool r = b.unsubscribe(step.topic, step.name);
        h.note_unsubscribed({step.topic, step.name});
        return effect_text(step, text_of(r));
      }
      case EffectKind::kPublish: {
        const std::uint64_t invoke = h.tick();
        const Offset o = b.publish(step.topic, step.payload);
        h.note_published(step.topic, o, invoke);
        h.note_sent(step.topic, o, step.payload, {}, {});
        return effect_text(step, std::to_string(o));
      }
      case EffectKind::kSeek:
        b.seek(step.topic, step.name, step.offset);
        return effect_text(step, "ok");
      case EffectKind::kDrain:
        return effect_text(step, std::to_string(b.drain()));
      case EffectKind::kNone:
      case EffectKind::kStall:
        break;  // above
    }
  } catch (const broker::Error& e) {
    return effect_text(step, broker::to_string(e.code()));
  }
  return "";
}

const char* verdict_text(oplang::Verdict v) {
  switch (v) {
    case oplang::Verdict::kConfirm:
      return "true";
    case oplang::Verdict::kReject:
      return "false";
    case oplang::Verdict::kThrowStd:
      return "throws std::runtime_error";
    case oplang::Verdict::kThrowOther:
      return "throws 42";
    case oplang::Verdict::kTerminate:
      return "throws broker::Terminate";
  }
  return "?";
}

// The handler of push incarnation `index`: records entry and exit, plays its script.
broker::Handler make_handler(Ctx* c, int index, oplang::HandlerScript script) {
  auto next = std::make_shared<std::size_t>(0);
  return [c, index, script = std::move(script), next](const broker::Delivery& d) -> bool {
    Recorder& h = *c->rec;
    const Key self = h.push[static_cast<std::size_t>(index)].key;
    const std::size_t me = h.handlers.size();
    h.note_seen(*d.topic, d.message);
    h.handlers.push_back({index, d.message->offset(), d.attempt, h.tick(), 0,
                          broker::sync::steady_now().count(), 0, false});
    const std::size_t step_no = (*next)++;
    const oplang::Step step = step_no < script.size() ? script[step_no] : oplang::Step{};
    std::string text = "handler " + oplang::format_value(self.first) + " " +
                       std::to_string(d.message->offset()) + "#" + std::to_string(d.attempt) +
                       " at t=" + std::to_string(h.handlers[me].enter_ms) + " step " +
                       std::to_string(step_no + 1) + ": " + oplang::print(step);
    const std::size_t line = h.lines.size();  // pending until the handler returns
    h.lines.push_back({h.handlers[me].enter, 0, self.second, text});
    const std::string effect = run_effect(*c, step, self);
    HandlerCall& call = h.handlers[me];
    call.exit = h.tick();
    call.exit_ms = broker::sync::steady_now().count();
    call.returned_true = step.verdict == oplang::Verdict::kConfirm;
    if (!effect.empty()) text += " (" + effect + ")";
    text += std::string(" -> ") + verdict_text(step.verdict);
    h.lines[line].ret = call.exit;
    h.lines[line].text = std::move(text);
    return oplang::end_with<broker::Terminate>(step.verdict);
  };
}

// The messages `which` names in `hand`; `take` (ack, nack) removes them from it.
std::vector<Offset> pick(std::deque<Offset>& hand, Offset offset, oplang::Which which, bool take) {
  std::vector<Offset> out;
  switch (which) {
    case oplang::Which::kOffset: {
      out.push_back(offset);
      auto it = std::find(hand.begin(), hand.end(), offset);
      if (take && it != hand.end()) hand.erase(it);
      break;
    }
    case oplang::Which::kOldest:
      if (hand.empty()) break;
      out.push_back(hand.front());
      if (take) hand.pop_front();
      break;
    case oplang::Which::kAll:
      out.assign(hand.begin(), hand.end());
      if (take) hand.clear();
      break;
  }
  return out;
}

// A setup op that failed takes what it would have created out of the checks.
void drop_from_plan(Plan& plan, const oplang::Op& op) {
  if (const auto* o = std::get_if<oplang::CreateTopic>(&op)) {
    plan.topics.erase(o->name);
    for (std::set<Key>* set : {&plan.push, &plan.pull}) {
      for (auto it = set->begin(); it != set->end();) {
        it = it->first == o->name ? set->erase(it) : std::next(it);
      }
    }
  } else if (const auto* o = std::get_if<oplang::Subscribe>(&op)) {
    plan.push.erase({o->topic, o->name});
  } else if (const auto* o = std::get_if<oplang::SubscribePull>(&op)) {
    plan.pull.erase({o->topic, o->name});
  }
}

// A fiber's (or the setup's) Publishers by topic name, for publish ops via_publisher: a
// Publisher is for one thread at a time.
using Publishers = std::map<std::string, broker::Publisher>;

// Runs one op as `who`, recording a line per broker call (and the pull calls' PullRecords).
class Exec {
 public:
  Exec(Ctx& c, std::string who, bool in_setup, Publishers& publishers)
      : c_(c), who_(std::move(who)), setup_(in_setup), publishers_(publishers) {}

  void run(const oplang::Op& op) {
    op_ = &op;
    std::visit(*this, op);
  }

  void operator()(const oplang::CreateTopic& o) {
    call([&] {
      c_.b->create_topic(o.name, broker::TopicOptions{o.retention_messages, o.retention_bytes});
      return std::string("ok");
    });
  }
  void operator()(const oplang::DeleteTopic& o) {
    call([&] {
      c_.b->delete_topic(o.name);
      rec().forget_content(o.name);
      return std::string("ok");
    });
  }
  // R29: a message sent to a partitioned topic is judged on the partition it went to.
  void operator()(const oplang::Publish& o) {
    call([&] {
      const broker::Placement p = o.via_publisher
                                      ? publisher(o.topic).send(o.payload, o.headers, o.key)
                                      : c_.b->send(o.topic, o.payload, o.headers, o.key);
      const bool partitioned = c_.b->partitions(o.topic) > 1;
      const std::string name = partitioned ? broker::partition_name(o.topic, p.partition) : o.topic;
      rec().note_published(name, p.offset, invoke_);
      rec().note_sent(name, p.offset, o.payload, o.headers, o.key);
      return std::to_string(p.offset);
    });
  }
  void operator()(const oplang::PublishTo& o) {
    call([&] {
      const Offset off = c_.b->publish_to(o.topic, o.partition, o.payload, o.headers, o.key);
      const bool partitioned = c_.b->partitions(o.topic) > 1;
      const std::string name = partitioned ? broker::partition_name(o.topic, o.partition) : o.topic;
      rec().note_published(name, off, invoke_);
      rec().note_sent(name, off, o.payload, o.headers, o.key);
      return std::to_string(off);
    });
  }
  void operator()(const oplang::Partitions& o) {
    call([&] { return std::to_string(c_.b->partitions(o.topic)); });
  }
  void operator()(const oplang::Subscribe& o) {
    Recorder& h = rec();
    const Key key{o.topic, o.name};
    const int index = static_cast<int>(h.push.size());
    h.push.push_back({key, h.plan.push.count(key) > 0});
    std::optional<int> previous;
    if (auto it = h.current_push.find(key); it != h.current_push.end()) previous = it->second;
    h.current_push[key] = index;  // before subscribe: a lane may offer at once
    broker::PushOptions options;
    options.header_filter = o.filter;
    options.max_deliveries = o.max_deliveries;
    options.start = start_of(o.start);
    options.group = o.group;
    for (model::Millis wait : o.backoff) options.backoff.push_back(broker::Millis{wait});
    const Called r = call([&] {
      broker::Handler handler = make_handler(&c_, index, o.script);
      if (o.idempotent) handler = broker::idempotent(std::move(handler));
      if (o.saved) {  // R20: the listing's names; the broker takes the saved options
        const bool group = !o.group.empty();
        c_.b->resubscribe({o.topic, group ? o.group : o.name, group}, std::move(handler),
                          group ? o.name : "");
      } else {
        c_.b->subscribe(o.topic, o.name, std::move(handler), options);
      }
      return std::string("ok");
    });
    h.subscribe_calls[key].push_back(r.ret);
    if (r.ok) {
      h.subscribed.emplace(key, std::make_pair(r.invoke, r.ret));
      return;
    }
    h.push[static_cast<std::size_t>(index)].checked = false;
    if (previous) {
      h.current_push[key] = *previous;
    } else {
      h.current_push.erase(key);
    }
  }
  // The pull options of a subscribe_pull or a join_group.
  template <typename T>
  static broker::PullOptions pull_options(const T& o) {
    broker::PullOptions options;
    options.header_filter = o.filter;
    options.ack_timeout = broker::Millis{o.ack_timeout};
    options.max_deliveries = o.max_deliveries;
    options.start = start_of(o.start);
    options.max_in_flight = o.max_in_flight;
    options.ordered_by_key = o.ordered_by_key;
    for (model::Millis wait : o.backoff) options.backoff.push_back(broker::Millis{wait});
    return options;
  }
  void operator()(const oplang::SubscribePull& o) {
    const broker::PullOptions options = pull_options(o);
    const Called r = call([&] {
      c_.b->subscribe_pull(o.topic, o.name, options);
      return std::string("ok");
    });
    rec().subscribe_calls[{o.topic, o.name}].push_back(r.ret);
    if (r.ok) rec().subscribed.emplace(Key{o.topic, o.name}, std::make_pair(r.invoke, r.ret));
  }
  void operator()(const oplang::Unsubscribe& o) {
    bool removed = false;
    const Called r = call([&] {
      removed = c_.b->unsubscribe(o.topic, o.name);
      rec().note_unsubscribed({o.topic, o.name});
      return text_of(removed);
    });
    if (r.ok && removed)
      rec().wakes.push_back({{o.topic, o.name},
                             "the unsubscribe of its subscription",
                             r.invoke,
                             r.ret,
                             broker::sync::steady_now().count(),
                             true});
  }
  void operator()(const oplang::Seek& o) {
    const Called r = call([&] {
      c_.b->seek(o.topic, o.name, o.offset);
      return std::string("ok");
    });
    if (!r.ok) return;
    Recorder& h = rec();
    h.seeks[{o.topic, o.name}].push_back({r.invoke, r.ret, o.offset});
    h.moves[{o.topic, o.name}].push_back(r.ret);
    // R11, R12: on a plain subscription a message at or after the offset, published before
    // the seek began, is ready once it returns.
    if (!h.plan.plain_pull.count({o.topic, o.name})) return;
    auto at = h.published_at.find(o.topic);
    if (at == h.published_at.end()) return;
    for (const auto& [offset, when] : at->second) {
      if (offset < o.offset || when.ret >= r.invoke) continue;
      h.wakes.push_back({{o.topic, o.name},
                         "a seek to " + std::to_string(o.offset) + " (offset " +
                             std::to_string(offset) + " ready)",
                         r.invoke,
                         r.ret,
                         broker::sync::steady_now().count(),
                         false});
      return;
    }
  }
  void operator()(const oplang::Drain&) {
    call([&] { return std::to_string(c_.b->drain()); });
  }
  void operator()(const oplang::Poll& o) {
    poll(o.topic, o.sub, o.member, o.max, false, 0,
         [&] { return c_.b->poll(o.topic, o.sub, o.member, o.max, c_.now()); });
  }
  void operator()(const oplang::Ack& o) {
    settle(PullCall::Kind::kAck, o.topic, o.sub, o.member, o.offset, o.which, o.generation);
  }
  void operator()(const oplang::Nack& o) {
    settle(PullCall::Kind::kNack, o.topic, o.sub, o.member, o.offset, o.which, o.generation,
           o.delay);
  }
  void operator()(const oplang::Term& o) {
    settle(PullCall::Kind::kTerm, o.topic, o.sub, o.member, o.offset, o.which, o.generation);
  }
  void operator()(const oplang::Extend& o) {
    auto& hand = rec().hands[{o.topic, o.sub, o.member}];
    const std::vector<Offset> targets = pick(hand, o.offset, o.which, false);
    if (targets.empty()) return nothing_held();
    for (Offset off : targets) {
      PullCall pc(PullCall::Kind::kExtend, rec().member_id(o.member), 0);
      pc.offset = off;
      pc.extension_ms = o.extension;
      pc.invoke_ms = broker::sync::steady_now().count();
      const Called r = call(
          [&] {
            // The histories record taken or not (the reason is the sequential properties').
            pc.accepted =
                static_cast<bool>(c_.b->extend(receipt(o.topic, o.sub, o.member, off, o.generation),
                                               c_.now(), broker::Millis{o.extension}));
            pc.ret_ms = broker::sync::steady_now().count();
            return text_of(pc.accepted);
          },
          resolved(off));
      if (r.ok) keep({o.topic, o.sub}, std::move(pc), r, {});
    }
  }
  void operator()(const oplang::Expire&) {
    std::vector<broker::Expired> expired;
    PullCall pc(PullCall::Kind::kExpire, -1, 0);
    pc.invoke_ms = broker::sync::steady_now().count();
    const Called r = call([&] {
      expired = c_.b->expire(c_.now());
      pc.ret_ms = broker::sync::steady_now().count();
      return text_of(expired);
    });
    if (r.ok) keep({}, std::move(pc), r, std::move(expired));
  }
  void operator()(const oplang::Advance& o) {
    call([&] {
      if (c_.clock) {  // clock=manual: the broker's clock moves (back too), time does not
        c_.clock->advance(broker::Millis{o.ms});
        fiber::yield("advance");
        return "ok (clock at " + std::to_string(c_.clock->peek().time_since_epoch().count()) + ")";
      }
      fiber::sleep_for(milliseconds(o.ms));
      return std::string("ok");
    });
  }
  void operator()(const oplang::GetStats& o) {
    call([&] { return text_of(c_.b->stats(o.topic, o.name)); });
  }
  void operator()(const oplang::GetDeadLetters& o) {
    call([&] { return text_of(c_.b->dead_letters(o.topic, o.name)); });
  }
  void operator()(const oplang::Yield& o) {
    call([&] {
      for (std::size_t i = 0; i < o.count; ++i) fiber::yield("yield");
      return std::string("ok");
    });
  }
  void operator()(const oplang::Subscriptions& o) {
    call([&] { return text_of(c_.b->subscriptions(o.topic)); });
  }
  void operator()(const oplang::Topics& o) {
    if (o.waiting) {
      call([&] {
        std::vector<std::string> names;
        for (const broker::WaitingSubscription& w : c_.b->waiting_for_handler()) {
          names.push_back(w.topic + "/" + w.name + (w.group ? " group" : ""));
        }
        return text_of(names);
      });
      return;
    }
    call([&] { return text_of(c_.b->topics()); });
  }
  void operator()(const oplang::EndOffset& o) {
    call([&] { return std::to_string(c_.b->end_offset(o.topic)); });
  }
  void operator()(const oplang::OldestOffset& o) {
    call([&] { return std::to_string(c_.b->oldest_offset(o.topic)); });
  }
  // poll_wait: recorded like poll (a kPoll PullCall; what it got goes into the member's hand).
  void operator()(const oplang::PollWait& o) {
    poll(o.topic, o.sub, o.member, o.max, true, o.timeout, [&] {
      return c_.b->poll_wait(o.topic, o.sub, o.member, o.max, broker::Millis{o.timeout});
    });
  }
  void operator()(const oplang::WaitIdle& o) {
    call([&] { return text_of(c_.b->wait_idle(broker::Millis{o.timeout})); });
  }
  void operator()(const oplang::WaitDelivered& o) {
    call([&] { return text_of(c_.b->wait_delivered(broker::Millis{o.timeout})); });
  }
  void operator()(const oplang::Redrive& o) {
    const Called r = call([&] { return std::to_string(c_.b->redrive(o.topic, o.name)); });
    if (r.ok) rec().redrives[{o.topic, o.name}].emplace_back(r.invoke, r.ret);
  }
  void operator()(const oplang::RedriveTo& o) {
    call([&] {
      std::string out = "[";
      for (Offset off : c_.b->redrive_to(o.topic, o.name, o.to)) {
        out += (out.size() > 1 ? " " : "") + std::to_string(off);
      }
      return out + "]";
    });
  }
  void operator()(const oplang::Purge& o) {
    call([&] { return std::to_string(c_.b->purge_dead_letters(o.topic, o.name)); });
  }
  void operator()(const oplang::Pause& o) {
    const Called r = call([&] { return text_of(c_.b->pause(o.topic, o.name)); });
    if (r.ok) rec().paused_since.emplace(Key{o.topic, o.name}, r.ret);  // the first pause's
  }
  void operator()(const oplang::Resume& o) {
    const Called r = call([&] { return text_of(c_.b->resume(o.topic, o.name)); });
    auto& since = rec().paused_since;
    if (auto it = since.find({o.topic, o.name}); r.ok && it != since.end()) {
      rec().pause_windows[it->first].emplace_back(it->second, r.invoke);
      since.erase(it);
    }
  }
  void operator()(const oplang::GetLag& o) {
    call([&] {
      const broker::Lag l = c_.b->lag(o.topic, o.name, c_.now());
      return "messages=" + std::to_string(l.messages) +
             " oldest_age=" + std::to_string(l.oldest_age.count());
    });
  }
  void operator()(const oplang::OffsetForTime& o) {
    call([&] {
      return std::to_string(c_.b->offset_for_time(o.topic, broker::at(broker::Millis{o.time})));
    });
  }
  void operator()(const oplang::SeekToTime& o) {
    const Called r = call([&] {
      return std::to_string(
          c_.b->seek_to_time(o.topic, o.name, broker::at(broker::Millis{o.time})));
    });
    if (r.ok) rec().moves[{o.topic, o.name}].push_back(r.ret);
  }
  // R32: consumer groups. poll_group's messages go into the hand of (partition topic, group,
  // member), so ack / nack / term / extend with `oldest` or `all` answer them.
  void operator()(const oplang::JoinGroup& o) {
    const broker::PullOptions options = pull_options(o);
    const broker::Assignor assignor = static_cast<broker::Assignor>(o.assignor);
    call([&] {
      const broker::Membership m =
          c_.b->join_group(o.topic, o.group, o.member, {assignor, options});
      return "gen=" + std::to_string(m.generation) +
             " partitions=" + std::to_string(m.partitions.size());
    });
  }
  // A push group's member runs its script's verdicts; its calls are judged by the push
  // group property (push_group_property.cpp), not by this recorder's per-subscription
  // checks, so they are not recorded here.
  void operator()(const oplang::JoinGroupPush& o) {
    broker::GroupOptions options;
    options.assignor = static_cast<broker::Assignor>(o.assignor);
    options.push.header_filter = o.filter;
    options.push.max_deliveries = o.max_deliveries;
    options.push.start = start_of(o.start);
    for (model::Millis wait : o.backoff) options.push.backoff.push_back(broker::Millis{wait});
    call([&] {
      auto next = std::make_shared<std::size_t>(0);
      broker::Handler handler = [script = o.script, next](const broker::Delivery&) {
        const std::size_t step = (*next)++;
        return oplang::end_with<broker::Terminate>(step < script.size() ? script[step].verdict
                                                                        : oplang::Verdict{});
      };
      const broker::Membership m = c_.b->join_group(o.topic, o.group, o.member, handler, options);
      return "gen=" + std::to_string(m.generation) +
             " partitions=" + std::to_string(m.partitions.size());
    });
  }
  void operator()(const oplang::LeaveGroup& o) {
    call([&] { return text_of(c_.b->leave_group(o.topic, o.group, o.member)); });
  }
  void operator()(const oplang::GetMembership& o) {
    call([&] {
      return "gen=" + std::to_string(c_.b->membership(o.topic, o.group, o.member).generation);
    });
  }
  void operator()(const oplang::GetGroupStats& o) {
    call([&] { return "gen=" + std::to_string(c_.b->group_stats(o.topic, o.group).generation); });
  }
  void operator()(const oplang::PollGroup& o) {
    Recorder& h = rec();
    call([&] {
      const std::vector<broker::Received> got =
          c_.b->poll_group(o.topic, o.group, o.member, o.max, c_.now());
      for (const broker::Received& x : got) {
        h.note_seen(x.receipt.topic, x.message);
        h.hands[{x.receipt.topic, o.group, o.member}].push_back(x.message->offset());
        h.generations[{x.receipt.topic, o.group, o.member, x.message->offset()}] =
            x.receipt.generation;
      }
      return text_of(got);
    });
  }
  // Restarts are for sequential scripts; a durable program cuts the power once, and is
  // reopened after its fibers (durability.h).
  void operator()(const oplang::Restart&) {
    throw std::invalid_argument("restart is for sequential scripts on a durable runner");
  }
  // The simulated process dies now: no write or sync it makes from here reaches the disk.
  void operator()(const oplang::Crash& o) {
    if (!c_.disk) throw std::invalid_argument("crash in a program needs `broker ... durable`");
    if (rec().cut) throw std::invalid_argument("a program cuts the power at most once");
    if (o.damage != oplang::Damage::kNone)
      throw std::invalid_argument("damage at rest is for sequential scripts on a durable runner");
    Cut cut;
    cut.ms = broker::sync::steady_now().count();
    const Called r = call([&] {
      c_.disk->die();
      return std::string("ok (power cut)");
    });
    cut.invoke = r.invoke;
    cut.ret = r.ret;
    rec().cut = cut;
    rec().cut_seed = o.seed;
  }
  void operator()(const oplang::Fault&) {
    throw std::invalid_argument("fault is for sequential scripts on a durable runner");
  }

 private:
  struct Called {
    bool ok = false;
    std::uint64_t invoke = 0, ret = 0;
    std::string error;  // the broker::Error's code, when it threw one
  };

  Recorder& rec() { return *c_.rec; }
  // This fiber's Publisher for topic, made now if it has none (throws UnknownTopic).
  broker::Publisher& publisher(const std::string& topic) {
    auto it = publishers_.find(topic);
    if (it == publishers_.end()) it = publishers_.emplace(topic, c_.b->publisher(topic)).first;
    return it->second;
  }

  // Runs one broker call between two ticks and records its line; a broker::Error is the
  // call's answer (a failure when it names something checked), anything else a failure.
  template <typename F>
  Called call(F&& f, const std::string& resolved_as = "") {
    Recorder& h = rec();
    Called c;
    c.invoke = invoke_ = h.tick();
    std::string text = oplang::print(*op_);
    if (!resolved_as.empty()) text += " = " + resolved_as;
    const std::size_t line = h.lines.size();  // pending until the call returns
    h.lines.push_back({c.invoke, 0, who_, text});
    std::string result;
    try {
      result = f();
      c.ok = true;
    } catch (const broker::Error& e) {
      c.error = broker::to_string(e.code());
      result = "error:" + c.error;
      if (names_checked(h.plan, *op_))
        h.errors +=
            "unexpected-error: " + who_ + ": " + oplang::print(*op_) + " -> " + result + "\n";
      if (setup_) drop_from_plan(h.plan, *op_);
    } catch (const std::exception& e) {
      result = std::string("exception: ") + e.what();
      h.errors +=
          "untyped-error: " + who_ + ": " + oplang::print(*op_) + " threw " + e.what() + "\n";
    }
    c.ret = h.tick();
    h.lines[line].ret = c.ret;
    h.lines[line].text = text + " -> " + result;
    return c;
  }

  // A poll or poll_wait (`take` makes the call): recorded as a kPoll PullCall with its
  // virtual times; what it got goes into the member's hand.
  template <typename Take>
  void poll(const std::string& topic, const std::string& sub, const std::string& member,
            std::size_t max, bool wait, std::int64_t timeout_ms, Take&& take) {
    Recorder& h = rec();
    PullCall pc(PullCall::Kind::kPoll, h.member_id(member), 0);
    pc.max = max;
    pc.wait = wait;
    pc.timeout_ms = timeout_ms;
    pc.invoke_ms = broker::sync::steady_now().count();
    const Called r = call([&] {
      const std::vector<broker::Received> got = take();
      pc.ret_ms = broker::sync::steady_now().count();
      auto& hand = h.hands[{topic, sub, member}];
      for (const broker::Received& x : got) {
        h.note_seen(x.receipt.topic, x.message);
        pc.got.push_back({x.message->offset(), x.attempt});
        hand.push_back(x.message->offset());
      }
      return text_of(got);
    });
    h.polls.push_back({{topic, sub},
                       member,
                       wait,
                       r.invoke,
                       r.ret,
                       pc.invoke_ms,
                       r.ok ? pc.ret_ms : broker::sync::steady_now().count(),
                       timeout_ms,
                       pc.got.size(),
                       r.error});
    if (r.ok) keep({topic, sub}, std::move(pc), r, {});
  }

  void keep(Key sub, PullCall pc, const Called& r, std::vector<broker::Expired> expired) {
    pc.invoke = r.invoke;
    pc.ret = r.ret;
    rec().pull.push_back({std::move(sub), std::move(pc), std::move(expired)});
  }

  // The op with `oldest` / `all` replaced by the offset it resolved to ("" if explicit).
  std::string resolved(Offset off) const {
    return std::visit(
        [&](const auto& o) -> std::string {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, oplang::Ack> || std::is_same_v<T, oplang::Nack> ||
                        std::is_same_v<T, oplang::Term> || std::is_same_v<T, oplang::Extend>) {
            if (o.which == oplang::Which::kOffset) return "";
            T copy = o;
            copy.which = oplang::Which::kOffset;
            copy.offset = off;
            return oplang::print(oplang::Op{copy});
          }
          return "";
        },
        *op_);
  }

  void nothing_held() {
    Recorder& h = rec();
    const std::uint64_t t = h.tick();
    h.lines.push_back({t, t, who_, oplang::print(*op_) + " -> nothing held"});
  }

  // The receipt of a message in a hand: the op's generation, else the one poll_group gave.
  broker::Receipt receipt(const std::string& topic, const std::string& sub,
                          const std::string& member, Offset off, std::uint64_t generation) {
    if (generation == 0) {
      auto it = rec().generations.find({topic, sub, member, off});
      if (it != rec().generations.end()) generation = it->second;
    }
    return broker::Receipt{topic, sub, member, off, generation};
  }

  void settle(PullCall::Kind kind, const std::string& topic, const std::string& sub,
              const std::string& member, Offset offset, oplang::Which which,
              std::uint64_t generation, std::optional<model::Millis> delay = std::nullopt) {
    Recorder& h = rec();
    auto& hand = h.hands[{topic, sub, member}];
    const std::vector<Offset> targets = pick(hand, offset, which, true);
    if (targets.empty()) return nothing_held();
    for (Offset off : targets) {
      PullCall pc(kind, h.member_id(member), 0);
      pc.offset = off;
      pc.invoke_ms = broker::sync::steady_now().count();
      const Called r = call(
          [&] {
            const broker::Receipt receipt = this->receipt(topic, sub, member, off, generation);
            const broker::Time at = c_.now();
            pc.accepted =
                static_cast<bool>(kind == PullCall::Kind::kAck    ? c_.b->ack(receipt, at)
                                  : kind == PullCall::Kind::kTerm ? c_.b->term(receipt, at)
                                  : delay ? c_.b->nack(receipt, at, broker::Millis{*delay})
                                          : c_.b->nack(receipt, at));
            pc.ret_ms = broker::sync::steady_now().count();
            return text_of(pc.accepted);
          },
          resolved(off));
      if (r.ok) keep({topic, sub}, std::move(pc), r, {});
    }
  }

  Ctx& c_;
  std::string who_;
  bool setup_;
  Publishers& publishers_;
  const oplang::Op* op_ = nullptr;
  std::uint64_t invoke_ = 0;  // the running call's invoke tick
};

// ---- after the fibers ----

bool synchronous(const oplang::Program& p) {
  return p.broker.dispatcher == Dispatcher::kSynchronous;
}

// Stats of push incarnation i, or nullopt once it was unsubscribed (possibly a moment ago, by
// a handler that has not recorded it yet).
std::optional<broker::SubscriptionStats> stats_if_alive(broker::Broker& b, const Recorder& h,
                                                        int i) {
  if (h.unsubscribed_at.count(i)) return std::nullopt;
  const Key& key = h.push[static_cast<std::size_t>(i)].key;
  try {
    return b.stats(key.first, key.second);
  } catch (const broker::UnknownSubscription&) {
    return std::nullopt;
  }
}

std::vector<int> checked_push(const Recorder& h) {
  std::vector<int> out;
  for (std::size_t i = 0; i < h.push.size(); ++i)
    if (h.push[i].checked && h.plan.push.count(h.push[i].key)) out.push_back(static_cast<int>(i));
  return out;
}

// The liveness bound in virtual time (R15, hot/cold): every handler script ends in `confirm`
// forever, so each message needs at most D offers per subscription (max_deliveries, or the
// script's length + 1 without a limit), each taking at most the longest stall (a pool caps it
// at the handler timeout and its grace) and a back-off; every seek (an op or a handler
// step) may replay all of
// it; an R24 wait adds its longest entry and the dispatcher's recheck (kWaitRecheck) to
// each offer. B = messages x subscriptions x D x (stall + back-off + wait + 1) x (1 + seeks)
// + 1 s.
std::int64_t liveness_bound_ms(const oplang::Program& p) {
  std::int64_t messages = 0, subs = 0, deliveries = 1, longest = 0, seeks = 0, wait = 0;
  auto scan = [&](const oplang::Op& op) {
    if (std::holds_alternative<oplang::Publish>(op)) ++messages;
    // A redrive gives each dead letter a whole max_deliveries again: a replay, as a seek.
    if (std::holds_alternative<oplang::Seek>(op) || std::holds_alternative<oplang::Redrive>(op))
      ++seeks;
    const auto* o = std::get_if<oplang::Subscribe>(&op);
    if (o == nullptr) return;
    ++subs;
    for (model::Millis w : o->backoff) wait = std::max<std::int64_t>(wait, w + 10);
    for (const oplang::Step& st : o->script) {
      if (st.effect == oplang::EffectKind::kPublish) ++messages;
      if (st.effect == oplang::EffectKind::kSeek) ++seeks;
      if (st.effect == oplang::EffectKind::kStall) longest = std::max(longest, st.ms);
    }
    deliveries = std::max(deliveries, o->max_deliveries > 0
                                          ? static_cast<std::int64_t>(o->max_deliveries)
                                          : static_cast<std::int64_t>(o->script.size()) + 1);
  };
  for (const oplang::Op& op : p.setup) scan(op);
  for (const oplang::Fiber& f : p.fibers)
    for (const oplang::Op& op : f.ops) scan(op);
  if (p.broker.dispatcher == Dispatcher::kPool && p.broker.timeout > 0)
    longest = std::min(longest, p.broker.timeout + overrun_grace_ms(p.broker.timeout));
  return messages * std::max<std::int64_t>(1, subs) * deliveries *
             (longest + p.broker.backoff + wait + 1) * (1 + seeks) +
         1000;
}

// Delivers what is left: drain on the synchronous dispatcher, else wait_delivered within the
// liveness bound (a run that stays hot past it is `stuck`); then reads the checked push
// subscriptions' final state. wait_delivered's answer is checked against their stats.
void settle_push(const oplang::Program& p, broker::Broker& b, Recorder& h) {
  const std::vector<int> live = checked_push(h);
  auto group_stats = [&](const Key& g) -> std::optional<broker::SubscriptionStats> {
    try {
      return b.stats(g.first, g.second);  // a group's name reads its state (R10)
    } catch (const broker::Error&) {
      return std::nullopt;  // no member joined (its subscribe failed)
    }
  };
  auto settled = [&] {
    for (int i : live) {
      const auto st = stats_if_alive(b, h, i);
      if (st && (st->backlog != 0 || st->in_flight != 0)) return false;
    }
    for (const auto& entry : h.plan.groups) {
      const auto st = group_stats(entry.first);
      if (st && (st->backlog != 0 || st->in_flight != 0)) return false;
    }
    return true;
  };
  if (synchronous(p)) {
    for (int round = 0; round < 50 && !settled(); ++round) {
      try {
        b.drain();
      } catch (const broker::Error&) {
      }
    }
    h.stuck = !settled();
  } else {
    h.liveness_bound_ms = liveness_bound_ms(p);
    const bool delivered = b.wait_delivered(milliseconds(h.liveness_bound_ms));
    h.stuck = !delivered;
    // A handler abandoned after its timeout still runs and may publish after the answer.
    bool late_publishes = false;
    if (p.broker.dispatcher == Dispatcher::kPool && p.broker.timeout > 0) {
      auto publishes = [](const oplang::Op& op) {
        const auto* o = std::get_if<oplang::Subscribe>(&op);
        return o != nullptr && std::any_of(o->script.begin(), o->script.end(), [](const auto& st) {
                 return st.effect == oplang::EffectKind::kPublish;
               });
      };
      late_publishes = std::any_of(p.setup.begin(), p.setup.end(), publishes);
      for (const oplang::Fiber& f : p.fibers)
        late_publishes = late_publishes || std::any_of(f.ops.begin(), f.ops.end(), publishes);
    }
    if (delivered && !late_publishes && !settled())
      h.errors +=
          "early-return: wait_delivered returned true while a push subscription still "
          "had a backlog or messages in flight (R15)\n";
  }
  for (const auto& entry : h.plan.groups) {
    const auto st = group_stats(entry.first);
    if (!st) continue;
    FinalState& f = h.group_end[entry.first];
    f.stats = *st;
    for (const auto& d : b.dead_letters(entry.first.first, entry.first.second)) {
      h.note_seen(entry.first.first, d.message);
      f.dead.insert(d.message->offset());
      f.reasons[d.message->offset()] = d.reason;
    }
  }
  for (int i : live) {
    const auto st = stats_if_alive(b, h, i);
    if (!st) continue;
    const Key& key = h.push[static_cast<std::size_t>(i)].key;
    FinalState& f = h.push_alive[i];
    f.stats = *st;
    for (const auto& d : b.dead_letters(key.first, key.second)) {
      h.note_seen(key.first, d.message);
      f.dead.insert(d.message->offset());
      f.reasons[d.message->offset()] = d.reason;
    }
  }
}

// Expires everything and acks what is left, until nothing comes back.
void final_drain(broker::Broker& b, Recorder& h, const Key& sub) {
  const broker::Time later = now() + std::chrono::hours(10);
  const int w = kFinalWorker;
  for (int round = 0; round < 100; ++round) {
    // (virtual times too: a hold automatic expiry ended before this drain ends by then)
    const std::int64_t ms = broker::sync::steady_now().count();
    PullRecord ex{{}, PullCall(PullCall::Kind::kExpire, w, h.tick()), {}};
    ex.expired = b.expire(later);
    ex.call.ret = h.tick();
    ex.call.invoke_ms = ex.call.ret_ms = ms;
    h.lines.push_back(
        {ex.call.invoke, ex.call.ret, "(final)", "expire (10 h later) -> " + text_of(ex.expired)});
    const bool expired_any = !ex.expired.empty();
    h.pull.push_back(std::move(ex));
    PullRecord c{sub, PullCall(PullCall::Kind::kPoll, w, h.tick()), {}};
    const std::vector<broker::Received> got =
        b.poll(sub.first, sub.second, kFinalMember, 100, later);
    c.call.ret = h.tick();
    c.call.invoke_ms = c.call.ret_ms = ms;
    for (const auto& r : got) {
      h.note_seen(sub.first, r.message);
      c.call.got.push_back({r.message->offset(), r.attempt});
    }
    h.lines.push_back({c.call.invoke, c.call.ret, "(final)",
                       "poll " + oplang::format_value(sub.first) + " " +
                           oplang::format_value(sub.second) + " " + kFinalMember + " max=100 -> " +
                           text_of(got)});
    h.pull.push_back(std::move(c));
    if (got.empty() && !expired_any) return;
    if (round == 99)  // a worker that polls and acks in a loop must see the end (liveness)
      h.errors += "stuck: " + sub.second +
                  ": a final worker polling and acking 100 rounds still got messages back\n";
    for (const auto& r : got) {
      PullRecord a{sub, PullCall(PullCall::Kind::kAck, w, h.tick()), {}};
      a.call.offset = r.message->offset();
      a.call.accepted = static_cast<bool>(b.ack(r.receipt, later));
      a.call.ret = h.tick();
      a.call.invoke_ms = a.call.ret_ms = ms;
      h.lines.push_back({a.call.invoke, a.call.ret, "(final)",
                         "ack " + oplang::format_value(sub.first) + " " +
                             oplang::format_value(sub.second) + " " +
                             std::to_string(a.call.offset) + " " + kFinalMember + " -> " +
                             text_of(a.call.accepted)});
      h.pull.push_back(std::move(a));
    }
  }
}

// `ctx` outlives the run: a handler abandoned after its timeout may still run after ~Broker.
// A durable program after its cut: the power goes off (the dead process's broker is
// destroyed first; its writes reach nothing), and a broker opened on what the disk kept
// reads back every checked topic's log and its checked pull subscriptions' positions.
void reopen_after_cut(const oplang::Program& p, Ctx& ctx, std::unique_ptr<broker::Broker> b) {
  Recorder& h = *ctx.rec;
  b.reset();
  ctx.b = nullptr;
  broker::sim::SimFileSystem::CrashOptions cut;
  cut.seed = h.cut_seed;
  cut.lose_unsynced_entries = h.cut_seed % 2 == 0;
  ctx.disk->crash(cut);
  const std::uint64_t t = h.tick();
  std::string read_back;
  try {
    broker::Broker reopened(options_of(p.broker, ctx.disk, ctx.clock));
    for (const std::string& topic : h.plan.topics) {
      if (h.plan.retained.count(topic) > 0) continue;
      DurableTopic& d = h.reopened[topic];
      d.end = reopened.end_offset(topic);
      broker::PullOptions all;
      all.start = broker::StartPosition::beginning();
      all.ack_timeout = broker::Millis{1} * 3600 * 1000;
      reopened.subscribe_pull(topic, "read_back", all);
      for (int round = 0; round < 100; ++round) {
        const auto got = reopened.poll(topic, "read_back", "final", 1000, now());
        if (got.empty()) break;
        for (const broker::Received& r : got) {
          const broker::Message& m = *r.message;
          d.kept[m.offset()] = Recorder::content(m.payload(), m.headers(), m.key());
        }
      }
      read_back += " " + topic + " end_offset=" + std::to_string(d.end);
      for (const Key& sub : h.plan.pull) {
        if (sub.first != topic) continue;
        d.positions[sub.second] = reopened.stats(topic, sub.second).committed;
        read_back += " " + sub.second + ".committed=" + std::to_string(d.positions[sub.second]);
      }
    }
  } catch (const broker::Error& e) {
    h.errors += std::string("reopen-failed: after the power cut: ") + e.what() + "\n";
  }
  h.lines.push_back({t, h.tick(), "(final)", "power cut, reopen, read back:" + read_back});
}

// R28 under a clock that steps back (`clock=manual`): on every checked topic without
// retention whose messages were all read back (the final drain reads them), offset_for_time
// at each publish time and 1 ms after it is the lowest offset published at or after that
// time, or the end. (The clock is first moved past the latest time: a time after now is
// InvalidArgument.)
void check_seek_by_time(broker::Broker& b, Recorder& h, FiberClock& clock) {
  for (const std::string& topic : h.plan.topics) {
    auto pub = h.published.find(topic);
    if (h.plan.retained.count(topic) || pub == h.published.end()) continue;
    std::map<Offset, broker::Time> times;
    for (Offset o : pub->second) {
      auto t = h.times.find({topic, o});
      if (t == h.times.end()) break;
      times[o] = t->second;
    }
    if (times.size() != pub->second.size()) continue;
    h.times_checked = true;
    std::set<broker::Time> asked;
    for (const auto& [o, t] : times) asked.insert({t, t + broker::Millis{1}});
    if (*asked.rbegin() > clock.peek()) clock.advance(*asked.rbegin() - clock.peek());
    for (broker::Time at : asked) {
      Offset want = times.size();
      for (const auto& [o, t] : times) {
        if (t >= at) {
          want = o;
          break;
        }
      }
      const std::uint64_t invoke = h.tick();
      std::string result;
      try {
        const Offset got = b.offset_for_time(topic, at);
        result = std::to_string(got);
        if (got != want)
          h.errors += "seek-by-time: offset_for_time " + topic + " " +
                      std::to_string(at.time_since_epoch().count()) + " answered " + result +
                      ", but the lowest offset published at or after that time is " +
                      std::to_string(want) + "\n";
      } catch (const broker::Error& e) {
        result = std::string("error:") + broker::to_string(e.code());
        h.errors += "unexpected-error: (final): offset_for_time " + topic + " -> " + result + "\n";
      }
      h.lines.push_back({invoke, h.tick(), "(final)",
                         "offset_for_time " + oplang::format_value(topic) + " " +
                             std::to_string(at.time_since_epoch().count()) + " -> " + result});
    }
  }
}

void body(const oplang::Program& p, Ctx& ctx) {
  auto b = std::make_unique<broker::Broker>(options_of(p.broker, ctx.disk, ctx.clock));
  ctx.b = b.get();
  {
    Publishers publishers;  // gone before the broker
    for (const oplang::Op& op : p.setup) Exec(ctx, "setup", true, publishers).run(op);
  }
  std::vector<broker::sync::Thread> threads;
  for (const oplang::Fiber& f : p.fibers) {
    threads.emplace_back([&ctx, &f] {
      Publishers publishers;
      for (const oplang::Op& op : f.ops) Exec(ctx, f.name, false, publishers).run(op);
    });
  }
  for (auto& t : threads) t.join();
  Recorder& h = *ctx.rec;
  if (!p.broker.shutdown) settle_push(p, *b, h);
  for (const Key& sub : h.plan.pull) final_drain(*b, h, sub);
  for (const Key& sub : h.plan.pull) {
    FinalState& f = h.pull_end[sub];
    try {
      f.stats = b->stats(sub.first, sub.second);
      for (const auto& d : b->dead_letters(sub.first, sub.second)) {
        h.note_seen(sub.first, d.message);
        f.dead.insert(d.message->offset());
        f.reasons[d.message->offset()] = d.reason;
      }
    } catch (const broker::Error& e) {
      h.errors += "unexpected-error: (final): stats or dead_letters of " + sub.first + "/" +
                  sub.second + " -> error:" + broker::to_string(e.code()) + "\n";
    }
  }
  if (ctx.clock) check_seek_by_time(*b, h, *ctx.clock);
  if (!p.broker.shutdown) {
    if (h.cut) reopen_after_cut(p, ctx, std::move(b));
    return;
  }
  // R16: destroy the broker with its dispatcher mid-work; handlers still running may finish.
  h.shutdown_began = h.tick();
  h.lines.push_back({h.shutdown_began, 0, "(final)", "~Broker"});
  const std::size_t line = h.lines.size() - 1;
  b.reset();
  ctx.b = nullptr;
  h.shutdown_returned = h.tick();
  h.lines[line].ret = h.shutdown_returned;
  h.lines[line].text += " -> returned";
  if (h.cut) reopen_after_cut(p, ctx, nullptr);
}

// ---- judging ----

// Puts `tag` after the anomaly name of every "<name>: details" line.
std::string tagged(const std::string& lines, const std::string& tag) {
  std::string out;
  std::size_t begin = 0;
  while (begin < lines.size()) {
    std::size_t end = lines.find('\n', begin);
    if (end == std::string::npos) end = lines.size();
    const std::string line = lines.substr(begin, end - begin);
    const std::size_t colon = line.find(": ");
    out += colon == std::string::npos
               ? line
               : line.substr(0, colon + 2) + tag + " " + line.substr(colon + 2);
    out += "\n";
    begin = end + 1;
  }
  return out;
}

// The offsets a checked subscription owes a confirmation for, and whether its start was
// right. From the beginning: every one. A fiber's `start=end` subscription starts at the
// topic's end when subscribe ran: the offsets it owes are a suffix, from its lowest first
// offer (`lowest`) or, at the latest, from the first message published after subscribe
// returned; a first offer of a message published before subscribe was called is
// `unexpected`.
std::vector<Offset> owed_offsets(const Recorder& h, const Key& key, std::optional<Offset> lowest,
                                 std::string& failures) {
  std::vector<Offset> all;
  if (auto pub = h.published.find(key.first); pub != h.published.end()) all = pub->second;
  auto late = h.plan.late.find(key);
  if (late == h.plan.late.end() || late->second != model::Start::Kind::kEnd) return all;
  auto ticks = h.subscribed.find(key);
  if (ticks == h.subscribed.end()) return {};
  std::optional<Offset> first_after, last_before;
  auto at = h.published_at.find(key.first);
  if (at != h.published_at.end()) {
    for (const auto& [o, when] : at->second) {
      // A publish that returned before subscribe was called, or called after it returned.
      if (when.ret < ticks->second.first) last_before = std::max(last_before.value_or(o), o);
      if (when.invoke > ticks->second.second) first_after = std::min(first_after.value_or(o), o);
    }
  }
  if (lowest && last_before && *lowest <= *last_before)
    failures += "unexpected: " + key.second + " (start=end, subscribed at ticks " +
                std::to_string(ticks->second.first) + ".." + std::to_string(ticks->second.second) +
                ") was offered offset " + std::to_string(*lowest) +
                ", published before subscribe was called\n";
  Offset from = std::numeric_limits<Offset>::max();
  if (lowest) from = *lowest;
  if (first_after) from = std::min(from, *first_after);
  std::vector<Offset> owed;
  for (Offset o : all)
    if (o >= from) owed.push_back(o);
  return owed;
}

// The last accepted seek of `key` (among overlapping last ones: the highest offset, which
// every one of them leaves owed) and the earliest tick it may have taken effect at: its
// invoke (a call that began during the seek may already be the replay).
std::optional<std::pair<std::uint64_t, Offset>> last_seek(const Recorder& h, const Key& key) {
  auto it = h.seeks.find(key);
  if (it == h.seeks.end() || it->second.empty()) return std::nullopt;
  const auto& list = it->second;
  const auto last = std::max_element(list.begin(), list.end(),
                                     [](const auto& a, const auto& b) { return a.ret < b.ret; });
  std::uint64_t after = last->invoke;
  Offset from = last->offset;
  for (const auto& s : list) {
    if (s.ret < last->invoke) continue;  // finished before the last one began
    from = std::max(from, s.offset);
    after = std::min(after, s.invoke);
  }
  return std::make_pair(after, from);
}

// R26: between a pause's return and its resume's call no offer starts. The lane or pool task
// may have taken one message before the pause and enter its handler just after it returned
// (a scheduling point lies between), so one call may begin in the window, not two. A pause
// never resumed by the end is judged up to the end.
std::string check_paused(const Recorder& h, const Key& key, int sub) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;
  if (auto w = h.pause_windows.find(key); w != h.pause_windows.end()) windows = w->second;
  if (auto p = h.paused_since.find(key); p != h.paused_since.end()) {
    windows.emplace_back(p->second, std::numeric_limits<std::uint64_t>::max());
  }
  std::string failures;
  for (const auto& [from, to] : windows) {
    std::vector<std::string> inside;
    for (const HandlerCall& c : h.handlers) {
      if (c.sub == sub && c.enter > from && c.enter < to) {
        inside.push_back(std::to_string(c.offset) + "#" + std::to_string(c.attempt) + "@" +
                         std::to_string(c.enter));
      }
    }
    if (inside.size() <= 1) continue;
    failures += "offered-while-paused: " + key.second + " was paused at tick " +
                std::to_string(from) + " and " + std::to_string(inside.size()) +
                " handler calls began before resume (offset#attempt@tick:";
    for (const std::string& c : inside) failures += " " + c;
    failures += "); at most the one taken before the pause may\n";
  }
  return failures;
}

std::string judge(const Recorder& h, const DispatcherTiming& timing, std::string& checked) {
  std::string failures;
  const bool threaded = timing.threads > 0;
  checked = "checked: completion, typed errors";
  if (threaded) checked += timing.shutdown_began ? ", shutdown (R16)" : ", liveness";
  for (const std::string& topic : h.plan.topics) {
    const bool retained = h.plan.retained.count(topic) > 0;
    History ht;
    auto pub = h.published.find(topic);
    if (pub != h.published.end()) ht.published = pub->second;
    failures += tagged(check_offsets(ht), topic);
    checked += "; " + topic + (retained ? " (retained)" : "") + ": offsets";
    // Push subscriptions of this topic, one history each.
    for (int i : checked_push(h)) {
      const Key& key = h.push[static_cast<std::size_t>(i)].key;
      if (key.first != topic) continue;
      History hs;
      hs.retention = retained;
      if (auto k = h.plan.keeps.find(topic); k != h.plan.keeps.end()) hs.keeps = k->second;
      if (auto m = h.plan.max_deliveries.find(key); m != h.plan.max_deliveries.end())
        hs.max_deliveries = m->second;
      hs.clock = h.clock;
      if (auto at = h.published_at.find(topic); at != h.published_at.end())
        for (const auto& [o, when] : at->second) hs.published_at[o] = {when.ret, when.ms};
      hs.sub_names[i] = key.second;
      if (auto u = h.unsubscribed_at.find(i); u != h.unsubscribed_at.end())
        hs.unsubscribed_at.insert(*u);
      if (auto r = h.redrives.find(key); r != h.redrives.end()) hs.redriven_at[i] = r->second;
      std::map<int, FinalState> alive;
      if (auto a = h.push_alive.find(i); a != h.push_alive.end()) alive.insert(*a);
      std::optional<Offset> lowest;
      for (const HandlerCall& c : h.handlers) {
        if (c.sub != i) continue;
        hs.handlers.push_back(c);
        if (c.attempt == 1) lowest = std::min(lowest.value_or(c.offset), c.offset);
      }
      if (h.plan.seeked.count(key)) {
        hs.published = ht.published;
        const auto seek = last_seek(h, key);
        if (seek && !alive.empty())
          failures +=
              tagged(check_after_seek(hs, true, seek->first, seek->second, alive.begin()->second),
                     key.second);
        checked += ", push " + key.second + " (after its seek)";
        continue;
      }
      hs.published = owed_offsets(h, key, lowest, failures);
      failures += check_push(hs, alive, timing.pool ? timing.timeout_ms : 0);
      checked += ", push " + key.second;
      if (h.plan.late.count(key)) checked += " (subscribed by a fiber)";
      if (h.plan.paused.count(key)) {
        failures += check_paused(h, key, i);
        checked += " (paused by a fiber: no offer starts while paused, R26; no R15 timing)";
        continue;
      }
      if (threaded) {
        failures += check_timing(hs, h.handlers, timing, alive);
        checked += " (with R15 timing)";
      }
    }
    // Push groups of this topic: every member's handler calls, as one subscription's.
    int group_id = 1 << 20;
    for (const auto& [group, members] : h.plan.groups) {
      if (group.first != topic) continue;
      const int id = group_id++;
      History hg;
      hg.retention = retained;
      if (auto k = h.plan.keeps.find(topic); k != h.plan.keeps.end()) hg.keeps = k->second;
      if (auto m = h.plan.max_deliveries.find(group); m != h.plan.max_deliveries.end())
        hg.max_deliveries = m->second;
      hg.clock = h.clock;
      hg.published = ht.published;
      if (auto at = h.published_at.find(topic); at != h.published_at.end())
        for (const auto& [o, when] : at->second) hg.published_at[o] = {when.ret, when.ms};
      hg.sub_names[id] = "group " + group.second;
      for (const HandlerCall& c : h.handlers) {
        const Key& key = h.push[static_cast<std::size_t>(c.sub)].key;
        if (key.first != topic ||
            std::find(members.begin(), members.end(), key.second) == members.end())
          continue;
        hg.handlers.push_back(c);
        hg.handlers.back().sub = id;
      }
      std::map<int, FinalState> alive;
      if (auto e = h.group_end.find(group); e != h.group_end.end()) alive[id] = e->second;
      failures += check_push(hg, alive, timing.pool ? timing.timeout_ms : 0);
      if (threaded) failures += check_timing(hg, h.handlers, timing, alive);
      checked +=
          ", push group " + group.second + " (" + std::to_string(members.size()) + " members)";
    }
    // Pull subscriptions of this topic, one history each.
    for (const Key& sub : h.plan.pull) {
      if (sub.first != topic) continue;
      History hp;
      hp.retention = retained;
      if (auto b = h.plan.bounds.find(sub); b != h.plan.bounds.end()) hp.max_in_flight = b->second;
      hp.ready_at_once = !h.plan.held_back.count(sub);
      hp.auto_expire_ms = h.plan.auto_expire_ms;
      hp.ordered = h.plan.ordered.count(sub) > 0;
      if (auto t = h.plan.ack_timeouts.find(sub); t != h.plan.ack_timeouts.end())
        hp.ack_timeout_ms = t->second;
      if (auto m = h.plan.max_deliveries.find(sub); m != h.plan.max_deliveries.end())
        hp.max_deliveries = m->second;
      hp.clock = h.clock;
      if (auto at = h.published_at.find(topic); at != h.published_at.end())
        for (const auto& [o, when] : at->second) hp.published_at[o] = {when.ret, when.ms};
      for (const auto& [name, id] : h.members) hp.worker_names[id] = name;
      hp.worker_names[kFinalWorker] = kFinalMember;
      std::optional<Offset> lowest;
      for (const PullRecord& r : h.pull) {
        if (r.call.kind == PullCall::Kind::kExpire) {
          PullCall c = r.call;
          for (const broker::Expired& e : r.expired)
            if (e.topic == sub.first && e.subscription == sub.second) c.expired.push_back(e.offset);
          hp.pull.push_back(std::move(c));
        } else if (r.sub == sub) {
          hp.pull.push_back(r.call);
          for (auto [o, a] : r.call.got)
            if (a == 1) lowest = std::min(lowest.value_or(o), o);
        }
      }
      auto end = h.pull_end.find(sub);
      if (end == h.pull_end.end()) continue;
      if (h.plan.seeked.count(sub)) {
        hp.published = ht.published;
        if (const auto seek = last_seek(h, sub))
          failures += tagged(check_after_seek(hp, false, seek->first, seek->second, end->second),
                             sub.second);
        checked += ", pull " + sub.second + " (after its seek)";
        continue;
      }
      hp.published = owed_offsets(h, sub, lowest, failures);
      failures += tagged(check_pull(hp, end->second), sub.second);
      checked += ", pull " + sub.second;
      if (hp.auto_expire_ms > 0 && hp.ready_at_once && !hp.retention) {
        failures += tagged(check_expiry(hp), sub.second);
        checked += " (with R17 late-expiry)";
      }
      if (h.plan.late.count(sub)) checked += " (subscribed by a fiber)";
    }
  }
  if (h.stuck)
    failures += h.liveness_bound_ms > 0
                    ? "stuck: wait_delivered did not return true within the liveness bound of " +
                          std::to_string(h.liveness_bound_ms) +
                          " ms of virtual time after the fibers ended (a message stayed hot)\n"
                    : "stuck: live subscriptions never settled (backlog or in-flight left)\n";
  failures += check_shutdown(h.handlers, timing);
  // R11: every poll_wait of any subscription waits its timeout out or is woken at once.
  checked += ", poll_wait waits";
  if (h.times_checked) checked += ", seek by time (R28, clock=manual)";
  std::vector<WakeSeen> wakes;
  for (const WakeSeen& w : h.wakes) {
    // A subscription made again under the name by a subscribe that returned after an
    // unsubscribe began (so may have taken effect after it) is what a waiting poll_wait
    // polls from then on: that wait need not end.
    auto again = h.subscribe_calls.find(w.sub);
    if (w.ends_with_error && again != h.subscribe_calls.end() &&
        std::any_of(again->second.begin(), again->second.end(),
                    [&](std::uint64_t at) { return at > w.invoke; }))
      continue;
    // Likewise another seek that may have taken effect after this one's (it may have left
    // nothing ready).
    auto moved = h.moves.find(w.sub);
    if (!w.ends_with_error && moved != h.moves.end() &&
        std::count_if(moved->second.begin(), moved->second.end(),
                      [&](std::uint64_t ret) { return ret > w.invoke; }) > 1)
      continue;
    wakes.push_back(w);
  }
  failures += check_waits(h.polls, wakes);
  // Every message read is the one published at its offset (checked topics or not).
  checked += ", content";
  failures += h.content_errors;
  for (const auto& [at, got] : h.seen) {
    auto it = h.sent.find(at);
    if (it == h.sent.end() || it->second == got) continue;
    failures += "wrong-content: " + at.first + " offset " + std::to_string(at.second) +
                " was published as " + it->second + " but read as " + got + "\n";
    break;  // one is enough, and the rest usually follow from it
  }
  failures += h.errors;
  return failures;
}

// A durable program's cut (durability.h), per checked topic without retention: its publishes,
// what polls handed out before the cut, and its checked pull subscriptions' confirmations
// (an accepted ack or term, or any dead letter: a commit may pass those).
std::string judge_cut(const Recorder& h, const oplang::BrokerSpec& spec, std::string& checked) {
  std::string failures;
  const Cut& cut = *h.cut;
  for (const auto& [topic, reopened] : h.reopened) {
    DurableTopic d = reopened;
    if (auto it = h.published_at.find(topic); it != h.published_at.end()) {
      for (const auto& [offset, at] : it->second) {
        auto sent = h.sent.find({topic, offset});
        d.published[offset] = {at.ret, at.ms, sent == h.sent.end() ? "" : sent->second};
      }
    }
    for (const PullRecord& r : h.pull) {
      if (r.sub.first != topic) continue;
      const PullCall& c = r.call;
      if (c.kind == PullCall::Kind::kPoll && c.ret < cut.invoke) {
        for (const auto& [offset, attempt] : c.got) d.read_before_cut.insert(offset);
      }
      const bool checked_sub = h.plan.pull.count(r.sub) > 0 && h.plan.late.count(r.sub) == 0 &&
                               h.plan.seeked.count(r.sub) == 0;
      const bool confirms = c.kind == PullCall::Kind::kAck || c.kind == PullCall::Kind::kTerm;
      if (checked_sub && confirms && c.accepted)
        d.confirms[r.sub.second].push_back({c.offset, c.invoke, c.ret, c.ret_ms});
    }
    for (auto it = d.positions.begin(); it != d.positions.end();) {
      const Key key{topic, it->first};
      if (h.plan.late.count(key) > 0 || h.plan.seeked.count(key) > 0) {
        it = d.positions.erase(it);
        continue;
      }
      d.confirms[it->first];  // judged even with no confirmation
      if (auto end = h.pull_end.find(key); end != h.pull_end.end()) {
        for (Offset dead : end->second.dead)
          d.confirms[it->first].push_back({dead, 0, std::numeric_limits<std::uint64_t>::max(), 0});
      }
      ++it;
    }
    const CutVerdict v = check_cut(topic, d, cut, spec.publish_sync, spec.commit_sync);
    failures += v.failures;
    checked += "; " + topic + ": power cut at " + std::to_string(cut.ms) + " ms took back " +
               std::to_string(v.publishes_taken_back) + " returned publishes and " +
               std::to_string(v.position_taken_back) + " confirmed offsets";
  }
  return failures;
}

std::string indent(const std::string& text, const std::string& prefix) {
  std::string out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    out += prefix + text.substr(begin, end - begin) + "\n";
    begin = end + 1;
  }
  return out;
}

std::string history_text(const Recorder& h) {
  std::vector<const Line*> sorted;
  for (const Line& l : h.lines) sorted.push_back(&l);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Line* a, const Line* b) { return a->invoke < b->invoke; });
  std::size_t width = 5;
  for (const Line* l : sorted) width = std::max(width, l->who.size());
  std::string out;
  char ticks[48];
  for (const Line* l : sorted) {
    if (l->ret == 0) {  // still running when the run ended (deadlock, step limit)
      std::snprintf(ticks, sizeof ticks, "%5llu..?     ",
                    static_cast<unsigned long long>(l->invoke));
    } else {
      std::snprintf(ticks, sizeof ticks, "%5llu..%-5llu ",
                    static_cast<unsigned long long>(l->invoke),
                    static_cast<unsigned long long>(l->ret));
    }
    out += ticks + l->who + std::string(width - l->who.size() + 1, ' ') + l->text +
           (l->ret == 0 ? " -> (never returned)" : "") + "\n";
  }
  return out;
}

/// The calls of one broker as timeline bars, in invocation order, rows prefixed (several
/// brokers); `offset` (if any) marks the calls that name it.
void add_timeline(const Recorder& h, const std::string& prefix, const std::string& offset,
                  bool unfinished, std::vector<conformance::TimedStep>& out) {
  std::vector<const Line*> sorted;
  for (const Line& l : h.lines) sorted.push_back(&l);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Line* a, const Line* b) { return a->invoke < b->invoke; });
  // An offset in a call's text: "ack t s 3 w", "-> 3", "[3#1@...", "t/s:3".
  const std::regex names(offset.empty() ? std::string("$^")
                                        : "(^|[ \\[:])" + offset + "([#\\] ]|$)");
  for (const Line* l : sorted) {
    conformance::TimedStep s;
    s.row = prefix + l->who;
    s.call = l->text;
    s.engine = l->ret == 0 ? "never returned" : "";
    s.start_ms = static_cast<double>(l->invoke);
    s.end_ms = static_cast<double>(l->ret == 0 ? h.clock + 1 : l->ret);
    s.anomaly = unfinished ? l->ret == 0 : std::regex_search(l->text, names);
    out.push_back(std::move(s));
  }
}

}  // namespace

ProgramRun run_program(const oplang::Program& program, const fiber::Schedule& schedule) {
  return run_programs({program}, schedule);
}

ProgramRun run_programs(const std::vector<oplang::Program>& programs,
                        const fiber::Schedule& schedule) {
  auto shared = std::make_shared<const std::vector<oplang::Program>>(programs);
  std::vector<std::shared_ptr<Ctx>> ctxs;
  std::vector<std::function<void()>> bodies;
  for (std::size_t i = 0; i < programs.size(); ++i) {
    auto ctx = std::make_shared<Ctx>();
    ctx->rec = std::make_shared<Recorder>();
    ctx->rec->plan = make_plan(programs[i]);
    if (programs[i].broker.durable) ctx->disk = std::make_shared<broker::sim::SimFileSystem>();
    if (programs[i].broker.manual_clock) ctx->clock = std::make_shared<FiberClock>();
    ctxs.push_back(ctx);
    bodies.push_back([shared, ctx, i] { body((*shared)[i], *ctx); });
  }
  ProgramRun out;
  out.run = fiber::run_fibers(bodies, schedule);
  const bool several = programs.size() > 1;
  auto label = [&](std::size_t i) { return "broker " + std::to_string(i + 1) + ": "; };
  // A deadlocked run's fibers never resume: what they recorded so far is safe to read.
  for (std::size_t i = 0; i < programs.size(); ++i)
    out.history += (several ? label(i) + "\n" : "") + history_text(*ctxs[i]->rec);
  if (!out.run.ok()) {
    if (out.run.outcome != fiber::Outcome::kCompleted || out.run.error) {
      out.failures = "run-failed: " + std::string(fiber::to_string(out.run.outcome));
      if (out.run.error) out.failures += " (exception in " + out.run.error_fiber + ")";
      out.failures += "\n";
    }
    // Weak memory: a read of published data that does not happen after its write.
    if (!out.run.data_race.empty()) out.failures += out.run.data_race + "\n";
    for (std::size_t i = 0; i < programs.size(); ++i)
      out.failures += several ? tagged(ctxs[i]->rec->errors, label(i)) : ctxs[i]->rec->errors;
    out.checked = "checked: completion";
    for (std::size_t i = 0; i < programs.size(); ++i) {
      add_timeline(*ctxs[i]->rec, several ? label(i) : "", "", true, out.timeline);
    }
    return out;
  }
  for (std::size_t i = 0; i < programs.size(); ++i) {
    const oplang::Program& program = programs[i];
    const Recorder& rec = *ctxs[i]->rec;
    DispatcherTiming timing;
    timing.pool = program.broker.dispatcher == Dispatcher::kPool;
    timing.threads = timing.pool                                      ? program.broker.threads
                     : program.broker.dispatcher == Dispatcher::kLane ? 1
                                                                      : 0;
    timing.backoff_ms = program.broker.backoff;
    timing.timeout_ms = timing.pool ? program.broker.timeout : 0;
    timing.lanes = rec.push.size();
    auto add_waits = [&timing](const oplang::Op& op) {
      if (const auto* o = std::get_if<oplang::Subscribe>(&op); o != nullptr && !o->backoff.empty())
        timing.waits[o->name].assign(o->backoff.begin(), o->backoff.end());
    };
    for (const oplang::Op& op : program.setup) add_waits(op);
    for (const oplang::Fiber& f : program.fibers)
      for (const oplang::Op& op : f.ops) add_waits(op);
    timing.shutdown_began = rec.shutdown_began;
    timing.shutdown_returned = rec.shutdown_returned;
    std::string checked;
    std::string failures = judge(rec, timing, checked);
    if (rec.cut) failures += judge_cut(rec, program.broker, checked);
    out.failures += several ? tagged(failures, label(i)) : failures;
    out.checked += (several ? (i ? "\n" : "") + label(i) : "") + checked;
  }
  // The first failure line's offset, for the timeline's highlight.
  std::smatch m;
  const std::string first = out.failures.substr(0, out.failures.find('\n'));
  const std::string offset =
      std::regex_search(first, m, std::regex("offset ([0-9]+)")) ? m[1].str() : std::string();
  for (std::size_t i = 0; i < programs.size(); ++i) {
    add_timeline(*ctxs[i]->rec, several ? label(i) : "", offset, false, out.timeline);
  }
  return out;
}

std::string replay_command(const std::vector<oplang::Program>& programs,
                           const fiber::Schedule& schedule) {
  return std::string("replay: ") + FIBER_REPLAY_PATH + " --schedule '" +
         fiber::to_string(schedule) + "' - <<'EOF'\n" + oplang::print(programs) + "EOF\n";
}

std::string replay_command(const oplang::Program& program, const fiber::Schedule& schedule) {
  return replay_command(std::vector<oplang::Program>{program}, schedule);
}

// Writes the run's timeline page next to fiber-replay (or into $FIBER_TIMELINE_DIR), named
// by a hash of the replay command so each counterexample, shrunk or not, has its own page;
// "" if it cannot be written (a report never fails for want of a picture).
static std::string write_timeline(const ProgramRun& run, const std::string& replay) {
  const char* env = std::getenv("FIBER_TIMELINE_DIR");
  const std::filesystem::path dir =
      env != nullptr && *env != '\0'
          ? std::filesystem::path(env)
          : std::filesystem::path(FIBER_REPLAY_PATH).parent_path() / "timelines";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "";
  char name[40];
  std::snprintf(name, sizeof name, "timeline-%016zx.html", std::hash<std::string>{}(replay));
  const std::filesystem::path page = dir / name;
  std::ofstream file(page);
  file << conformance::timeline_html(
      "A concurrent run that broke the contract", run.timeline,
      run.failures.substr(0, run.failures.find('\n')) + " (rows: fibers; ticks: logical clock)");
  return file ? page.string() : "";
}

std::string failure_report(const ProgramRun& run, const std::vector<oplang::Program>& programs) {
  std::string out = run.failures;
  out += (programs.size() > 1 ? "programs (one broker each):\n" : "program:\n") +
         indent(oplang::print(programs), "  ");
  out += "run: " + std::string(fiber::to_string(run.run.outcome)) + " after " +
         std::to_string(run.run.steps) + " scheduling points\n";
  if (run.run.error) out += "  exception in " + run.run.error_fiber + "\n";
  out += run.run.report;
  out += "schedule: " + fiber::to_string(run.run.schedule) + "\n";
  fiber::Schedule as_walk = fiber::Schedule::walk(run.run.choices);
  as_walk.weak = run.run.schedule.weak;
  out += "  same run as a walk: " + fiber::to_string(as_walk) + "\n";
  const std::string replay = replay_command(programs, run.run.schedule);
  out += replay;
  if (const std::string page = write_timeline(run, replay); !page.empty()) {
    out += "timeline: " + page + "\n";
  }
  return out;
}

std::string failure_report(const ProgramRun& run, const oplang::Program& program) {
  return failure_report(run, std::vector<oplang::Program>{program});
}

}  // namespace fiberprop
