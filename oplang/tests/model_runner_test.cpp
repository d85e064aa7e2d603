// The model runner: outcomes carry results, errors and handler calls.
#include "oplang/model_runner.h"

#include <gtest/gtest.h>

#include "oplang/text.h"

namespace oplang {
namespace {

TEST(ModelRunnerTest, RecordsValuesErrorsAndCalls) {
  const std::vector<Outcome> out =
      run(parse("create_topic t\n"
                "subscribe t s script=[publish(t,x)+reject]\n"
                "publish t a\n"
                "drain\n"
                "publish nope a\n"));
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[2].value, Value(OffsetResult{0}));
  EXPECT_EQ(out[3].value, Value(CountResult{0}));
  ASSERT_EQ(out[3].calls.size(), 1u);
  EXPECT_EQ(out[3].calls[0], (model::HandlerCall{"t", "s", 0, "a", 1, "publish -> 1"}));
  EXPECT_EQ(out[4].error, model::ErrorCode::kUnknownTopic);
  EXPECT_EQ(print(out[3]), "confirmed 0\n  call t/s 0 a attempt=1 effect: publish -> 1");
  EXPECT_EQ(print(out[4]), "error unknown_topic");
}

TEST(ModelRunnerTest, StallYieldAndNamesOfTheConcurrentVocabulary) {
  const std::vector<Outcome> out =
      run(parse("create_topic t\n"
                "subscribe t s script=[stall(20)+reject]\n"
                "subscribe_pull t p\n"
                "publish t a\n"
                "yield 3\n"
                "drain\n"
                "subscriptions t\n"
                "topics\n"
                "subscriptions nope\n"));
  ASSERT_EQ(out.size(), 9u);
  EXPECT_EQ(out[4].value, Value(Done{}));  // sequentially a yield does nothing
  ASSERT_EQ(out[5].calls.size(), 1u);
  EXPECT_EQ(out[5].calls[0].effect, "stall -> ok");  // and a stall changes no result
  EXPECT_EQ(out[5].value, Value(CountResult{0}));
  EXPECT_EQ(out[6].value, Value(NamesResult{{"s", "p"}}));
  EXPECT_EQ(print(out[7]), "names [t]");
  EXPECT_EQ(out[8].error, model::ErrorCode::kUnknownTopic);
}

TEST(ModelRunnerTest, EndAndOldestOffsetsFollowPublishesAndRetention) {
  const std::vector<Outcome> out =
      run(parse("create_topic t messages=2\n"
                "end_offset t\n"
                "oldest_offset t\n"
                "publish t a\n"
                "publish t b\n"
                "publish t c\n"
                "end_offset t\n"
                "oldest_offset t\n"
                "end_offset nope\n"
                "oldest_offset nope\n"));
  ASSERT_EQ(out.size(), 10u);
  EXPECT_EQ(out[1].value, Value(OffsetResult{0}));
  EXPECT_EQ(out[2].value, Value(OffsetResult{0}));
  EXPECT_EQ(out[6].value, Value(OffsetResult{3}));
  EXPECT_EQ(out[7].value, Value(OffsetResult{1}));
  EXPECT_EQ(out[8].error, model::ErrorCode::kUnknownTopic);
  EXPECT_EQ(out[9].error, model::ErrorCode::kUnknownTopic);
}

TEST(ModelRunnerTest, AdvanceDrivesDeadlines) {
  const std::vector<Outcome> out =
      run(parse("create_topic t\n"
                "subscribe_pull t p timeout=10 start=begin\n"
                "publish t a\n"
                "advance 5\n"
                "poll t p w\n"
                "advance 10\n"
                "ack t p 0 w\n"));
  EXPECT_EQ(out[4].value, Value(std::vector<model::Received>{{0, "a", 1, 15}}));
  EXPECT_EQ(out[6].value, Value(model::AckResult{model::AckOutcome::kLate}));
  EXPECT_EQ(print(out[6]), "false (late)");
}

// R11: an engine whose answers name no reason (the profile's switch) is answered yes or no.
TEST(ModelRunnerTest, AnAnswerNamesItsReasonUnlessTheProfileSaysTheEngineCannot) {
  const Script script = parse(
      "create_topic t\n"
      "subscribe_pull t p timeout=10 start=begin\n"
      "publish t a\n"
      "poll t p w\n"
      "ack t p 0 other\n"
      "ack t p 0 w\n");
  const std::vector<Outcome> strict = run(script);
  EXPECT_EQ(strict[4].value, Value(model::AckResult{model::AckOutcome::kNotHolder}));
  EXPECT_EQ(strict[5].value, Value(model::AckResult{}));
  ModelRunner engine(model::Profile{.answers_name_no_reason = true});
  std::vector<Outcome> yes_or_no;
  for (const Op& op : script) yes_or_no.push_back(engine.step(op));
  EXPECT_EQ(yes_or_no[4].value, Value(BoolResult{false}));
  EXPECT_EQ(yes_or_no[5].value, Value(BoolResult{true}));
}

TEST(ModelRunnerTest, PrintsStatsPositionsAndWhereAndWhenLettersDied) {
  const std::vector<Outcome> out =
      run(parse("create_topic t\n"
                "subscribe t a group=g max=1 script=[reject]\n"
                "publish t x\n"
                "publish t y\n"
                "advance 4\n"
                "drain\n"
                "stats t g\n"
                "dead_letters t g\n"
                "unsubscribe nope a\n"
                "seek t g 0\n"));
  ASSERT_EQ(out.size(), 10u);
  EXPECT_EQ(print(out[6]),
            "stats committed=1 cursor=1 backlog=1 in_flight=0 delivered=1 redelivered=0 "
            "confirmed=0 dead_lettered=1 skipped=0 filtered=0");
  EXPECT_EQ(print(out[7]), "dead_letters [t/g 0 x attempts=1 reason=rejected died_at=4]");
  EXPECT_EQ(out[8].error, model::ErrorCode::kUnknownTopic);
  EXPECT_FALSE(out[9].error.has_value());
}

}  // namespace
}  // namespace oplang
