// The linearizability checker itself, on hand-written histories: what it must accept, what
// it must reject, and that memoization changes the work but never the verdict.
#include "linearizability.h"

#include <gtest/gtest.h>

namespace fiberprop {
namespace {

using Kind = PullOp::Kind;

PullOp poll(int member, std::int64_t now, int max = 1) {
  return {Kind::kPoll, 0, member, 0, now, max, 0};
}
PullOp ack(int member, std::uint64_t offset, std::int64_t now) {
  return {Kind::kAck, 0, member, offset, now, 0, 0};
}
PullOp expire(std::int64_t now) { return {Kind::kExpire, 0, 0, 0, now, 0, 0}; }

// create_topic, subscribe_pull(p0, ack_timeout=10, no delivery limit), then `messages` publishes.
std::vector<Call> prefix(int messages) {
  std::vector<Call> out = {{{Kind::kCreateTopic}, -1, 0, 0, "ok"},
                           {{Kind::kSubscribePull, 0, 0, 0, 0, 10, 0}, -1, 0, 0, "ok"}};
  for (int i = 0; i < messages; ++i) out.push_back({{Kind::kPublish}, -1, 0, 0, std::to_string(i)});
  return out;
}

TEST(LinearizabilityChecker, OverlappingPollsMayTakeOffsetsInEitherOrder) {
  // b0's poll got offset 1 although it was invoked first: fine, the calls overlap.
  ParallelHistory h{prefix(2),
                    {{poll(0, 0), 0, 1, 4, "[1#1@10]"}, {poll(1, 0), 1, 2, 3, "[0#1@10]"}}};
  const LinearizabilityResult r = check_linearizable(h);
  EXPECT_TRUE(r.ok) << describe(h, r);
  ASSERT_EQ(r.order.size(), 2u);
  EXPECT_EQ(r.order[0], 1u) << "b1's poll must be linearized first";
}

TEST(LinearizabilityChecker, RealTimeOrderIsRespected) {
  // Same results, but b0's poll returned before b1's was invoked: b0 must have got offset 0.
  ParallelHistory h{prefix(2),
                    {{poll(0, 0), 0, 1, 2, "[1#1@10]"}, {poll(1, 0), 1, 3, 4, "[0#1@10]"}}};
  const LinearizabilityResult r = check_linearizable(h);
  EXPECT_FALSE(r.ok);
  const std::string text = describe(h, r);
  EXPECT_NE(text.find("NOT linearizable"), std::string::npos) << text;
  EXPECT_NE(text.find("b0.0 [1..2] poll(p0, m0, now=0, max=1) -> [1#1@10]"), std::string::npos)
      << text;
  EXPECT_NE(text.find("the model says [0#1@10]"), std::string::npos) << text;
}

TEST(LinearizabilityChecker, R11OneMessageHeldByTwoMembersIsRejected) {
  ParallelHistory h{prefix(1),
                    {{poll(0, 0), 0, 1, 4, "[0#1@10]"}, {poll(1, 0), 1, 2, 3, "[0#1@10]"}}};
  EXPECT_FALSE(check_linearizable(h).ok);
}

TEST(LinearizabilityChecker, R11AckByAnotherMemberIsRejected) {
  ParallelHistory h{prefix(1),
                    {{poll(0, 0), 0, 1, 2, "[0#1@10]"}, {ack(1, 0, 5), 1, 3, 4, "true"}}};
  EXPECT_FALSE(check_linearizable(h).ok);
  h.calls[1] = {ack(0, 0, 5), 1, 3, 4, "true"};
  EXPECT_TRUE(check_linearizable(h).ok) << "the holder's ack before the deadline is accepted";
}

TEST(LinearizabilityChecker, R11AckRacingExpireAtTheDeadlineHasTwoValidOutcomes) {
  // poll at 0 (deadline 10), then concurrently ack at 9 and expire at 10.
  ParallelHistory acked{prefix(1),
                        {{poll(0, 0), 0, 1, 2, "[0#1@10]"},
                         {ack(0, 0, 9), 0, 3, 6, "true"},
                         {expire(10), 1, 4, 5, "[]"}}};
  EXPECT_TRUE(check_linearizable(acked).ok);
  ParallelHistory expired = acked;
  expired.calls[1].result = "false";
  expired.calls[2].result = "[p0:0]";
  EXPECT_TRUE(check_linearizable(expired).ok);
  ParallelHistory both = acked;  // acked and expired: one message confirmed and failed
  both.calls[2].result = "[p0:0]";
  EXPECT_FALSE(check_linearizable(both).ok);
}

TEST(LinearizabilityChecker, PrefixThatDisagreesWithTheModelIsReported) {
  ParallelHistory h{prefix(1), {}};
  h.prefix.back().result = "7";
  const LinearizabilityResult r = check_linearizable(h);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.prefix_mismatch.find("recorded 7, the model says 0"), std::string::npos);
}

TEST(LinearizabilityChecker, MemoizationPrunesEqualStatesWithoutChangingTheVerdict) {
  // Three branches of four no-op expires, and one ack no order can explain: without
  // memoization every interleaving is tried; with it each (done set, state) once.
  ParallelHistory h{prefix(1), {}};
  std::uint64_t tick = 1;
  for (int b = 0; b < 3; ++b)
    for (int k = 0; k < 4; ++k)
      h.calls.push_back({expire(0), b, tick + k * 10, tick + k * 10 + 9, "[]"});
  h.calls.push_back({ack(0, 0, 0), 3, 1, 100, "true"});
  const LinearizabilityResult with = check_linearizable(h, true);
  const LinearizabilityResult without = check_linearizable(h, false);
  EXPECT_FALSE(with.ok);
  EXPECT_FALSE(without.ok);
  EXPECT_LT(with.states * 3, without.states)
      << "memoized " << with.states << " states, plain " << without.states;
}

}  // namespace
}  // namespace fiberprop
