// Consumer groups over partitions (SPEC R30, R32) through the public API: seed 003's
// assignment, ownership, fencing by generation under eager and cooperative assignors, the
// committed position across rebalances, the typed errors (each changes nothing), a durable
// broker whose group rejoins where it stood, and threads joining, leaving and acking at once;
// push groups: each partition to its owner's handler, a failure to the next owner, a running
// call's result voided when its partition moves, leave waiting for the member's call.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
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
  for (const Received& r : got) out.insert(std::string(r.message->payload()));
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
  EXPECT_EQ(moved[0].message->payload(), "m1");
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
    const auto got = b.poll_group("orders", "billing", "A", 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(b.ack(got[0].receipt));
    EXPECT_EQ(b.poll_group("orders", "billing", "A", 1).size(), 1u);  // held, unanswered
  }
  Broker b(testing::durable_in(dir));
  EXPECT_EQ(testing::code_of([&] { (void)b.group_stats("orders", "billing"); }),
            ErrorCode::kUnknownSubscription);
  EXPECT_EQ(b.join_group("orders", "billing", "B", group_options(Assignor::kRange)),
            (Membership{1, {0, 1}}));
  const auto got = b.poll_group("orders", "billing", "B", 10);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].message->payload(), "held");
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
            if (++confirmed[std::string(r.message->payload())] == 1) total.fetch_add(1);
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

// ---- push groups ----

GroupOptions push_options(Assignor assignor) {
  GroupOptions o;
  o.assignor = assignor;
  o.push.start = StartPosition::beginning();
  return o;
}

/// A handler that records (member, partition topic, payload, attempt) and answers `answer`.
struct Calls {
  std::mutex mu;
  std::vector<std::tuple<std::string, std::string, std::string, int>> seen;
  Handler of(const std::string& member, bool answer = true) {
    return [this, member, answer](const Delivery& d) {
      std::lock_guard<std::mutex> lock(mu);
      seen.emplace_back(member, *d.topic, d.message->payload(), d.attempt);
      return answer;
    };
  }
};

TEST(PushConsumerGroups, EachPartitionGoesToItsOwnersHandler) {
  Broker b(testing::SyncBroker());
  b.create_topic("orders", partitioned(4));
  Calls calls;
  b.join_group("orders", "billing", "A", calls.of("A"), push_options(Assignor::kRange));
  b.join_group("orders", "billing", "B", calls.of("B"), push_options(Assignor::kRange));
  for (std::uint32_t p = 0; p < 4; ++p) b.publish_to("orders", p, "m" + std::to_string(p));
  EXPECT_EQ(b.drain(), 4u);
  std::map<std::string, std::string> owner_of;  // payload -> member
  for (const auto& [member, topic, payload, attempt] : calls.seen) owner_of[payload] = member;
  EXPECT_EQ(owner_of, (std::map<std::string, std::string>{
                          {"m0", "A"}, {"m1", "A"}, {"m2", "B"}, {"m3", "B"}}));
  for (const PartitionStats& p : b.group_stats("orders", "billing").partitions) {
    EXPECT_EQ(p.committed, p.end) << p.topic;
  }
  // A consumer group's partition subscription goes by the group's name (R13).
  EXPECT_EQ(b.subscriptions(partition_name("orders", 0)), std::vector<std::string>{"billing"});
}

// A message A failed comes back; once the partition is B's, B's handler gets it (R7, R32).
TEST(PushConsumerGroups, AFailedMessageGoesToWhoeverOwnsThePartitionNext) {
  Broker b(testing::SyncBroker());
  b.create_topic("orders", partitioned(2));
  Calls calls;
  b.join_group("orders", "billing", "A", calls.of("A", false), push_options(Assignor::kRange));
  b.publish_to("orders", 1, "late");
  EXPECT_EQ(b.drain(), 0u);  // A fails it: R8 stops this partition for this drain
  b.join_group("orders", "billing", "B", calls.of("B"), push_options(Assignor::kRange));
  EXPECT_EQ(b.membership("orders", "billing", "B").partitions, std::vector<std::uint32_t>{1});
  EXPECT_EQ(b.drain(), 1u);
  ASSERT_EQ(calls.seen.size(), 2u);
  EXPECT_EQ(calls.seen[1],
            std::make_tuple(std::string("B"), partition_name("orders", 1), std::string("late"), 2));
}

