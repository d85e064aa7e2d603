// Consumer groups over partitions (SPEC R30, R32) through the public API: seed 003's
// assignment, ownership, fencing by generation under eager and cooperative assignors, the
// committed position across rebalances, the typed errors (each changes nothing), a durable
// broker whose group rejoins where it stood, and threads joining, leaving and acking at once.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

// The brokers here run on a manual clock at 0, the `now` every call passes: a revoked
// message comes back at the clock's time (R32), as an expired one at expire's `now`.

TopicOptions partitioned(std::uint32_t n) {
  TopicOptions o;
  o.partitions = n;
  o.partitioner = Partitioner::kJavaHashCode;
  return o;
}

GroupOptions group_options(Assignor assignor) {
  GroupOptions o;
  o.assignor = assignor;
  o.pull.ack_timeout = Millis{1000};
  o.pull.start = StartPosition::beginning();
  return o;
}

std::set<std::string> payloads(const std::vector<Received>& got) {
  std::set<std::string> out;
  for (const Received& r : got) out.insert(r.message->payload);
  return out;
}

// Seed 003's ConsumerGroupAssignment: partition i to member i % members.
TEST(ConsumerGroups, Seed003sAssignmentIsRoundRobin) {
  Broker b(testing::SyncBroker());
  b.create_topic("orders", partitioned(4));
  EXPECT_EQ(b.join_group("orders", "billing", "A", group_options(Assignor::kRoundRobin)),
            (Membership{1, {0, 1, 2, 3}}));
  EXPECT_EQ(b.join_group("orders", "billing", "B", group_options(Assignor::kRoundRobin)),
            (Membership{2, {1, 3}}));
  EXPECT_EQ(b.membership("orders", "billing", "A"), (Membership{2, {0, 2}}));
  const GroupStats g = b.group_stats("orders", "billing");
  EXPECT_EQ(g.members, (std::vector<std::string>{"A", "B"}));
  ASSERT_EQ(g.partitions.size(), 4u);
  for (std::uint32_t p = 0; p < 4; ++p) {
    EXPECT_EQ(g.partitions[p].owner, p % 2 == 0 ? "A" : "B") << p;
    EXPECT_EQ(g.partitions[p].topic, partition_name("orders", p));
  }
}

TEST(ConsumerGroups, AMemberPollsOnlyItsOwnPartitions) {
  Broker b(testing::SyncBroker());
  b.create_topic("orders", partitioned(4));
  b.join_group("orders", "billing", "A", group_options(Assignor::kRange));
  b.join_group("orders", "billing", "B", group_options(Assignor::kRange));  // A 0 1, B 2 3
  for (std::uint32_t p = 0; p < 4; ++p) b.publish_to("orders", p, "m" + std::to_string(p));
  const auto a = b.poll_group("orders", "billing", "A", 10, Time{});
  const auto bb = b.poll_group("orders", "billing", "B", 10, Time{});
  EXPECT_EQ(payloads(a), (std::set<std::string>{"m0", "m1"}));
  EXPECT_EQ(payloads(bb), (std::set<std::string>{"m2", "m3"}));
  for (const Received& r : a) EXPECT_EQ(r.receipt.generation, 2u);
}

// Eager: every rebalance revokes everything, so a receipt of an older generation is
// refused even by a member that gets the same partition back; the message comes back.
TEST(ConsumerGroups, AnAnswerFromAnOlderGenerationIsRefused) {
  Broker b(testing::SyncBroker());
  b.create_topic("orders", partitioned(2));
  b.join_group("orders", "billing", "A", group_options(Assignor::kRange));
  b.publish_to("orders", 0, "m0");
  const auto got = b.poll_group("orders", "billing", "A", 1, Time{});
  ASSERT_EQ(got.size(), 1u);
  b.join_group("orders", "billing", "B", group_options(Assignor::kRange));  // A keeps 0
  EXPECT_FALSE(b.ack(got[0].receipt, Time{}));
  EXPECT_FALSE(b.extend(got[0].receipt, Time{}, Millis{10}));
  const auto again = b.poll_group("orders", "billing", "A", 1, Time{});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].attempt, 2);
  EXPECT_EQ(again[0].receipt.generation, 2u);
  EXPECT_FALSE(b.ack(got[0].receipt, Time{}));  // the same message, the old receipt
  EXPECT_TRUE(b.ack(again[0].receipt, Time{}));
}

