// Runs ops of the operation language against a real broker::Broker.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "oplang/ops.h"
#include "oplang/outcome.h"
#include "oplang/script.h"

namespace harness {

/// The model's name for a broker error code (same spelling, see model/errors.h).
model::ErrorCode to_model(broker::ErrorCode code);

/// Executes ops one at a time on a fresh broker with the synchronous dispatcher and a
/// ManualClock at 0 that `advance` moves (poll_wait polls at it; its timeout is real time).
/// Push handlers are real lambdas that run their Script (model/script.h): they really throw
/// and really call back into the broker; an idempotent subscribe wraps its lambda in
/// broker::idempotent(), and an offer the wrapper answers without calling the lambda is
/// recorded as a call with the effect "idempotent -> repeat".
/// Not thread-safe: one step at a time (handlers run inside drain on the caller's thread).
class BrokerRunner {
 public:
  BrokerRunner();
  ~BrokerRunner();
  BrokerRunner(const BrokerRunner&) = delete;
  BrokerRunner& operator=(const BrokerRunner&) = delete;

  /// Runs one op; the Outcome carries its result or error and the handler calls it made.
  /// Exceptions other than broker::Error escape (they are findings, not outcomes).
  oplang::Outcome step(const oplang::Op& op);
  /// The broker under test.
  [[nodiscard]] broker::Broker& broker() { return *broker_; }

 private:
  // One subscribed handler's script and position.
  struct Handler {
    std::string topic;
    std::string name;
    model::Script script;
    std::size_t next_step = 0;
  };
  struct Apply;

  bool handle(Handler& handler, const broker::Delivery& delivery);
  void record_repeat(const Handler& handler, const broker::Delivery& delivery);
  std::string run_effect(const model::Step& step, const Handler& handler);

  std::shared_ptr<broker::ManualClock> clock_;
  std::vector<model::HandlerCall> calls_;
  std::unique_ptr<broker::Broker> broker_;  // last: destroyed first, with its handlers
};

/// Runs a whole script on a fresh broker.
std::vector<oplang::Outcome> run_broker(const oplang::Script& script);

}  // namespace harness
