#include "conformance/generator.h"

#include <algorithm>
#include <cstdlib>
#include <random>
#include <set>
#include <tuple>
#include <variant>

#include "model/errors.h"

namespace conformance {

Tracker::Tracker(const Profile& profile, model::Millis margin)
    : runner_(model_switches(profile)), margin_(margin) {}

bool Tracker::advance_ok(model::Millis ms) const {
  const model::Millis then = now() + ms;
  for (const auto& [key, hold] : held()) {
    if (std::llabs(then - hold.deadline) < margin_) return false;
  }
  for (const auto& [key, ends] : retry_waits()) {
    for (const model::Millis end : ends) {
      if (std::llabs(then - end) < margin_) return false;
    }
  }
  return true;
}

bool Tracker::waits_spaced() const {
  const auto holds = held();
  for (const auto& [key, ends] : retry_waits()) {
    for (std::size_t i = 0; i < ends.size(); ++i) {
      for (std::size_t j = i + 1; j < ends.size(); ++j) {
        if (std::llabs(ends[i] - ends[j]) < margin_) return false;
      }
      for (const auto& [h, hold] : holds) {
        if (std::get<0>(h) == key.first && std::get<1>(h) == key.second &&
            std::llabs(ends[i] - hold.deadline) < margin_) {
          return false;
        }
      }
    }
  }
  return true;
}

bool Tracker::seek_time_ok(const oplang::SeekToTime& op) const {
  const model::Model& m = runner_.model();
  if (op.time > now() || margin_ == 0) return true;
  try {
    return m.offset_for_time(op.topic, op.time - margin_ + 1) ==
           m.offset_for_time(op.topic, op.time);
  } catch (const model::Error&) {
    return true;  // an unknown topic: refused, whatever the time
  }
}

std::map<std::pair<std::string, std::string>, std::vector<model::Millis>> Tracker::retry_waits()
    const {
  const model::Model& m = runner_.model();
  std::map<std::pair<std::string, std::string>, std::vector<model::Millis>> out;
  for (const std::string& t : m.topics()) {
    for (const std::string& s : m.pull_names(t)) {
      for (const model::Millis end : m.retry_waits(t, s)) {
        if (end > now()) out[{t, s}].push_back(end);
      }
    }
  }
  return out;
}

oplang::Outcome Tracker::step(const oplang::Op& op) { return runner_.step(op); }

std::map<Tracker::Key, Tracker::Hold> Tracker::held() const {
  // Read from the model rather than rebuilt from outcomes, so it cannot drift from what the
  // model holds; the map orders it by key, as the generator's random picks expect.
  const model::Model& m = runner_.model();
  std::map<Key, Hold> out;
  for (const std::string& t : m.topics()) {
    for (const std::string& s : m.pull_names(t)) {
      for (const model::Model::HeldView& h : m.held(t, s)) {
        out[{t, s, h.offset}] = Hold{h.member, h.deadline};
      }
    }
  }
  return out;
}

bool keeps_margin(const oplang::Script& script, const Profile& profile, model::Millis margin) {
  Tracker tracker(profile, margin);
  for (const oplang::Op& op : script) {
    if (const auto* a = std::get_if<oplang::Advance>(&op); a && !tracker.advance_ok(a->ms)) {
      return false;
    }
    if (const auto* st = std::get_if<oplang::SeekToTime>(&op); st && !tracker.seek_time_ok(*st)) {
      return false;
    }
    tracker.step(op);
    if (!tracker.waits_spaced()) return false;
  }
  return true;
}

namespace {

class Maker {
 public:
  Maker(std::uint64_t seed, const GenOptions& options, const Profile& profile)
      : rng_(seed),
        options_(options),
        tracker_(profile, options.margin),
        expire_with_advance_(expires_with_advance(profile)) {}

  oplang::Script make() {
    add(create("t"));
    add(subscribe("t"));
    while (script_.size() < options_.ops) one();
    if (!bounds_.empty()) look_last();
    return script_;
  }

 private:
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }
  bool chance(int percent) { return static_cast<int>(pick(100)) < percent; }

