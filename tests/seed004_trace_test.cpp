// Seed 004, "A message's life inside a subscription": the 7-step trace, one block per row
// of the seed's table. billing: pull, ack_timeout 30 s, max_deliveries 2. email: pull,
// header filter type=created. Time is the injected clock's milliseconds.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

using testing::Pull;
using testing::SyncBroker;

constexpr Time kT0{};
constexpr Time kT30 = at(Millis{30000});
constexpr Time kT60 = at(Millis{60000});

std::vector<std::pair<Offset, int>> OffsetsAndAttempts(const std::vector<Received>& got) {
  std::vector<std::pair<Offset, int>> out;
  for (const auto& r : got) out.emplace_back(r.message->offset(), r.attempt);
  return out;
}

class Seed004Trace : public ::testing::Test {
 protected:
  Broker b{SyncBroker()};
  void SetUp() override {
    b.create_topic("orders");
    b.subscribe_pull("orders", "billing", Pull(Millis{30000}, /*max_deliveries=*/2));
    b.subscribe_pull("orders", "email",
                     Pull(Millis{30000}, kDefaultMaxDeliveries, Headers{{"type", "created"}}));
  }
};

TEST_F(Seed004Trace, SevenStepsRowByRow) {
  {
    SCOPED_TRACE("1: publish m1 (created), m2 (created), m3 (paid) -> billing 3, email 2");
    EXPECT_EQ(b.publish("orders", "m1", {{"type", "created"}}), 0u);
    EXPECT_EQ(b.publish("orders", "m2", {{"type", "created"}}), 1u);
    EXPECT_EQ(b.publish("orders", "m3", {{"type", "paid"}}), 2u);
    EXPECT_EQ(b.stats("orders", "billing").backlog, 3u);
    EXPECT_EQ(b.stats("orders", "email").backlog, 2u) << "the filter drops m3 for email";
  }
  {
    SCOPED_TRACE("2: w1 polls, w2 polls billing -> w1 gets m1, w2 gets m2");
    const auto w1 = b.poll("orders", "billing", "w1", 1, kT0);
    const auto w2 = b.poll("orders", "billing", "w2", 1, kT0);
    ASSERT_EQ(w1.size(), 1u);
    ASSERT_EQ(w2.size(), 1u);
    EXPECT_EQ(w1[0].message->payload(), "m1");
    EXPECT_EQ(w1[0].attempt, 1);
    EXPECT_EQ(w1[0].deadline, kT30);
    EXPECT_EQ(w2[0].message->payload(), "m2");
    EXPECT_EQ(w2[0].attempt, 1);
    EXPECT_EQ(w2[0].deadline, kT30);
    const auto s = b.stats("orders", "billing");
    EXPECT_EQ(s.in_flight, 2u);
    EXPECT_EQ(s.backlog, 1u);
  }
  {
    SCOPED_TRACE("3: ack m1 twice -> true, then false");
    EXPECT_TRUE(b.ack(Receipt{"orders", "billing", "w1", 0}, kT0));
    const auto before = b.stats("orders", "billing");
    EXPECT_FALSE(b.ack(Receipt{"orders", "billing", "w1", 0}, kT0)) << "nothing in flight any more";
    EXPECT_EQ(b.stats("orders", "billing"), before) << "the refused ack changed nothing";
    EXPECT_EQ(before.confirmed, 1u);
    EXPECT_EQ(before.in_flight, 1u);
  }
  {
    SCOPED_TRACE("4: expire(now = 30 s) -> m2 goes back before m3");
    EXPECT_EQ(b.expire(kT30), (std::vector<Expired>{{"orders", "billing", 1, false}}));
    const auto s = b.stats("orders", "billing");
    EXPECT_EQ(s.in_flight, 0u);
    EXPECT_EQ(s.backlog, 2u) << "m2 (returned) and m3";
    EXPECT_TRUE(b.dead_letters("orders", "billing").empty());
  }
  {
    SCOPED_TRACE("5: w1 polls 2; w2 acks m2 late -> m2, m3; the late ack is refused");
    const auto w1 = b.poll("orders", "billing", "w1", 2, kT30);
    EXPECT_EQ(OffsetsAndAttempts(w1), (std::vector<std::pair<Offset, int>>{{1, 2}, {2, 1}}))
        << "second delivery of m2, before m3";
    ASSERT_EQ(w1.size(), 2u);
    EXPECT_EQ(w1[0].message->payload(), "m2");
    EXPECT_EQ(w1[0].deadline, kT60);
    EXPECT_EQ(w1[1].message->payload(), "m3");
    const auto before = b.stats("orders", "billing");
    EXPECT_FALSE(b.ack(Receipt{"orders", "billing", "w2", 1}, kT30)) << "m2 now belongs to w1";
    EXPECT_EQ(b.stats("orders", "billing"), before);
    EXPECT_EQ(before.in_flight, 2u);
    EXPECT_EQ(before.redelivered, 1u);
  }
  {
    SCOPED_TRACE("6: expire(now = 60 s) -> m2 dead-lettered (delivery 2 of 2)");
    EXPECT_EQ(b.expire(kT60), (std::vector<Expired>{{"orders", "billing", 1, true},
                                                    {"orders", "billing", 2, false}}))
        << "m3 (delivery 1 of 2) is returned, m2 dies";
    const auto dead = b.dead_letters("orders", "billing");
    ASSERT_EQ(dead.size(), 1u);
    EXPECT_EQ(dead[0].message->payload(), "m2");
    EXPECT_EQ(dead[0].message->offset(), 1u);
    EXPECT_EQ(dead[0].attempts, 2);
    EXPECT_EQ(dead[0].reason, "ack deadline expired");
  }
  {
    SCOPED_TRACE("7: email has not polled -> backlog 2, billing unaffected");
    const auto email = b.stats("orders", "email");
    EXPECT_EQ(email.backlog, 2u);
    EXPECT_EQ(email.delivered, 0u);
    EXPECT_EQ(email.in_flight, 0u);
    EXPECT_EQ(email.confirmed, 0u);
    EXPECT_EQ(email.dead_lettered, 0u);
    const auto billing = b.stats("orders", "billing");
    EXPECT_EQ(billing.delivered, 4u);
    EXPECT_EQ(billing.redelivered, 1u);
    EXPECT_EQ(billing.confirmed, 1u);
    EXPECT_EQ(billing.dead_lettered, 1u);
    EXPECT_EQ(billing.in_flight, 0u);
    EXPECT_EQ(billing.backlog, 1u) << "m3 waits for its second delivery";
    EXPECT_EQ(billing.cursor, 3u);
    // Each subscription has its own queue: email still gets both created messages.
    const auto got = b.poll("orders", "email", "e1", 10, kT60);
    EXPECT_EQ(OffsetsAndAttempts(got), (std::vector<std::pair<Offset, int>>{{0, 1}, {1, 1}}));
    EXPECT_EQ(b.stats("orders", "email").filtered, 1u) << "m3 passed over";
  }
}

