// The conformance kit's own rules: generated scripts keep their margin, a faithful engine
// holds, a lying one is a violation of the right rule shrunk to a few steps, and a switch
// is credited exactly when a script needs it.
#include "conformance/runner.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <variant>

#include "conformance/generator.h"
#include "conformance/inproc_target.h"
#include "conformance/profile.h"
#include "lying_target.h"
#include "oplang/model_runner.h"
#include "oplang/text.h"

namespace conformance {
namespace {

TEST(ConformanceKit, GeneratedScriptsKeepTheMarginFromEveryDeadline) {
  GenOptions options;
  GenOptions delayed;          // retry waits too: advances keep away from their ends, and the ends
  delayed.nack_delays = true;  // from each other and from held deadlines
  delayed.max_in_flight = {1, 2, 3};
  delayed.seek_to_time = true;  // and seeks by time clear of every publish time
  std::size_t refused = 0;
  std::size_t waited = 0;
  for (const GenOptions& o : {options, delayed}) {
    for (std::uint64_t seed = 1; seed <= 200; ++seed) {
      const oplang::Script script = generate(seed, o, jetstream_profile());
      ASSERT_TRUE(keeps_margin(script, jetstream_profile(), o.margin)) << oplang::print(script);
      refused += keeps_margin(script, jetstream_profile(), 1000) ? 0 : 1;
      Tracker tracker(jetstream_profile(), o.margin);
      bool waits = false;
      for (const oplang::Op& op : script) {
        tracker.step(op);
        waits = waits || !tracker.retry_waits().empty();
      }
      waited += waits ? 1 : 0;
    }
  }
  // The check can fail: a margin wider than every timeout refuses the advances of every
  // script that advances while it holds a message.
  EXPECT_GT(refused, 80u);
  EXPECT_GT(waited, 25u);  // scripts with a delayed retry somewhere (41 of 200)
}

// A seek by time keeps the margin only clear of every kept message's publish time: one
// published less than the margin before the time would be stamped on either side of it on
// an engine's clock. A shrunk script is held to the same (keeps_margin).
TEST(ConformanceKit, ASeekByTimeKeepsClearOfPublishTimes) {
  oplang::SubscribePull sub;
  sub.topic = "t";
  sub.name = "p";
  sub.ack_timeout = 15;
  const oplang::Script base = {oplang::CreateTopic{"t"},          sub,
                               oplang::Publish{"t", "a", {}, ""}, oplang::Advance{3},
                               oplang::Publish{"t", "b", {}, ""}, oplang::Advance{10}};
  oplang::Script near = base;
  near.push_back(oplang::SeekToTime{"t", "p", 5});  // b at 3: within 5 before 5
  oplang::Script clear = base;
  clear.push_back(oplang::SeekToTime{"t", "p", 8});  // b at 3: exactly the margin before
  EXPECT_FALSE(keeps_margin(near, jetstream_profile(), 5));
  EXPECT_TRUE(keeps_margin(clear, jetstream_profile(), 5));
  EXPECT_TRUE(keeps_margin(near, jetstream_profile(), 0));  // on the model's own clock
}

// An engine whose header filter is the adapter's counts what the adapter has not passed over
// yet: lag is asked only of subscriptions without a filter there, of every one elsewhere.
TEST(ConformanceKit, LagIsAskedOfFilteredSubscriptionsOnlyWhereTheEngineFilters) {
  GenOptions options;
  options.lag = true;
  GenOptions adapters = options;
  adapters.lag_filtered = false;
  std::size_t of_filtered = 0;
  std::size_t of_plain = 0;
  for (const GenOptions& o : {options, adapters}) {
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
      std::set<std::pair<std::string, std::string>> filtered;  // as the model made them
      oplang::ModelRunner model(model_switches(jetstream_profile()));
      for (const oplang::Op& op : generate(seed, o, jetstream_profile())) {
        if (model.step(op).error) continue;
        if (const auto* s = std::get_if<oplang::SubscribePull>(&op); s && !s->filter.empty()) {
          filtered.insert({s->topic, s->name});
        } else if (const auto* u = std::get_if<oplang::Unsubscribe>(&op)) {
          filtered.erase({u->topic, u->name});
        } else if (const auto* d = std::get_if<oplang::DeleteTopic>(&op)) {
          std::erase_if(filtered, [&](const auto& e) { return e.first == d->name; });
        } else if (const auto* l = std::get_if<oplang::GetLag>(&op)) {
          const bool of_a_filtered = filtered.contains({l->topic, l->name});
          if (!o.lag_filtered) {
            ASSERT_FALSE(of_a_filtered) << "seed " << seed << ": " << oplang::print(op);
            ++of_plain;
          } else {
            of_filtered += of_a_filtered ? 1 : 0;
          }
        }
      }
    }
  }
  EXPECT_GT(of_filtered, 10u);
  EXPECT_GT(of_plain, 100u);
}

TEST(ConformanceKit, ThisBrokerHoldsEveryRuleStrictly) {
  GenOptions options;
  options.margin = 0;
  options.retention_messages = {2, 3, 5};  // InProcTarget serves retention by messages
  options.max_in_flight = {1, 2, 3};       // and max_in_flight (R22)
  options.seek = true;                     // and seek (R12)
  options.nack_delays = true;              // and nacks with a delay (R24)
  options.seek_to_time = true;             // and seeks by time (R28)
  options.lag = true;                      // and lag (R27)
  options.push = true;                     // and push subscriptions with drains (R8)
  std::size_t trimmed = 0;
  std::size_t capped = 0;
  std::size_t sought = 0;
  std::size_t delayed = 0;
  std::size_t by_time = 0;
  std::size_t lagged = 0;
  std::size_t drained = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    InProcTarget target;
    const oplang::Script script = generate(seed, options, strict_profile());
    const Verdict v = check(target, script, strict_profile());
    ASSERT_FALSE(v.violation) << "seed " << seed << "\n" << trace(target, script, strict_profile());
    EXPECT_TRUE(v.needed.empty());
    for (const auto& [rule, n] : v.checked) {
      trimmed += rule == "R3" ? n : 0;
      capped += rule == "R22" ? n : 0;
      sought += rule == "R12" ? n : 0;
      delayed += rule == "R24" ? n : 0;
      by_time += rule == "R28" ? n : 0;
      lagged += rule == "R27" ? n : 0;
      drained += rule == "R8" ? n : 0;
    }
  }
  EXPECT_GT(drained, 100u);  // push subscribes and drains (R8)
  EXPECT_GT(lagged, 100u);   // lags (R27)
  EXPECT_GT(trimmed, 100u);  // publishes that trimmed a bounded topic (R3)
  EXPECT_GT(capped, 100u);   // polls of a subscription with a max_in_flight (R22)
  EXPECT_GT(sought, 50u);    // seeks (R12)
  EXPECT_GT(delayed, 50u);   // nacks with a delay (R24)
  EXPECT_GT(by_time, 20u);   // seeks by time (R28)
}

