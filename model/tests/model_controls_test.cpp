// Model unit tests: the consumer controls, redrive and purge (R25), pause (R26), lag (R27)
// and seek by time (R28).
#include <gtest/gtest.h>

#include "code_of.h"
#include "model/model.h"

namespace model {
namespace {

// Three messages 10 ms apart (published at 0, 10, 20); "work" gives up after 1 delivery.
class ModelControlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m.create_topic("jobs");
    m.create_topic("parking");
    m.subscribe_pull(
        "jobs", "work",
        {.ack_timeout = 30, .max_deliveries = 1, .start = {Start::Kind::kBeginning, 0}});
    m.publish("jobs", "a", {{"kind", "x"}}, "k1");
    m.advance(10);
    m.publish("jobs", "b");
    m.advance(10);
    m.publish("jobs", "c");
  }
  // Polls everything at now and nacks it all: with max_deliveries 1 every one dies.
  void kill_all() {
    for (const Received& r : m.poll("jobs", "work", "w", m.now(), 10)) {
      m.nack("jobs", "work", r.offset, "w", m.now());
    }
  }
  Model m;
};

TEST_F(ModelControlsTest, R25RedriveOffersDeadLettersAgainFirstWithTheirAttemptsReset) {
  kill_all();
  ASSERT_EQ(m.dead_letters("jobs", "work").size(), 3u);
  m.publish("jobs", "d");
  EXPECT_EQ(m.stats("jobs", "work").committed, 3u);
  EXPECT_EQ(m.redrive("jobs", "work"), 3u);
  EXPECT_TRUE(m.dead_letters("jobs", "work").empty());
  const Stats s = m.stats("jobs", "work");
  EXPECT_EQ(s.committed, 0u);  // the position goes back: they are not done any more
  EXPECT_EQ(s.redriven, 3u);
  EXPECT_EQ(s.dead_lettered, 3u);  // history stays
  // Returned messages first, lowest offset first (R5), each a first attempt again.
  const std::vector<Received> got = m.poll("jobs", "work", "w", m.now(), 4);
  ASSERT_EQ(got.size(), 4u);
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].offset, i);
    EXPECT_EQ(got[i].attempt, 1);
  }
}

TEST_F(ModelControlsTest, R25RedriveLeavesDeadLettersWhoseMessageIsNoLongerKept) {
  m.create_topic("small", 2);
  m.subscribe_pull("small", "s", {.ack_timeout = 30, .max_deliveries = 1});
  m.publish("small", "x");
  const Received r = m.poll("small", "s", "w", m.now(), 1).at(0);
  m.term("small", "s", r.offset, "w", m.now());
  m.publish("small", "y");
  m.publish("small", "z");  // x is dropped
  EXPECT_EQ(m.redrive("small", "s"), 0u);
  ASSERT_EQ(m.dead_letters("small", "s").size(), 1u);  // only redrive_to can move it now
  EXPECT_EQ(m.redrive_to("small", "s", "parking"), (std::vector<Offset>{0}));
  EXPECT_TRUE(m.dead_letters("small", "s").empty());
}

TEST_F(ModelControlsTest, R25RedriveOfAMessageAlreadyOfferedAgainOnlyDropsTheDeadLetter) {
  kill_all();
  m.seek("jobs", "work", 1);  // 1 and 2 will be offered again anyway
  EXPECT_EQ(m.redrive("jobs", "work"), 3u);
  const std::vector<Received> got = m.poll("jobs", "work", "w", m.now(), 5);
  ASSERT_EQ(got.size(), 3u);  // 0 once (returned), 1 and 2 once (from the cursor)
  EXPECT_EQ(got[0].offset, 0u);
  EXPECT_EQ(got[1].offset, 1u);
  EXPECT_EQ(got[2].offset, 2u);
}

TEST_F(ModelControlsTest, R25RedriveToPublishesPayloadHeadersAndKeyInTheOrderTheyDied) {
  m.poll("jobs", "work", "w", m.now(), 3);
  m.term("jobs", "work", 2, "w", m.now());
  m.term("jobs", "work", 0, "w", m.now());
  m.subscribe_pull("parking", "p", {.start = {Start::Kind::kBeginning, 0}});
  EXPECT_EQ(m.redrive_to("jobs", "work", "parking"), (std::vector<Offset>{0, 1}));
  EXPECT_TRUE(m.dead_letters("jobs", "work").empty());
  EXPECT_EQ(m.stats("jobs", "work").redriven, 2u);
  const std::vector<Received> parked = m.poll("parking", "p", "w", m.now(), 5);
  ASSERT_EQ(parked.size(), 2u);
  EXPECT_EQ(parked[0].payload, "c");
  EXPECT_EQ(parked[1].payload, "a");
  // Headers and key travel too: a filter on the original header matches the copy.
  m.subscribe_pull("parking", "only_x",
                   {.header_filter = {{"kind", "x"}}, .start = {Start::Kind::kBeginning, 0}});
  ASSERT_EQ(m.poll("parking", "only_x", "w", m.now(), 5).size(), 1u);
}

TEST_F(ModelControlsTest, R25PurgeDropsEveryDeadLetterAndCountsThem) {
  kill_all();
  EXPECT_EQ(m.purge_dead_letters("jobs", "work"), 3u);
  EXPECT_TRUE(m.dead_letters("jobs", "work").empty());
  EXPECT_EQ(m.stats("jobs", "work").purged, 3u);
  EXPECT_EQ(m.stats("jobs", "work").committed, 3u);  // still done with
  EXPECT_EQ(m.purge_dead_letters("jobs", "work"), 0u);
}