  void add(const oplang::Op& op) {
    script_.push_back(op);
    const oplang::Outcome out = tracker_.step(op);
    // Each subscription the model made: an extend uses its ack timeout (the subset's only
    // extension, target.h), a lag its filter.
    if (out.error) return;
    if (const auto* c = std::get_if<oplang::CreateTopic>(&op)) {
      publish_times_.erase(c->name);
      if (c->retention_messages > 0) bounds_[c->name] = c->retention_messages;
    } else if (const auto* s = std::get_if<oplang::SubscribePull>(&op)) {
      subs_.try_emplace({s->topic, s->name}, *s);
    } else if (const auto* sp = std::get_if<oplang::Subscribe>(&op)) {
      if (!sp->filter.empty()) push_filtered_.insert({sp->topic, sp->name});
    } else if (const auto* u = std::get_if<oplang::Unsubscribe>(&op)) {
      subs_.erase({u->topic, u->name});
      push_filtered_.erase({u->topic, u->name});
    } else if (const auto* d = std::get_if<oplang::DeleteTopic>(&op)) {
      std::erase_if(subs_, [&](const auto& e) { return e.first.first == d->name; });
      bounds_.erase(d->name);
      publish_times_.erase(d->name);
    } else if (const auto* pub = std::get_if<oplang::Publish>(&op)) {
      publish_times_[pub->topic].push_back(tracker_.now());
    } else if (const auto* p = std::get_if<oplang::Poll>(&op)) {
      if (const auto* r = std::get_if<std::vector<model::Received>>(&out.value)) {
        for (const model::Received& m : *r) given_.insert({p->topic, p->sub, m.offset, p->member});
      }
    }
  }

  std::string topic() { return chance(92) ? "t" : (chance(50) ? "u" : "nope"); }
  std::string sub() {
    if (options_.push && chance(20)) return "h";  // drawn only where served, as below
    return chance(88) ? "p" : (chance(70) ? "q" : "nope");
  }
  std::string member() { return chance(70) ? "w1" : "w2"; }

  /// Half the time bounded, when options allow: a bound a few publishes reach, so held,
  /// returned and waiting messages are trimmed away under the subscriptions.
  oplang::CreateTopic create(const std::string& name) {
    const auto& bounds = options_.retention_messages;
    const std::size_t keep = !bounds.empty() && chance(50) ? bounds[pick(bounds.size())] : 0;
    return oplang::CreateTopic{name, keep, 0};
  }

  oplang::SubscribePull subscribe(const std::string& t) {
    oplang::SubscribePull s;
    s.topic = t;
    s.name = chance(70) ? "p" : "q";
    s.ack_timeout = options_.ack_timeouts[pick(options_.ack_timeouts.size())];
    const int max[] = {0, 1, 2, 3};
    s.max_deliveries = max[pick(4)];
    if (chance(25)) s.filter = {{"color", "red"}};
    s.start.kind = chance(50) ? model::Start::Kind::kBeginning : model::Start::Kind::kEnd;
    // Drawn only where served, so the scripts of other targets stay as they were.
    if (!options_.max_in_flight.empty() && chance(33)) {
      s.max_in_flight = options_.max_in_flight[pick(options_.max_in_flight.size())];
    }
    return s;
  }

  /// A push subscription (R8) whose handler answers its first few offers by script (then
  /// confirms); now and then under a pull subscription's name (refused). None on a bounded
  /// topic: retention would drop what an engine already pushed to its client.
  void subscribe_push(const std::string& t) {
    if (bounds_.contains(t)) return;
    oplang::Subscribe s;
    s.topic = t;
    s.name = chance(85) ? "h" : "p";
    const int max[] = {0, 1, 2, 3};
    s.max_deliveries = max[pick(4)];
    if (chance(25)) s.filter = {{"color", "red"}};
    s.start.kind = chance(50) ? model::Start::Kind::kBeginning : model::Start::Kind::kEnd;
    for (std::size_t i = pick(6); i > 0; --i) {
      const std::size_t v = pick(100);
      model::Step step;
      step.verdict = v < 40   ? model::Verdict::kConfirm
                     : v < 65 ? model::Verdict::kReject
                     : v < 75 ? model::Verdict::kThrowStd
                     : v < 80 ? model::Verdict::kThrowOther
                              : model::Verdict::kTerminate;
      s.script.push_back(step);
    }
    add(s);
  }

