// The broker runner: real handlers that really throw and call back into the broker.
#include "harness/broker_runner.h"

#include <gtest/gtest.h>

#include "oplang/text.h"

namespace harness {
namespace {

TEST(BrokerRunnerTest, ScriptedHandlersRunForReal) {
  const std::vector<oplang::Outcome> out = run_broker(
      oplang::parse("create_topic t\n"
                    "subscribe t s max=1 script=[throw,publish(t,x)+throw42,unsubscribe]\n"
                    "publish t a\n"
                    "publish t b\n"
                    "drain\n"
                    "drain\n"
                    "dead_letters t s\n"
                    "drain\n"
                    "stats t s\n"));
  ASSERT_EQ(out.size(), 9u);
  ASSERT_EQ(out[4].calls.size(), 1u);
  EXPECT_EQ(out[5].calls.at(0).effect, "publish -> 2");
  EXPECT_EQ(out[7].calls.at(0).effect, "unsubscribe -> true");
  EXPECT_EQ(out[6].value, oplang::Value(std::vector<model::DeadLetter>{
                              {"t", "s", 0, "a", 1, "exception: boom", 0},
                              {"t", "s", 1, "b", 1, "unknown exception", 0}}));
  EXPECT_EQ(out[8].error, model::ErrorCode::kUnknownSubscription);
}

TEST(BrokerRunnerTest, AnIdempotentRepeatIsACallWithoutAStep) {
  const std::vector<oplang::Outcome> out =
      run_broker(oplang::parse("create_topic t\n"
                               "subscribe t s idempotent script=[publish(t,x),reject]\n"
                               "publish t a\n"
                               "drain\n"
                               "seek t s 0\n"
                               "drain\n"));
  ASSERT_EQ(out.size(), 6u);
  ASSERT_EQ(out[3].calls.size(), 2u);  // a applied, then x (published by the step) rejected
  ASSERT_EQ(out[5].calls.size(), 2u);
  EXPECT_EQ(out[5].calls[0].effect, "idempotent -> repeat");  // a: the wrapper answers
  EXPECT_EQ(out[5].calls[1].offset, 1u);                      // x: never applied, runs
  EXPECT_EQ(out[5].calls[1].attempt, 1);
  EXPECT_EQ(out[5].calls[1].effect, "");  // the script's third step (none left): confirm
}

TEST(BrokerRunnerTest, StepByStepWithTheManualClock) {
  BrokerRunner r;
  r.step(oplang::CreateTopic{"t"});
  r.step(oplang::SubscribePull{"t", "p", {}, 100, 5, model::Start{}});
  r.step(oplang::Publish{"t", "a", {}, ""});
  r.step(oplang::Advance{40});
  const oplang::Outcome polled = r.step(oplang::Poll{"t", "p", "w", 1});
  EXPECT_EQ(polled.value, oplang::Value(std::vector<model::Received>{{0, "a", 1, 140}}));
  EXPECT_EQ(r.broker().clock().now().time_since_epoch().count(), 40);
  EXPECT_EQ(r.step(oplang::Drain{}).value, oplang::Value(oplang::CountResult{0}));
}

TEST(BrokerRunnerTest, MapsPositionsAndWhereAndWhenALetterDied) {
  const std::vector<oplang::Outcome> out =
      run_broker(oplang::parse("create_topic t\n"
                               "subscribe t a group=g max=1 script=[reject]\n"
                               "subscribe_pull t p start=begin max=1\n"
                               "publish t x\n"
                               "publish t y\n"
                               "advance 7\n"
                               "drain\n"
                               "stats t g\n"
                               "dead_letters t g\n"
                               "poll t p w\n"
                               "advance 3\n"
                               "nack t p 0 w\n"
                               "dead_letters t p\n"
                               "unsubscribe nope a\n"));
  ASSERT_EQ(out.size(), 14u);
  model::Stats stats;
  stats.committed = 1;
  stats.cursor = 1;
  stats.backlog = 1;
  stats.delivered = 1;
  stats.dead_lettered = 1;
  EXPECT_EQ(out[7].value, oplang::Value(stats));
  EXPECT_EQ(out[8].value,
            oplang::Value(std::vector<model::DeadLetter>{{"t", "g", 0, "x", 1, "rejected", 7}}));
  EXPECT_EQ(out[9].value, oplang::Value(std::vector<model::Received>{{0, "x", 1, 7 + 30000}}));
  EXPECT_EQ(out[12].value,
            oplang::Value(std::vector<model::DeadLetter>{{"t", "p", 0, "x", 1, "nacked", 10}}));
  EXPECT_EQ(out[13].error, model::ErrorCode::kUnknownTopic);
}

TEST(BrokerRunnerTest, MapsEveryErrorCodeByName) {
  for (int i = 0; i <= static_cast<int>(broker::ErrorCode::kPartitionOutOfRange); ++i) {
    const auto code = static_cast<broker::ErrorCode>(i);
    EXPECT_STREQ(model::to_string(to_model(code)), broker::to_string(code));
  }
}

}  // namespace
}  // namespace harness
