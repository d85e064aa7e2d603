// The in-process broker as a conformance target: the kit's own reference engine.
#pragma once

#include <memory>
#include <string>

#include "conformance/target.h"
#include "harness/broker_runner.h"

namespace conformance {

/// broker::Broker in memory, driven by harness::BrokerRunner (manual clock at 0).
class InProcTarget final : public Target {
 public:
  InProcTarget() = default;
  [[nodiscard]] std::string name() const override { return "inproc"; }
  /// The common subset, and topics that keep their newest N messages (R3).
  [[nodiscard]] bool serves(const oplang::Op& op) const override;
  /// Throws std::invalid_argument outside serves().
  oplang::Outcome step(const oplang::Op& op) override;
  /// Calls the same broker (thread-safe) for poll, ack and nack.
  std::unique_ptr<Target> worker() override;
  /// The broker's own stats(): the history checkers compare its counters with the calls.
  std::optional<model::Stats> stats(const std::string& topic,
                                    const std::string& subscription) override;

 private:
  harness::BrokerRunner runner_;
};

}  // namespace conformance