// Cooperative: a partition that stays with its member keeps its receipts valid.
TEST(ConsumerGroups, CooperativeKeepsTheReceiptsOfPartitionsThatStay) {
  Broker b(testing::SyncBroker());
  b.create_topic("orders", partitioned(2));
  const GroupOptions o = group_options(Assignor::kCooperativeSticky);
  b.join_group("orders", "billing", "A", o);
  b.publish_to("orders", 0, "m0");
  b.publish_to("orders", 1, "m1");
  const auto got = b.poll_group("orders", "billing", "A", 2, Time{});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(b.join_group("orders", "billing", "B", o), (Membership{2, {1}}));  // p1 moves
  EXPECT_TRUE(b.ack(got[0].receipt, Time{}));                                  // p0 stayed with A
  EXPECT_FALSE(b.ack(got[1].receipt, Time{}));  // p1 moved to B: fenced
  const auto moved = b.poll_group("orders", "billing", "B", 2, Time{});
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].message->payload, "m1");
  EXPECT_EQ(moved[0].attempt, 2);
}

// Nothing confirmed comes back and nothing is lost when the owner changes.
TEST(ConsumerGroups, ARebalanceKeepsTheCommittedPosition) {
  Broker b(testing::SyncBroker());
  b.create_topic("orders", partitioned(1));  // a topic without partitions is its own one
  b.join_group("orders", "billing", "A", group_options(Assignor::kSticky));
  for (int i = 0; i < 5; ++i) b.publish("orders", "m" + std::to_string(i));
  for (const Received& r : b.poll_group("orders", "billing", "A", 3, Time{})) {
    EXPECT_TRUE(b.ack(r.receipt, Time{}));
  }
  b.join_group("orders", "billing", "B", group_options(Assignor::kSticky));
  EXPECT_TRUE(b.leave_group("orders", "billing", "A"));
  const auto got = b.poll_group("orders", "billing", "B", 10, Time{});
  EXPECT_EQ(payloads(got), (std::set<std::string>{"m3", "m4"}));
  const GroupStats g = b.group_stats("orders", "billing");
  EXPECT_EQ(g.generation, 3u);
  EXPECT_EQ(g.partitions[0].committed, 3u);
  EXPECT_EQ(g.partitions[0].end, 5u);
  EXPECT_EQ(g.partitions[0].lag.messages, 2u);
}