// A poll of a subscription with a max_in_flight that hands out more than the bound allows
// violates R22: an engine that ignores the cap (here: this broker told no cap at all).
TEST(ConformanceKit, AnEngineThatIgnoresMaxInFlightViolatesR22) {
  class Uncapped final : public Target {
   public:
    [[nodiscard]] std::string name() const override { return "uncapped"; }
    [[nodiscard]] bool serves(const oplang::Op& op) const override { return inner_.serves(op); }
    oplang::Outcome step(const oplang::Op& op) override {
      if (const auto* s = std::get_if<oplang::SubscribePull>(&op)) {
        oplang::SubscribePull uncapped = *s;
        uncapped.max_in_flight = 0;
        return inner_.step(uncapped);
      }
      return inner_.step(op);
    }

   private:
    InProcTarget inner_;
  };
  GenOptions options;
  options.margin = 0;
  options.max_in_flight = {1};
  bool caught = false;
  for (std::uint64_t seed = 1; seed <= 300 && !caught; ++seed) {
    Uncapped target;
    const Verdict v = check(target, generate(seed, options, strict_profile()), strict_profile());
    caught = v.violation && v.violation->rule == "R22";
  }
  EXPECT_TRUE(caught) << "no script showed an uncapped engine handing out past max_in_flight";
}

// A poll that offers a message retention dropped violates R3, not R11 (which messages were
// free to offer): the rule names what the engine got wrong.
TEST(ConformanceKit, APollOfADroppedMessageViolatesR3) {
  oplang::Outcome model;
  model.value = std::vector<model::Received>{{1, "b", 1, 25}};
  oplang::Outcome engine;
  engine.value = std::vector<model::Received>{{0, "a", 1, 25}};
  const oplang::Poll poll{"t", "p", "w1", 1};
  EXPECT_EQ(rule_for(poll, model, engine, 1), "R3");
  EXPECT_EQ(rule_for(poll, model, engine, 0), "R11");
  EXPECT_EQ(rule_for(poll, model, engine), "R11");
}

// Of the scripts from seeds 1..seeds, how many the model answers differently somewhere with
// the switch on (as in profile) and off.
std::size_t scripts_the_switch_changes(const GenOptions& options, const Profile& profile, Switch s,
                                       std::uint64_t seeds) {
  std::size_t differ = 0;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const oplang::Script script = generate(seed, options, profile);
    oplang::ModelRunner with(model_switches(profile));
    oplang::ModelRunner without(model_switches(profile.without(s)));
    for (const oplang::Op& op : script) {
      if (!(with.step(op) == without.step(op))) {
        ++differ;
        break;
      }
    }
  }
  return differ;
}

