// The broker-versus-model state machine: every command is one op of the operation
// language, run on the reference model and on the real broker (synchronous dispatcher);
// their outcomes (results, errors, every handler call) must be equal after every step.
#pragma once

#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

#include "coverage.h"
#include "harness/broker_runner.h"
#include "harness/model_states.h"
#include "op_generators.h"
#include "oplang/model_runner.h"
#include "oplang/text.h"
#include "reached.h"
#include "uniform.h"

namespace props {

/// Every sequence starts from two topics, one with a small retention bound, so generated
/// ops act on something from the first step. The prelude is part of every printed script.
inline oplang::Script prelude() {
  return {oplang::CreateTopic{"t0", 0, 0}, oplang::CreateTopic{"t1", 3, 0}};
}

/// The hints after the prelude.
inline Hints initial_hints() {
  Hints h;
  for (const auto& op : prelude()) h.observe(op);
  return h;
}

/// The system under test: the model and the broker, side by side, and the script so far.
struct Pair {
  /// The model: one state, or after a call a disk fault made undecided (R33) the states
  /// the broker may be in until later outcomes tell them apart.
  harness::ModelStates model;
  std::unique_ptr<harness::BrokerRunner> broker;
  oplang::Script script;
  Reached reached;
  bool durable = false;

  /// durable: the broker keeps its storage on a simulated disk (harness::DurableSetup), so
  /// restart, crash and fault ops can run.
  explicit Pair(bool durable_broker = false)
      : broker(durable_broker ? std::make_unique<harness::BrokerRunner>(harness::DurableSetup{})
                              : std::make_unique<harness::BrokerRunner>()),
        durable(durable_broker) {
    for (const auto& op : prelude())
      reached.pairs.observe(op, model.step(op, broker->step(op)).expected);
    script = prelude();
  }
};

/// One op of kind T. Arguments are drawn at construction (from the hints) and fixed.
template <class T>
struct OpCommand : rc::state::Command<Hints, Pair> {
  oplang::Op op;

  explicit OpCommand(const Hints& hints) : op(gen_op<T>(hints)) {}

  // Every op is allowed in every state: misuse must yield the same typed error on both.
  void checkPreconditions(const Hints&) const override {}

  void apply(Hints& hints) const override { hints.observe(op); }

