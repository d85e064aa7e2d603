// Model versus broker, step by step.
#include "harness/comparator.h"

#include "harness/broker_runner.h"
#include "harness/model_states.h"
#include "oplang/model_runner.h"
#include "oplang/text.h"

namespace harness {

std::optional<Difference> first_difference(const oplang::Script& script) {
  ModelStates model;  // R33: a fault makes a call undecided
  const std::unique_ptr<BrokerRunner> broker = runner_for(script);  // durable if it restarts
  for (std::size_t i = 0; i < script.size(); ++i) {
    oplang::Outcome b = broker->step(script[i]);
    ModelStates::Verdict v = model.step(script[i], b);
    if (!v.agrees) return Difference{i, script[i], std::move(v.expected), std::move(b), v.why};
  }
  return std::nullopt;
}

std::string describe(const Difference& d) {
  return "step " + std::to_string(d.step + 1) + ": " + oplang::print(d.op) +
         "\n  model:  " + oplang::print(d.model) + "\n  broker: " + oplang::print(d.broker) + "\n" +
         (d.why.empty() ? "" : "  why:    " + d.why + "\n");
}

}  // namespace harness