TEST_F(Seed004Trace, Step2_TwoWorkersNeverHoldTheSameMessage) {
  b.publish("orders", "m1", {{"type", "created"}});
  b.publish("orders", "m2", {{"type", "created"}});
  const auto w1 = b.poll("orders", "billing", "w1", 5, kT0);
  const auto w2 = b.poll("orders", "billing", "w2", 5, kT0);
  EXPECT_EQ(w1.size(), 2u);
  EXPECT_TRUE(w2.empty()) << "everything is held by w1";
  EXPECT_FALSE(b.ack(Receipt{"orders", "billing", "w2", 0}, kT0)) << "only the holder may ack";
  EXPECT_TRUE(b.ack(Receipt{"orders", "billing", "w1", 0}, kT0));
}

TEST_F(Seed004Trace, Step5_AckAtTheDeadlineIsLateAndRefused) {
  b.publish("orders", "m1", {{"type", "created"}});
  ASSERT_EQ(b.poll("orders", "billing", "w1", 1, kT0).size(), 1u);
  const auto before = b.stats("orders", "billing");
  EXPECT_FALSE(b.ack(Receipt{"orders", "billing", "w1", 0}, kT30))
      << "accepted only while now < deadline";
  EXPECT_EQ(b.stats("orders", "billing"), before);
  EXPECT_TRUE(b.ack(Receipt{"orders", "billing", "w1", 0}, at(Millis{29999})));
}

}  // namespace
}  // namespace broker