TEST_F(ModelControlsTest, R25BadNamesAreTypedErrorsAndChangeNothing) {
  kill_all();
  EXPECT_EQ(code_of([&] { m.redrive("nope", "work"); }), ErrorCode::kUnknownTopic);
  EXPECT_EQ(code_of([&] { m.redrive("jobs", "nope"); }), ErrorCode::kUnknownSubscription);
  EXPECT_EQ(code_of([&] { m.redrive_to("jobs", "work", "nope"); }), ErrorCode::kUnknownTopic);
  EXPECT_EQ(code_of([&] { m.purge_dead_letters("jobs", "nope"); }),
            ErrorCode::kUnknownSubscription);
  EXPECT_EQ(m.dead_letters("jobs", "work").size(), 3u);
  EXPECT_EQ(m.end_offset("parking"), 0u);
}

TEST_F(ModelControlsTest, R26APausedPullSubscriptionHandsOutNothingButHeldOnesAreAnswered) {
  const std::vector<Received> got = m.poll("jobs", "work", "w", m.now(), 1);
  EXPECT_TRUE(m.pause("jobs", "work"));
  EXPECT_FALSE(m.pause("jobs", "work"));  // already paused
  EXPECT_TRUE(m.poll("jobs", "work", "w", m.now(), 5).empty());
  EXPECT_TRUE(m.ack("jobs", "work", got[0].offset, "w", m.now()));
  m.publish("jobs", "d");
  const Stats s = m.stats("jobs", "work");
  EXPECT_TRUE(s.paused);
  EXPECT_EQ(s.backlog, 3u);  // the backlog grows and is counted
  EXPECT_TRUE(m.resume("jobs", "work"));
  EXPECT_FALSE(m.resume("jobs", "work"));
  const std::vector<Received> after = m.poll("jobs", "work", "w", m.now(), 5);
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[0].offset, 1u);  // in order, where it stopped
}

TEST_F(ModelControlsTest, R26APausedPushSubscriptionIsIdleButNotDelivered) {
  m.subscribe("jobs", "mail", {.start = {Start::Kind::kBeginning, 0}});
  m.pause("jobs", "mail");
  EXPECT_EQ(m.drain(), 0u);
  EXPECT_TRUE(m.take_calls().empty());
  EXPECT_TRUE(m.wait_idle(0));
  EXPECT_FALSE(m.wait_delivered(0));
  m.resume("jobs", "mail");
  EXPECT_EQ(m.drain(), 3u);
  EXPECT_TRUE(m.wait_delivered(0));
}

TEST_F(ModelControlsTest, R26ARestartForgetsThePause) {
  m.pause("jobs", "work");
  m.restart();
  EXPECT_FALSE(m.stats("jobs", "work").paused);
  EXPECT_EQ(m.poll("jobs", "work", "w", m.now(), 1).size(), 1u);
}

TEST_F(ModelControlsTest, R27LagCountsWaitingAndHeldMessagesAndAgesTheLowest) {
  m.subscribe_pull("jobs", "only_x",
                   {.header_filter = {{"kind", "x"}}, .start = {Start::Kind::kBeginning, 0}});
  m.advance(5);  // now 25
  EXPECT_EQ(m.lag("jobs", "work", m.now()), (Lag{3, 25}));
  EXPECT_EQ(m.lag("jobs", "only_x", m.now()), (Lag{1, 25}));  // filtered ones are not lag
  EXPECT_EQ(m.poll("jobs", "work", "w", m.now(), 2).size(), 2u);
  EXPECT_EQ(m.lag("jobs", "work", m.now()), (Lag{3, 25}));  // held is not confirmed
  m.ack("jobs", "work", 0, "w", m.now());
  EXPECT_EQ(m.lag("jobs", "work", m.now()), (Lag{2, 15}));
  m.term("jobs", "work", 1, "w", m.now());  // dead: done with
  EXPECT_EQ(m.lag("jobs", "work", m.now()), (Lag{1, 5}));
  m.poll("jobs", "work", "w", m.now(), 1);
  m.ack("jobs", "work", 2, "w", m.now());
  EXPECT_EQ(m.lag("jobs", "work", m.now()), (Lag{0, 0}));
}

TEST_F(ModelControlsTest, R28OffsetForTimeIsTheFirstKeptMessagePublishedAtOrAfter) {
  EXPECT_EQ(m.offset_for_time("jobs", 0), 0u);
  EXPECT_EQ(m.offset_for_time("jobs", 1), 1u);
  EXPECT_EQ(m.offset_for_time("jobs", 10), 1u);
  EXPECT_EQ(m.offset_for_time("jobs", 20), 2u);
  m.advance(5);
  EXPECT_EQ(m.offset_for_time("jobs", 21), 3u);  // none: the end
  EXPECT_EQ(code_of([&] { m.offset_for_time("jobs", 26); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { m.offset_for_time("nope", 0); }), ErrorCode::kUnknownTopic);
}

TEST_F(ModelControlsTest, R28SeekToTimeIsASeekThatForgetsWhatWasHeld) {
  m.poll("jobs", "work", "w", m.now(), 3);
  EXPECT_EQ(m.seek_to_time("jobs", "work", 5), 1u);
  EXPECT_EQ(m.stats("jobs", "work").in_flight, 0u);
  EXPECT_FALSE(m.ack("jobs", "work", 1, "w", m.now()));  // forgotten by the seek
  const std::vector<Received> got = m.poll("jobs", "work", "w", m.now(), 5);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].offset, 1u);
  EXPECT_EQ(got[0].attempt, 1);
  // A time after now is refused before the names are looked at, and moves nothing.
  EXPECT_EQ(code_of([&] { m.seek_to_time("nope", "work", m.now() + 1); }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(m.stats("jobs", "work").cursor, 3u);
}

}  // namespace
}  // namespace model