  void one() {
    const std::size_t roll = pick(100);
    if (roll < 30) {
      const std::string t = topic();
      // On a bounded topic, a third of the time a burst that trims past what is held.
      const auto bound = bounds_.find(t);
      const std::size_t n = bound != bounds_.end() && chance(33) ? bound->second : 1;
      for (std::size_t i = 0; i < n; ++i) {
        oplang::Publish p;
        p.topic = t;
        p.payload = "m" + std::to_string(++published_);
        if (chance(40)) p.headers = {{"color", chance(50) ? "red" : "blue"}};
        add(p);
      }
    } else if (roll < 50) {
      if (options_.push && chance(30)) {
        add(oplang::Drain{});
        return;
      }
      // A deadline a margin away from every retry wait still to end (an extend of a waiting
      // message may have put one near now + the ack timeout).
      const oplang::Poll p{topic(), sub(), member(), 1 + pick(4)};
      if (spaced_after(p)) add(p);
    } else if (roll < 60) {
      settle(chance(40)   ? Answer::kAck
             : chance(35) ? Answer::kExtend
             : chance(50) ? Answer::kNack
                          : Answer::kTerm);
    } else if (roll < 66) {
      settle_all();
    } else if (roll < 78) {
      advance();
    } else if (roll < 83) {
      if (options_.push && chance(40)) {
        subscribe_push(chance(85) ? "t" : "u");
      } else {
        add(subscribe(chance(85) ? "t" : "u"));
      }
    } else if (roll < 88) {
      if (options_.lag && chance(60)) {
        lag();
      } else {
        add(oplang::GetDeadLetters{topic(), sub()});
      }
    } else if (roll < 91) {
      add(create(chance(60) ? "u" : "t"));
    } else if (roll < 93) {
      add(oplang::Unsubscribe{topic(), sub()});
    } else if (roll < 95) {
      add(oplang::DeleteTopic{topic()});
    } else if (options_.seek_to_time && chance(25)) {
      seek_to_time();
    } else if (options_.seek && chance(50)) {
      seek();
    } else if (!expire_with_advance_ && chance(50)) {
      add(oplang::Expire{});
    } else {
      settle(chance(50) ? Answer::kNack : chance(60) ? Answer::kAck : Answer::kTerm);
    }
  }

  /// A seek (R12) to an offset of the topic's range or one past either end (refused):
  /// back over what was acked, into what is held, or ahead past what waits.
  void seek() {
    const std::string t = topic();
    model::Offset oldest = 0;
    model::Offset end = 0;
    try {
      oldest = tracker_.runner().model().oldest_offset(t);
      end = tracker_.runner().model().end_offset(t);
    } catch (const model::Error&) {
      // an unknown topic: the seek is refused, whatever the offset
    }
    const model::Offset from = oldest > 0 ? oldest - 1 : 0;
    add(oplang::Seek{t, sub(), from + static_cast<model::Offset>(pick(end + 2 - from))});
  }

  /// The ack timeout of subscription s of topic t; the first of the options' for one the
  /// model has not made (the step is then refused whatever it extends by).
  model::Millis ack_timeout(const std::string& t, const std::string& s) const {
    const auto made = subs_.find({t, s});
    return made != subs_.end() ? made->second.ack_timeout : options_.ack_timeouts[0];
  }

  /// A lag (R27) of a subscription, or of one that does not exist (refused); of one with a
  /// header filter only where options allow (GenOptions::lag_filtered).
  void lag() {
    const oplang::GetLag op{topic(), sub()};
    const auto made = subs_.find({op.topic, op.name});
    if (options_.lag_filtered) {
      add(op);
    } else if ((made == subs_.end() || made->second.filter.empty()) &&
               !push_filtered_.contains({op.topic, op.name})) {
      add(op);
    }
  }

  /// A nack, half the time with a delay where options allow (GenOptions::nack_delays).
  void nack(const std::string& t, const std::string& s, model::Offset offset,
            const std::string& member) {
    oplang::Nack n{t, s, offset, member, oplang::Which::kOffset};
    if (options_.nack_delays && chance(50)) {
      const model::Millis lo = options_.margin + 1;
      const model::Millis hi = ack_timeout(t, s) - options_.margin - 1;
      n.delay = chance(20) || hi < lo ? 0 : lo + static_cast<model::Millis>(pick(hi - lo + 1));
      if (!spaced_after(n)) n.delay.reset();
    }
    add(n);
  }