// Bounded topics (GenOptions::retention_messages) reach what Redis's MAXLEN does to a held
// message: scripts where the model with trimmed_held_keeps_only_its_offset answers
// otherwise than strictly (a dead letter without its body, an extend that forgets).
TEST(ConformanceKit, BoundedTopicsReachHeldMessagesThatRetentionTrimmed) {
  GenOptions options;
  options.retention_messages = {2, 3, 5};
  std::size_t bounded = 0;
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    bounded += retention_by_messages(generate(seed, options, redis_profile())[0]) ? 1 : 0;
  }
  EXPECT_GT(bounded, 200u);
  const Switch trimmed = Switch::kTrimmedHeldKeepsOnlyItsOffset;
  EXPECT_GT(scripts_the_switch_changes(options, redis_profile(), trimmed, 500), 10u);
  // Unbounded, the switch changes nothing.
  EXPECT_EQ(scripts_the_switch_changes(GenOptions{}, redis_profile(), trimmed, 100), 0u);
}

// Seeks (GenOptions::seek) reach what XGROUP SETID does: scripts where the model with
// seek_moves_only_the_cursor answers otherwise than strictly (a holder's ack after a seek
// past it, a message handed out anew). Without seeks the switch changes nothing.
TEST(ConformanceKit, SeeksReachWhatSeekMovesOnlyTheCursorChanges) {
  GenOptions options;
  options.seek = true;
  const Switch seek = Switch::kSeekMovesOnlyTheCursor;
  EXPECT_GT(scripts_the_switch_changes(options, redis_profile(), seek, 500), 20u);
  EXPECT_EQ(scripts_the_switch_changes(GenOptions{}, redis_profile(), seek, 100), 0u);
}

TEST(ConformanceKit, AWrongAnswerIsAViolationOfItsRuleShrunkToAFewSteps) {
  const std::optional<LyingViolation> found = find_lying_violation();
  ASSERT_TRUE(found) << "no script acked offset 2 in 500 seeds";
  EXPECT_EQ(found->verdict.violation->rule, "R11");
  EXPECT_LE(found->small.size(), 8u) << oplang::print(found->small);
  LyingTarget again;
  const Verdict w = check(again, found->small, strict_profile());
  ASSERT_TRUE(w.violation) << oplang::print(found->small);
  EXPECT_EQ(w.violation->rule, "R11");
}

// A disagreement seen once and never again (an engine that lied only on its first run: a
// loaded machine, a timing fluke) is not a violation: reproduce() re-runs the shrunk script
// and the original on fresh targets and says "not reproduced". The same lie on every run is
// reproduced, and the run it shows is one that failed.
TEST(ConformanceKit, ADisagreementThatDoesNotFailAgainIsNotReportedAsAViolation) {
  const std::optional<LyingViolation> found = find_lying_violation();
  ASSERT_TRUE(found) << "no script acked offset 2 in 500 seeds";
  int made = 0;
  const TargetFactory once = [&made]() -> std::unique_ptr<Target> {
    if (made++ == 0) return std::make_unique<LyingTarget>();
    return std::make_unique<InProcTarget>();
  };
  std::unique_ptr<Target> first = once();
  ASSERT_TRUE(check(*first, found->script, strict_profile()).violation);
  const Finding flaky = reproduce(once, found->script, strict_profile(), 0, 1, 50, 3);
  EXPECT_FALSE(flaky.reproduced) << oplang::print(flaky.script);
  EXPECT_EQ(flaky.script, found->script);

  const TargetFactory always = [] { return std::make_unique<LyingTarget>(); };
  const Finding real = reproduce(always, found->script, strict_profile(), 0, 1, 500, 3);
  ASSERT_TRUE(real.reproduced);
  ASSERT_TRUE(real.shown.verdict.violation);
  EXPECT_EQ(real.shown.verdict.violation->rule, "R11");
  EXPECT_LE(real.script.size(), found->script.size());
  EXPECT_NE(real.shown.trace.find(">> "), std::string::npos) << real.shown.trace;
}

