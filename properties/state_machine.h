// The broker-versus-model state machine: every command is one op of the operation
// language, run on the reference model and on the real broker (synchronous dispatcher);
// their outcomes (results, errors, every handler call) must be equal after every step.
#pragma once

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

/// The system under test: the model and the broker, side by side, and the script so far.
struct Pair {
  oplang::ModelRunner model;
  harness::BrokerRunner broker;
  oplang::Script script;
  Reached reached;
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
          << oplang::print(actual) << "\n-- replay with: spec-trace FILE, where FILE holds:\n"
          << oplang::print(pair.script);
      RC_FAIL(why.str());
    }
  }

  void show(std::ostream& os) const override { os << oplang::print(op); }
};

/// Runs one generated sequence of the given command kinds and tags what it reached.
template <class... Ts>
void check_broker_matches_model() {
  Pair pair;
  rc::state::check(Hints{}, pair, rc::state::gen::execOneOfWithArgs<OpCommand<Ts>...>());
  pair.reached.tag();
  ++Coverage::get().sequences;
  for (const auto& s : pair.reached.states) ++Coverage::get().sequences_reaching[s];
}

}  // namespace props