  /// Whether op leaves every retry wait spaced (Tracker::waits_spaced), tried on a copy.
  bool spaced_after(const oplang::Op& op) const {
    if (!options_.nack_delays) return true;  // retry waits come from delayed nacks alone
    Tracker trial = tracker_;
    trial.step(op);
    return trial.waits_spaced();
  }

  /// A seek by time (R28) to a time an engine's clock agrees on: a publish time with no
  /// other publish within the margin before it (every message published before it is then
  /// stamped before it), 0, now if nothing was published within the margin before it, or
  /// now and then a little after now (refused).
  void seek_to_time() {
    const std::string t = topic();
    const std::vector<model::Millis>& times = publish_times_[t];
    std::vector<model::Millis> at = {0};
    for (const model::Millis p : times) {
      const bool alone = std::none_of(times.begin(), times.end(), [&](model::Millis q) {
        return q < p && q > p - options_.margin;
      });
      if (alone) at.push_back(p);
    }
    if (times.empty() || times.back() <= tracker_.now() - options_.margin) {
      at.push_back(tracker_.now());
    }
    if (chance(10)) at.push_back(tracker_.now() + 1 + static_cast<model::Millis>(pick(5)));
    add(oplang::SeekToTime{t, sub(), at[pick(at.size())]});
  }

  enum class Answer { kAck, kNack, kTerm, kExtend };
  /// An ack, nack, term or extend (by the ack timeout) of a held message by its holder;
  /// sometimes by the other member or of an offset nobody holds.
  void settle(Answer answer) {
    std::string t = "t";
    std::string s = "p";
    model::Offset offset = pick(4);
    std::string m = member();
    const auto& held = tracker_.held();
    if (!given_.empty() && chance(15)) {
      // A late answer: from a member the message was given to, whatever became of it since
      // (offered to another member, returned, settled, dead).
      auto it = given_.begin();
      std::advance(it, static_cast<long>(pick(given_.size())));
      std::tie(t, s, offset, m) = *it;
    } else if (!held.empty() && chance(85)) {
      auto it = held.begin();
      std::advance(it, static_cast<long>(pick(held.size())));
      std::tie(t, s, offset) = it->first;
      m = chance(90) ? it->second.member : (it->second.member == "w1" ? "w2" : "w1");
    }
    switch (answer) {
      case Answer::kAck:
        add(oplang::Ack{t, s, offset, m, oplang::Which::kOffset});
        break;
      case Answer::kNack:
        nack(t, s, offset, m);
        break;
      case Answer::kExtend: {
        oplang::Extend e;
        e.topic = t;
        e.sub = s;
        e.offset = offset;
        e.member = m;
        e.extension = ack_timeout(t, s);
        if (spaced_after(e)) add(e);
        break;
      }
      case Answer::kTerm:
        add(oplang::Term{t, s, offset, m, oplang::Which::kOffset});
        // Half the time look at once: where the message went is the term's whole effect.
        if (chance(50)) add(oplang::GetDeadLetters{t, s});
        break;
    }
  }

  /// Every held message answered by its holder, in a random order, each an ack or a nack:
  /// messages come back in an order that is not the offsets'.
  void settle_all() {
    std::vector<std::pair<Tracker::Key, std::string>> held;
    for (const auto& [key, hold] : tracker_.held()) held.emplace_back(key, hold.member);
    std::shuffle(held.begin(), held.end(), rng_);
    for (const auto& [key, member] : held) {
      const auto& [t, s, offset] = key;
      if (chance(35)) {
        add(oplang::Ack{t, s, offset, member, oplang::Which::kOffset});
      } else {
        nack(t, s, offset, member);
      }
    }
  }