// When the last member leaves, the partitions wait (nothing is offered, nothing is lost);
// the next member gets them from the committed position.
TEST(PushConsumerGroups, AGroupWithoutMembersKeepsItsMessagesForTheNextMember) {
  Broker b(testing::SyncBroker());
  b.create_topic("orders", partitioned(2));
  Calls calls;
  b.join_group("orders", "billing", "A", calls.of("A"), push_options(Assignor::kSticky));
  EXPECT_TRUE(b.leave_group("orders", "billing", "A"));
  b.publish("orders", "x", {}, "order-1");
  EXPECT_EQ(b.drain(), 0u);
  EXPECT_FALSE(b.wait_delivered(Millis{0}));
  b.join_group("orders", "billing", "C", calls.of("C"), push_options(Assignor::kSticky));
  EXPECT_EQ(b.drain(), 1u);
  ASSERT_EQ(calls.seen.size(), 1u);
  EXPECT_EQ(std::get<0>(calls.seen[0]), "C");
}

// A lane runs A's call; a join makes a rebalance meanwhile. Eager: the partition is
// revoked, so the call's confirmation is void and the message comes again (attempt 2).
// Cooperative: A keeps it, and its confirmation counts (one call).
TEST(PushConsumerGroups, ARunningCallsResultIsVoidWhenItsPartitionIsRevoked) {
  for (const Assignor assignor : {Assignor::kRange, Assignor::kCooperativeSticky}) {
    SCOPED_TRACE(assignor == Assignor::kRange ? "range (eager)" : "cooperative");
    Broker b(testing::LaneBroker());
    b.create_topic("orders");  // one partition: A keeps it under both assignors
    std::atomic<bool> entered{false};
    std::atomic<bool> release{false};
    std::atomic<int> calls{0};
    std::vector<int> attempts;
    std::mutex mu;
    Handler slow = [&](const Delivery& d) -> bool {
      {
        std::lock_guard<std::mutex> lock(mu);
        attempts.push_back(d.attempt);
      }
      if (calls.fetch_add(1) == 0) {
        entered = true;
        EXPECT_TRUE(testing::WaitUntil([&] { return release.load(); }));
      }
      return true;
    };
    b.join_group("orders", "billing", "A", slow, push_options(assignor));
    b.publish("orders", "m");
    ASSERT_TRUE(testing::WaitUntil([&] { return entered.load(); }));
    Calls others;
    b.join_group("orders", "billing", "B", others.of("B"), push_options(assignor));
    EXPECT_EQ(b.membership("orders", "billing", "A").partitions, std::vector<std::uint32_t>{0});
    release = true;
    ASSERT_TRUE(b.wait_delivered(Millis{10'000}));
    std::lock_guard<std::mutex> lock(mu);
    if (assignor == Assignor::kRange) {
      EXPECT_EQ(attempts, (std::vector<int>{1, 2}));
    } else {
      EXPECT_EQ(attempts, (std::vector<int>{1}));
    }
    EXPECT_EQ(b.stats("orders", "billing").committed, 1u);
  }
}

// R9 for groups: once leave_group returns, the member's handler is not running.
TEST(PushConsumerGroups, LeaveGroupReturnsAfterTheMembersRunningCall) {
  Broker b(testing::LaneBroker());
  b.create_topic("orders");
  std::atomic<bool> entered{false};
  std::atomic<bool> returned{false};
  Handler slow = [&](const Delivery&) {
    entered = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    returned = true;
    return true;
  };
  b.join_group("orders", "billing", "A", slow, push_options(Assignor::kRange));
  b.publish("orders", "m");
  ASSERT_TRUE(testing::WaitUntil([&] { return entered.load(); }));
  EXPECT_TRUE(b.leave_group("orders", "billing", "A"));
  EXPECT_TRUE(returned.load());
}

TEST(PushConsumerGroups, BadInputIsATypedErrorAndChangesNothing) {
  Broker b(testing::SyncBroker());
  b.create_topic("orders", partitioned(2));
  Calls calls;
  b.join_group("orders", "push", "A", calls.of("A"), push_options(Assignor::kRange));
  b.join_group("orders", "pull", "A", group_options(Assignor::kRange));
  const GroupStats before = b.group_stats("orders", "push");
  const std::string p0 = partition_name("orders", 0);
  using testing::code_of;
  EXPECT_EQ(code_of([&] { b.join_group("orders", "push", "B", Handler{}, {}); }),
            ErrorCode::kInvalidArgument);
  GroupOptions named = push_options(Assignor::kRange);
  named.push.group = "g";
  EXPECT_EQ(code_of([&] { b.join_group("orders", "push", "B", calls.of("B"), named); }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { b.join_group("orders", "push", "B", group_options(Assignor::kRange)); }),
            ErrorCode::kWrongKind);
  EXPECT_EQ(code_of([&] {
              b.join_group("orders", "pull", "B", calls.of("B"), push_options(Assignor::kRange));
            }),
            ErrorCode::kWrongKind);
  GroupOptions other = push_options(Assignor::kRange);
  other.push.max_deliveries = 2;
  EXPECT_EQ(code_of([&] { b.join_group("orders", "push", "B", calls.of("B"), other); }),
            ErrorCode::kOptionsMismatch);
  EXPECT_EQ(code_of([&] { (void)b.poll_group("orders", "push", "A", 1, Time{}); }),
            ErrorCode::kWrongKind);
  EXPECT_EQ(code_of([&] { b.subscribe(p0, "push", calls.of("X"), testing::Push()); }),
            ErrorCode::kDuplicateSubscription);
  EXPECT_EQ(code_of([&] { b.unsubscribe(p0, "push"); }), ErrorCode::kWrongKind);
  EXPECT_EQ(code_of([&] { b.subscribe_pull(p0, "push", {}); }), ErrorCode::kWrongKind);
  // A live push subscription of the name on a partition: a new group cannot take it.
  b.subscribe(p0, "taken", calls.of("X"), testing::Push());
  EXPECT_EQ(code_of([&] {
              b.join_group("orders", "taken", "A", calls.of("A"), push_options(Assignor::kRange));
            }),
            ErrorCode::kDuplicateSubscription);
  EXPECT_EQ(b.group_stats("orders", "push"), before);
  EXPECT_EQ(code_of([&] { (void)b.group_stats("orders", "taken"); }),
            ErrorCode::kUnknownSubscription);
}

// A restart leaves the group's push subscriptions without handler (R20); the first join
// adopts them, with the position they saved.
TEST(PushConsumerGroups, ADurablePushGroupRejoinsWhereItsPositionsStood) {
  testing::TempDir dir;
  {
    Broker b(testing::durable_in(dir));
    b.create_topic("orders", partitioned(2));
    Calls calls;
    b.join_group("orders", "billing", "A", calls.of("A"), push_options(Assignor::kRange));
    b.publish_to("orders", 0, "done");
    EXPECT_EQ(b.drain(), 1u);
  }
  Broker b(testing::durable_in(dir));
  b.publish_to("orders", 0, "new");
  Calls calls;
  EXPECT_EQ(b.join_group("orders", "billing", "B", calls.of("B"), push_options(Assignor::kRange)),
            (Membership{1, {0, 1}}));
  EXPECT_EQ(b.drain(), 1u);
  std::lock_guard<std::mutex> lock(calls.mu);
  ASSERT_EQ(calls.seen.size(), 1u);
  EXPECT_EQ(std::get<2>(calls.seen[0]), "new");
}

}  // namespace
}  // namespace broker