TEST(ConsumerGroups, BadInputIsATypedErrorAndChangesNothing) {
  Broker b(testing::SyncBroker());
  b.create_topic("orders", partitioned(2));
  const GroupOptions o = group_options(Assignor::kRange);
  EXPECT_EQ(testing::code_of([&] { b.join_group("orders", "", "A", o); }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(testing::code_of([&] { b.join_group("orders", "billing", "", o); }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(testing::code_of([&] { b.join_group("nope", "billing", "A", o); }),
            ErrorCode::kUnknownTopic);
  b.subscribe("orders-1", "audit", [](const Delivery&) { return true; });
  EXPECT_EQ(testing::code_of([&] { b.join_group("orders", "audit", "A", o); }),
            ErrorCode::kWrongKind);
  EXPECT_TRUE(b.subscriptions("orders-0").empty()) << "a refused join made a subscription";
  b.join_group("orders", "billing", "A", o);
  EXPECT_EQ(testing::code_of(
                [&] { b.join_group("orders", "billing", "B", group_options(Assignor::kSticky)); }),
            ErrorCode::kOptionsMismatch);
  EXPECT_EQ(b.group_stats("orders", "billing").generation, 1u);
  EXPECT_EQ(testing::code_of([&] { b.poll("orders-0", "billing", "A", 1, Time{}); }),
            ErrorCode::kWrongKind);
  EXPECT_EQ(testing::code_of([&] { b.unsubscribe("orders-0", "billing"); }), ErrorCode::kWrongKind);
  EXPECT_EQ(testing::code_of([&] { b.poll_group("orders", "billing", "B", 1, Time{}); }),
            ErrorCode::kUnknownSubscription);
  EXPECT_EQ(testing::code_of([&] { b.poll_group("orders", "billing", "A", 0, Time{}); }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(testing::code_of([&] { (void)b.membership("orders", "nope", "A"); }),
            ErrorCode::kUnknownSubscription);
  EXPECT_FALSE(b.leave_group("orders", "billing", "B"));
  EXPECT_EQ(b.group_stats("orders", "billing").generation, 1u);
  // A topic with a group's subscriptions cannot be deleted.
  EXPECT_EQ(testing::code_of([&] { b.delete_topic("orders"); }), ErrorCode::kTopicInUse);
}

// Membership is not saved; positions are: the first join after a restart adopts them.
TEST(ConsumerGroups, ADurableGroupRejoinsWhereItsPositionsStood) {
  testing::TempDir dir;
  {
    Broker b(testing::durable_in(dir));
    b.create_topic("orders", partitioned(2));
    b.join_group("orders", "billing", "A", group_options(Assignor::kRange));
    b.publish_to("orders", 0, "done");
    b.publish_to("orders", 0, "held");
    const auto got = b.poll_group("orders", "billing", "A", 1, Time{});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(b.ack(got[0].receipt, Time{}));
    EXPECT_EQ(b.poll_group("orders", "billing", "A", 1, Time{}).size(), 1u);  // held, unanswered
  }
  Broker b(testing::durable_in(dir));
  EXPECT_EQ(testing::code_of([&] { (void)b.group_stats("orders", "billing"); }),
            ErrorCode::kUnknownSubscription);
  EXPECT_EQ(b.join_group("orders", "billing", "B", group_options(Assignor::kRange)),
            (Membership{1, {0, 1}}));
  const auto got = b.poll_group("orders", "billing", "B", 10, Time{});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].message->payload, "held");
}

// Threads join, leave, poll and ack at once; every message ends confirmed exactly once and
// no accepted ack is for a message another member had been given later.
TEST(ConsumerGroups, MembersJoiningAndLeavingUnderLoadConfirmEachMessageOnce) {
  Broker b(testing::SyncBroker());
  b.create_topic("orders", partitioned(4));
  constexpr int kMessages = 2000;
  for (int i = 0; i < kMessages; ++i) {
    b.publish("orders", "m" + std::to_string(i), {}, "k" + std::to_string(i % 50));
  }
  GroupOptions o = group_options(Assignor::kCooperativeSticky);
  o.pull.ack_timeout = Millis{60'000};
  std::mutex mu;
  std::map<std::string, int> confirmed;  // payload -> accepted acks
  std::atomic<int> total{0};
  auto worker = [&](const std::string& name, int seed) {
    int round = 0;
    while (total.load() < kMessages) {
      b.join_group("orders", "billing", name, o);
      for (int k = 0; k < 20 + seed; ++k) {
        for (const Received& r : b.poll_group("orders", "billing", name, 5, Time{})) {
          if (b.ack(r.receipt, Time{})) {
            std::lock_guard<std::mutex> lock(mu);
            if (++confirmed[r.message->payload] == 1) total.fetch_add(1);
          }
        }
      }
      if (++round % (2 + seed) == 0) b.leave_group("orders", "billing", name);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) threads.emplace_back(worker, "w" + std::to_string(i), i);
  for (auto& t : threads) t.join();
  EXPECT_EQ(confirmed.size(), static_cast<std::size_t>(kMessages));
  for (const auto& [payload, n] : confirmed) EXPECT_EQ(n, 1) << payload << " confirmed twice";
  const GroupStats g = b.group_stats("orders", "billing");
  for (const PartitionStats& p : g.partitions) EXPECT_EQ(p.committed, p.end) << p.topic;
}

}  // namespace
}  // namespace broker
