// Push subscriptions in the target tests (R8): a subscribe whose handler answers by script,
// and what a drain offered, as text to compare.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "conformance/target.h"
#include "model/errors.h"
#include "model/handler_script.h"
#include "oplang/ops.h"
#include "oplang/outcome.h"

namespace conformance {

/// subscribe(topic, name) from the beginning, the handler answering its first offers with
/// `verdicts` (then confirming), no filter.
inline oplang::Subscribe push(const std::string& topic, const std::string& name,
                              const std::vector<model::Verdict>& verdicts, int max_deliveries = 0) {
  oplang::Subscribe op;
  op.topic = topic;
  op.name = name;
  op.max_deliveries = max_deliveries;
  op.start.kind = model::Start::Kind::kBeginning;
  for (const model::Verdict v : verdicts) op.script.push_back(model::Step{.verdict = v});
  return op;
}

/// A drain's offers in order, each "topic/subscription payload#attempt".
inline std::vector<std::string> offers(const oplang::Outcome& drained) {
  std::vector<std::string> out;
  for (const model::HandlerCall& c : drained.calls) {
    out.push_back(c.topic + "/" + c.subscription + " " + c.payload + "#" +
                  std::to_string(c.attempt));
  }
  return out;
}

/// R11, R14 between the kinds, on a fresh target that serves push (push_without_effects): a
/// push name is the wrong kind for poll, ack and subscribe_pull, a pull name is taken for a
/// push subscribe, bad input is refused as the model refuses it, and a bounded topic takes
/// no push subscription (outside what the target serves).
inline void expect_push_and_pull_names_kept_apart(Target& target, model::Millis ack_timeout) {
  using model::ErrorCode;
  auto error_of = [&](const oplang::Op& op) { return target.step(op).error; };
  ASSERT_FALSE(error_of(oplang::CreateTopic{"t"}));
  ASSERT_FALSE(error_of(push("t", "h", {})));
  oplang::SubscribePull pull;
  pull.topic = "t";
  pull.name = "p";
  pull.ack_timeout = ack_timeout;
  ASSERT_FALSE(error_of(pull));
  EXPECT_EQ(error_of(oplang::Poll{"t", "h", "m", 1}), ErrorCode::kWrongKind);
  EXPECT_EQ(error_of(oplang::Ack{"t", "h", 0, "m"}), ErrorCode::kWrongKind);
  pull.name = "h";
  EXPECT_EQ(error_of(pull), ErrorCode::kWrongKind);
  EXPECT_EQ(error_of(push("t", "p", {})), ErrorCode::kDuplicateSubscription);
  EXPECT_EQ(error_of(push("t", "", {})), ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_of(push("nope", "h", {})), ErrorCode::kUnknownTopic);
  ASSERT_FALSE(error_of(oplang::CreateTopic{"bounded", 3, 0}));
  EXPECT_THROW(target.step(push("bounded", "h", {})), std::invalid_argument);
}

}  // namespace conformance