  /// Every held message extended by its holder, by its subscription's ack timeout.
  void extend_all() {
    for (const auto& [key, hold] : tracker_.held()) {
      const auto& [t, s, offset] = key;
      if (!subs_.contains({t, s})) continue;
      oplang::Extend e;
      e.topic = t;
      e.sub = s;
      e.offset = offset;
      e.member = hold.member;
      e.extension = ack_timeout(t, s);
      if (!spaced_after(e)) continue;
      extended_from_.try_emplace(key, hold.deadline);
      add(e);
    }
  }

  /// The end of a script with a bounded topic: past every deadline, then every dead-letter
  /// queue. What retention did to a held message (R3) shows only when it dies or comes
  /// back, and a burst near the end would otherwise leave that unseen.
  void look_last() {
    model::Millis last = tracker_.now();
    for (const auto& [key, hold] : tracker_.held()) last = std::max(last, hold.deadline);
    const model::Millis ms = last - tracker_.now() + options_.margin + 1;
    if (!tracker_.advance_ok(ms)) return;
    add(oplang::Advance{ms});
    add(oplang::Expire{});
    for (const auto& [key, made] : subs_) {
      add(oplang::GetDeadLetters{key.first, key.second});  // changes no subscription
    }
  }

  /// An advance that keeps the margin (past a deadline or well before it), then expire.
  void advance() {
    // Half the time to just before or just past a held message's deadline (the margin
    // away): where an answer, an extend or an expiry decides what happens next.
    // And just past the deadline an extend moved away from: only there does the extend
    // decide anything.
    std::vector<model::Millis> near;
    const auto held = tracker_.held();
    for (const auto& [key, hold] : held) {
      std::vector<model::Millis> at = {hold.deadline - options_.margin - 1,
                                       hold.deadline + options_.margin + 1};
      if (auto e = extended_from_.find(key); e != extended_from_.end()) {
        at.push_back(e->second + options_.margin + 1);
        at.push_back(e->second + options_.margin + 1);  // twice as likely
      }
      for (const model::Millis a : at) {
        if (a > tracker_.now()) near.push_back(a - tracker_.now());
      }
    }
    for (const auto& [key, ends] : tracker_.retry_waits()) {
      for (const model::Millis end : ends) {
        for (const model::Millis a : {end - options_.margin - 1, end + options_.margin + 1}) {
          if (a > tracker_.now()) near.push_back(a - tracker_.now());
        }
      }
    }
    std::erase_if(extended_from_, [&](const auto& e) { return !held.contains(e.first); });
    for (int tries = 0; tries < 20; ++tries) {
      const bool targeted = !near.empty() && chance(50);
      const model::Millis ms =
          targeted ? near[pick(near.size())] : 1 + static_cast<model::Millis>(pick(40));
      if (!tracker_.advance_ok(ms)) continue;
      add(oplang::Advance{ms});
      // An engine on its own clock expires during the advance; on the model's clock expire
      // is a call of its own, so calls also land between a deadline and its expiry.
      if (expire_with_advance_ || chance(50)) add(oplang::Expire{});
      // A slow worker keeping its messages: an extend after time has passed (most of all
      // just before a deadline) moves it past where the next advances may land; one right
      // after the poll moves it little.
      if (chance(targeted ? 60 : 20)) extend_all();
      return;
    }
  }

  std::mt19937_64 rng_;
  GenOptions options_;
  Tracker tracker_;
  const bool expire_with_advance_;
  oplang::Script script_;
  std::size_t published_ = 0;
  std::map<std::pair<std::string, std::string>, oplang::SubscribePull> subs_;
  // Push subscriptions with a header filter (a lag of one is asked only where the engine
  // filters, GenOptions::lag_filtered).
  std::set<std::pair<std::string, std::string>> push_filtered_;
  // Every (topic, subscription, offset, member) a poll handed out.
  std::set<std::tuple<std::string, std::string, model::Offset, std::string>> given_;
  std::map<std::string, std::size_t> bounds_;  // bounded topics that exist: their bound
  std::map<std::string, std::vector<model::Millis>> publish_times_;  // per topic, in order
  std::map<Tracker::Key, model::Millis> extended_from_;  // held, extended: its first deadline
};

}  // namespace

oplang::Script generate(std::uint64_t seed, const GenOptions& options, const Profile& profile) {
  return Maker(seed, options, profile).make();
}

}  // namespace conformance