  void run(const Hints&, Pair& pair) const override {
    pair.script.push_back(op);
    const std::string text = oplang::print(op);
    std::string kind = text.substr(0, text.find(' '));
    // One op kind, two forms each.
    if (kind == "create_topic_if_absent") kind = "create_topic";
    if (kind == "waiting_for_handler") kind = "topics";
    if (kind == "resubscribe") kind = "subscribe";
    ++Coverage::get().steps_by_kind[kind];
    ++Coverage::get().steps;
    if (const auto* p = std::get_if<oplang::Publish>(&op); p != nullptr && !p->key.empty()) {
      ++Coverage::get().keyed_publishes;
      const bool high = std::any_of(p->key.begin(), p->key.end(),
                                    [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
      if (high) ++Coverage::get().keyed_high;
    }
    const bool was_failed = pair.model.storage_failed();
    const oplang::Outcome actual = pair.broker->step(op);
    const harness::ModelStates::Verdict v = pair.model.step(op, actual);
    pair.reached.observe(op, v.expected);
    if (v.undecided) pair.reached.states.insert("disk fault failed a call");
    if (const auto* cut = std::get_if<oplang::CutResult>(&actual.value);
        cut != nullptr && v.agrees) {
      if (!cut->topic.empty()) pair.reached.states.insert("damage at rest cut a log");
      if (cut->corrupt) pair.reached.states.insert("damage at rest was CorruptLog, then repaired");
    }
    if (was_failed && (std::holds_alternative<oplang::Restart>(op) ||
                       std::holds_alternative<oplang::Crash>(op))) {
      pair.reached.states.insert("reopened after a storage failure");
    }
    if (v.agrees) return;
    std::ostringstream why;
    why << "broker and model disagree at step " << pair.script.size() << ": " << oplang::print(op)
        << "\n-- model"
        << (pair.model.size() > 1 ? " (first of " + std::to_string(pair.model.size()) +
                                        " states an undecided call may have left, R33)"
                                  : std::string())
        << ":\n"
        << oplang::print(v.expected) << "\n-- broker:\n"
        << oplang::print(actual) << (v.why.empty() ? "" : "\n-- why: " + v.why)
        << "\n-- the whole script (prelude included); replay with: spec-trace "
        << (pair.durable ? "--durable " : "") << "FILE\n"
        << oplang::print(pair.script);
    RC_FAIL(why.str());
  }

  void show(std::ostream& os) const override { os << oplang::print(op); }
};

/// Longest generated sequence (steps after the prelude).
inline constexpr std::size_t kMaxSteps = 100;

/// How a sequence picks its command kinds. kUniform: every kind of the mix, each as often as
/// the mix lists it. kSwarm (swarm testing): the sequence first turns off a random subset of
/// the mix's kinds (swarm_of), then draws only from the rest, so long runs of one kind
/// happen; it keeps at least one kind of each need the mix has (a publish, a subscribe, a
/// way to consume: drain, poll or poll_wait), so it can make progress. kHalf: each sequence
/// tosses a coin between the two (what the properties run).
enum class Swarm { kUniform, kSwarm, kHalf };

using CommandPtr = std::shared_ptr<const rc::state::Command<Hints, Pair>>;
using MakeCommand = CommandPtr (*)(const Hints&);

template <class T>
CommandPtr make_command(const Hints& hints) {
  return std::make_shared<const OpCommand<T>>(hints);
}

/// What a swarm must keep one kind of.
enum class Need { kNone, kPublish, kSubscribe, kConsume };

template <class T>
constexpr Need need_of() {
  if constexpr (std::is_same_v<T, oplang::Publish>) return Need::kPublish;
  if constexpr (std::is_same_v<T, oplang::Subscribe> || std::is_same_v<T, oplang::SubscribePull>)
    return Need::kSubscribe;
  if constexpr (std::is_same_v<T, oplang::Drain> || std::is_same_v<T, oplang::Poll> ||
                std::is_same_v<T, oplang::PollWait>)
    return Need::kConsume;
  return Need::kNone;
}

/// One entry of a mix: its kind, how to make its command, and what it is needed for.
struct MixEntry {
  std::type_index kind;
  MakeCommand make;
  Need need;
};

/// A uniform choice in [0, n), whatever the size (uniform.h), not shrunk: a shrink keeps
/// the sequence's swarm.
inline std::size_t fair_choice(std::size_t n) {
  return *rc::gen::noShrink(uniform_in<std::size_t>(0, n));
}

/// The entries a swarm sequence draws from: a random subset of the distinct kinds of `mix`,
/// of a size drawn uniformly from 1 to all of them (so small subsets, long runs of one kind,
/// are as likely as large ones); then, for each need the mix has and the subset lacks, one
/// kind of it (chosen at random) is added.
inline std::vector<MakeCommand> swarm_of(const std::vector<MixEntry>& mix) {
  std::vector<std::type_index> kinds;
  for (const MixEntry& e : mix) {
    if (std::find(kinds.begin(), kinds.end(), e.kind) == kinds.end()) kinds.push_back(e.kind);
  }
  for (std::size_t i = kinds.size(); i > 1; --i) std::swap(kinds[i - 1], kinds[fair_choice(i)]);
  std::vector<std::type_index> on(
      kinds.begin(), kinds.begin() + static_cast<std::ptrdiff_t>(1 + fair_choice(kinds.size())));
  for (Need need : {Need::kPublish, Need::kSubscribe, Need::kConsume}) {
    std::vector<std::type_index> candidates;
    bool kept = false;
    for (const MixEntry& e : mix) {
      if (e.need != need) continue;
      kept = kept || std::find(on.begin(), on.end(), e.kind) != on.end();
      if (std::find(candidates.begin(), candidates.end(), e.kind) == candidates.end())
        candidates.push_back(e.kind);
    }
    if (!kept && !candidates.empty()) on.push_back(candidates[fair_choice(candidates.size())]);
  }
  std::vector<MakeCommand> out;
  for (const MixEntry& e : mix) {
    if (std::find(on.begin(), on.end(), e.kind) != on.end()) out.push_back(e.make);
  }
  return out;
}

/// Draws one command: one of `makes`, uniformly (a kind listed twice comes twice as often),
/// its arguments drawn from the hints (as execOneOfWithArgs does).
class DrawCommand {
 public:
  DrawCommand(std::shared_ptr<const std::vector<MakeCommand>> makes, Hints hints)
      : makes_(std::move(makes)), hints_(std::move(hints)) {}

  rc::Shrinkable<CommandPtr> operator()(const rc::Random& random, int size) const {
    rc::Random r = random;
    const MakeCommand make = (*makes_)[r.split().next() % makes_->size()];
    const Hints hints = hints_;
    return rc::gen::exec([make, hints] { return make(hints); })(r, size);
  }

 private:
  std::shared_ptr<const std::vector<MakeCommand>> makes_;
  Hints hints_;
};

/// The option swarm: half the time, a random subset of the options (Hints::always) that
/// every new topic or subscription of the sequence takes; else none.
inline std::set<std::string> draw_option_swarm() {
  static const std::vector<std::string> kOptions = {"retention", "filter",    "max_in_flight",
                                                    "ordered",   "backoff",   "durable_attempts",
                                                    "group",     "idempotent"};
  std::set<std::string> out;
  if (fair_choice(2) == 0) return out;
  for (const std::string& o : kOptions)
    if (fair_choice(2) == 0) out.insert(o);
  return out;
}

/// Runs one generated sequence of the given command kinds and tags what it reached. With
/// `option_swarm`, half the sequences also fix a subset of the options on (see above).
template <class... Ts>
void check_broker_matches_model(Swarm swarm = Swarm::kHalf, bool durable = false,
                                bool option_swarm = false) {
  const std::vector<MixEntry> mix = {
      MixEntry{std::type_index(typeid(Ts)), &make_command<Ts>, need_of<Ts>()}...};
  const bool swarmed = swarm == Swarm::kSwarm || (swarm == Swarm::kHalf && fair_choice(2) == 0);
  std::vector<MakeCommand> makes;
  if (swarmed) {
    makes = swarm_of(mix);
  } else {
    for (const MixEntry& e : mix) makes.push_back(e.make);
  }
  auto kinds = std::make_shared<const std::vector<MakeCommand>>(std::move(makes));
  Pair pair(durable);
  // Twice RapidCheck's usual length for the size, capped at kMaxSteps: the corners need a
  // few dozen steps of setup, and short sequences are cheap but mostly setup.
  const std::set<std::string> always = option_swarm ? draw_option_swarm() : std::set<std::string>{};
  auto make = [always] {
    Hints h = initial_hints();
    h.always = always;
    return h;
  };
  auto draw = [kinds](const Hints& hints) {
    return rc::Gen<CommandPtr>(DrawCommand(kinds, hints));
  };
  auto commands = *rc::gen::scale(2.0, rc::state::gen::commands(make, draw));
  if (commands.size() > kMaxSteps) commands.resize(kMaxSteps);
  rc::state::runAll(commands, make, pair);
  if (swarmed) RC_TAG("swarm");
  pair.reached.tag();
  if (std::getenv("PROPS_DUMP"))
    std::fprintf(stderr, "----\n%s", oplang::print(pair.script).c_str());
  ++Coverage::get().sequences;
  if (swarmed) ++Coverage::get().swarm_sequences;
  for (const auto& s : pair.reached.states) ++Coverage::get().sequences_reaching[s];
  for (const auto& p : pair.reached.pairs.reached()) ++Coverage::get().sequences_pairing[p];
}

}  // namespace props