// Every model switch of the JetStream profile changes an answer in some generated script:
// an engine with exactly that difference (the model under the whole profile) is judged
// right only because of the switch, so the generator reaches each difference the profile
// documents (the late answers from members a message was given to, bounded topics, terms
// after acks). The observation switches are shown on the real engine by the raw probes.
// The scripts made for JetStream reach every model switch of its profile: with bounded
// topics only, and with everything JetStreamTarget::serves (max_in_flight, seeks, delayed
// nacks: the switches on retry waits need the delays; late answers by a previous holder are
// rarer among so many other steps).
TEST(ConformanceKit, GeneratedScriptsReachEveryJetStreamModelSwitch) {
  const Profile p = jetstream_profile();
  GenOptions bounded;
  bounded.margin = 5;
  bounded.retention_messages = {2, 3, 5};
  GenOptions served = bounded;
  served.max_in_flight = {1, 2, 3};
  served.seek = true;
  served.seek_to_time = true;
  served.nack_delays = true;
  std::map<Switch, int> needed;
  for (const GenOptions& options : {bounded, served}) {
    for (std::uint64_t seed = 1; seed <= 1500; ++seed) {
      const oplang::Script script = generate(seed, options, p);
      ModelTarget engine(model_switches(p));
      const Verdict v = check(engine, script, p);
      ASSERT_FALSE(v.violation) << oplang::print(script);
      for (const Switch s : v.needed) ++needed[s];
    }
  }
  for (const Switch s : {Switch::kLateAckAccepted, Switch::kRedeliveryInReturnOrder,
                         Switch::kDeadLetterWhenOfferedAgain, Switch::kAckAfterNackSettles,
                         Switch::kLateAckByPreviousHolder, Switch::kAcksAlwaysConfirmed,
                         Switch::kTermAlwaysAnnounced, Switch::kRetentionTerminatesHeld,
                         Switch::kRetryWaitHoldsAPlace, Switch::kAnswersResetARetryWait}) {
    EXPECT_GT(needed[s], 0) << name_of(s) << " never changed an answer in 3000 scripts";
  }
}

TEST(ConformanceKit, ASwitchIsCreditedWhenAScriptNeedsItAndItsAbsenceIsAViolation) {
  // An engine that redelivers in return order: judged strictly it violates R5 somewhere;
  // under a profile with the switch it holds and the switch is credited.
  GenOptions options;
  options.margin = 0;
  model::Profile engine;
  engine.redelivery_in_return_order = true;
  const Profile with{"with", {Switch::kRedeliveryInReturnOrder}};
  bool credited = false;
  bool violated_strictly = false;
  for (std::uint64_t seed = 1; seed <= 2000 && !(credited && violated_strictly); ++seed) {
    const oplang::Script script = generate(seed, options, with);
    ModelTarget a(engine);
    const Verdict under_profile = check(a, script, with);
    ASSERT_FALSE(under_profile.violation) << "seed " << seed;
    for (Switch s : under_profile.needed)
      credited = credited || s == Switch::kRedeliveryInReturnOrder;
    ModelTarget b(engine);
    const Verdict strict = check(b, script, strict_profile());
    if (strict.violation) {
      violated_strictly = true;
      // Another order is R5; a poll with room for fewer than came back then shows other
      // messages, which reads as R11.
      const std::string rule = strict.violation->rule;
      EXPECT_TRUE(rule == "R5" || rule == "R11") << rule << "\n"
                                                 << trace(b, script, strict_profile());
    }
  }
  EXPECT_TRUE(credited);
  EXPECT_TRUE(violated_strictly);
}

// The redis profile's schedule switch: every advance is followed by its expire
// (Redis gives a message back at its deadline, by the next poll's XAUTOCLAIM), while the
// model answers as strictly as ever and expire's report is still compared.
TEST(ConformanceKit, NoServerDeadlinePutsAnExpireAfterEveryAdvanceAndComparesIt) {
  const Profile redis = profile_named("redis");
  ASSERT_TRUE(redis.has(Switch::kNoServerDeadline));
  EXPECT_TRUE(expires_with_advance(redis));
  EXPECT_FALSE(expires_with_advance(strict_profile()));
  const model::Profile m = model_switches(redis);  // the model answers strictly
  EXPECT_FALSE(m.late_ack_accepted || m.redelivery_in_return_order ||
               m.dead_letter_when_offered_again);
  GenOptions options;
  std::size_t advances = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const oplang::Script script = generate(seed, options, redis);
    for (std::size_t i = 0; i < script.size(); ++i) {
      if (!std::holds_alternative<oplang::Advance>(script[i])) continue;
      ++advances;
      ASSERT_LT(i + 1, script.size());
      EXPECT_TRUE(std::holds_alternative<oplang::Expire>(script[i + 1])) << oplang::print(script);
    }
  }
  EXPECT_GT(advances, 100u);
  oplang::Outcome model;
  model.value = std::vector<model::Expired>{{"t", "p", 0, false}};
  oplang::Outcome none;
  none.value = std::vector<model::Expired>{};
  EXPECT_FALSE(agree(oplang::Expire{}, model, none, redis));
  EXPECT_TRUE(agree(oplang::Expire{}, model, none, jetstream_profile()));
}

}  // namespace
}  // namespace conformance
