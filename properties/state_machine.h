// The broker-versus-model state machine: every command is one op of the operation
// language, run on the reference model and on the real broker (synchronous dispatcher);
// their outcomes (results, errors, every handler call) must be equal after every step.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include "harness/broker_runner.h"
#include "op_generators.h"
#include "oplang/model_runner.h"
#include "oplang/text.h"
#include "coverage.h"
#include "reached.h"

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
  oplang::ModelRunner model;
  harness::BrokerRunner broker;
  oplang::Script script;
  Reached reached;

  Pair() {
    for (const auto& op : prelude()) {
      model.step(op);
      broker.step(op);
      script.push_back(op);
    }
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
    ++Coverage::get().steps_by_kind[text.substr(0, text.find(' '))];
    ++Coverage::get().steps;
    const oplang::Outcome expected = pair.model.step(op);
    const oplang::Outcome actual = pair.broker.step(op);
    pair.reached.observe(op, expected);
    if (!(expected == actual)) {
      std::ostringstream why;
      why << "broker and model disagree at step " << pair.script.size() << ": "
          << oplang::print(op) << "\n-- model:\n"
          << oplang::print(expected) << "\n-- broker:\n"
          << oplang::print(actual)
          << "\n-- the whole script (prelude included); replay with: spec-trace FILE\n"
          << oplang::print(pair.script);
      RC_FAIL(why.str());
    }
  }

  void show(std::ostream& os) const override { os << oplang::print(op); }
};

/// Longest generated sequence (steps after the prelude).
inline constexpr std::size_t kMaxSteps = 100;

/// Runs one generated sequence of the given command kinds and tags what it reached.
template <class... Ts>
void check_broker_matches_model() {
  Pair pair;
  // Twice RapidCheck's usual length for the size, capped at kMaxSteps: the corners need a
  // few dozen steps of setup, and short sequences are cheap but mostly setup.
  auto make = [] { return initial_hints(); };
  auto commands = *rc::gen::scale(
      2.0, rc::state::gen::commands(make, rc::state::gen::execOneOfWithArgs<OpCommand<Ts>...>()));
  if (commands.size() > kMaxSteps) commands.resize(kMaxSteps);
  rc::state::runAll(commands, make, pair);
  pair.reached.tag();
  if (std::getenv("PROPS_DUMP")) std::fprintf(stderr, "----\n%s", oplang::print(pair.script).c_str());
  ++Coverage::get().sequences;
  for (const auto& s : pair.reached.states) ++Coverage::get().sequences_reaching[s];
}

}  // namespace props
