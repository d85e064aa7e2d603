// Model versus broker, step by step.
#include "harness/comparator.h"

#include "harness/broker_runner.h"
#include "oplang/model_runner.h"
#include "oplang/text.h"

namespace harness {

std::optional<Difference> first_difference(const oplang::Script& script) {
  oplang::ModelRunner model;
  const std::unique_ptr<BrokerRunner> broker = runner_for(script);  // durable if it restarts
  for (std::size_t i = 0; i < script.size(); ++i) {
    oplang::Outcome m = model.step(script[i]);
    oplang::Outcome b = broker->step(script[i]);
    if (!(m == b)) return Difference{i, script[i], std::move(m), std::move(b)};
  }
  return std::nullopt;
}

std::string describe(const Difference& d) {
  return "step " + std::to_string(d.step + 1) + ": " + oplang::print(d.op) +
         "\n  model:  " + oplang::print(d.model) + "\n  broker: " + oplang::print(d.broker) + "\n";
}

}  // namespace harness
