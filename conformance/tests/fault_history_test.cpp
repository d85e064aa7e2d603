// The fault checker on hand-made histories: each anomaly found by name, and a clean
// at-least-once history (nacks, timeouts, refused acks, indeterminate publishes) found clean.
#include "conformance/fault_history.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace conformance {
namespace {

using Kind = FaultEvent::Kind;

FaultEvent pub(const std::string& v, PublishResult r = PublishResult::kOk) {
  FaultEvent e;
  e.kind = Kind::kPublish;
  e.value = v;
  e.result = r;
  return e;
}
FaultEvent got(const std::string& v, const std::string& consumer, std::size_t poll,
               const std::string& id = "") {
  FaultEvent e;
  e.kind = Kind::kDeliver;
  e.value = v;
  e.consumer = consumer;
  e.poll = poll;
  e.id = id.empty() ? v.substr(1) : id;
  return e;
}
FaultEvent ack(const std::string& v, const std::string& consumer, bool accepted = true) {
  FaultEvent e;
  e.kind = Kind::kAck;
  e.value = v;
  e.consumer = consumer;
  e.id = v.substr(1);
  e.accepted = accepted;
  return e;
}

// A hand-out of v to c1 in `poll` at delivery count `attempt`, while the server had been
// down `epoch` times.
FaultEvent got_at(const std::string& v, std::size_t poll, int attempt, std::size_t epoch = 0) {
  FaultEvent e = got(v, "c1", poll);
  e.attempt = attempt;
  e.epoch = epoch;
  return e;
}

// h ended as a run ends: the drain acks, accepted, every value it was ever handed.
std::vector<FaultEvent> drained(std::vector<FaultEvent> h) {
  std::vector<std::string> handed;
  for (const FaultEvent& e : h) {
    if (e.kind == Kind::kDeliver) handed.push_back(e.value);
  }
  for (const std::string& v : handed) h.push_back(ack(v, "drain"));
  return h;
}

// Only `name` is seen, with exactly `values` (in h as a drain ends it, unless `name` is
// about what a drain acks).
void expect_only(const std::vector<FaultEvent>& h, const std::string& name,
                 const std::vector<std::string>& values) {
  const auto found = check_fault_history(name == "lost-unacked" ? h : drained(h));
  for (const std::string& n : anomaly_names()) {
    ASSERT_TRUE(found.contains(n)) << n;
    if (n == name) {
      EXPECT_EQ(found.at(n), values) << n;
    } else {
      EXPECT_TRUE(found.at(n).empty()) << n << " also seen";
    }
  }
}

TEST(FaultHistory, AtLeastOnceWithNacksTimeoutsAndUnknownPublishesIsClean) {
  const std::vector<FaultEvent> h = {
      pub("v0"),
      pub("v1", PublishResult::kIndeterminate),  // never seen: allowed
      pub("v2", PublishResult::kIndeterminate),  // seen: allowed
      pub("v3", PublishResult::kFailed),         // never seen: right
      got("v0", "c1", 1),
      got("v2", "c1", 1),
      ack("v0", "c1", false),  // refused: it may come back
      got("v0", "c2", 2),      // redelivered after the refusal (or a timeout)
      ack("v0", "c2"),
      ack("v2", "c1"),
  };
  for (const auto& [name, values] : check_fault_history(h)) {
    EXPECT_TRUE(values.empty()) << name;
  }
}

TEST(FaultHistory, LostIsAnOkPublishNeverDelivered) {
  expect_only({pub("v0"), pub("v1"), got("v0", "c1", 1), ack("v0", "c1")}, "lost", {"v1"});
}

// A value handed out must be acked before the end: one never acked and never handed out
// again was dropped. An ack the engine left unanswered may have happened (no anomaly); a
// refused one did not.
TEST(FaultHistory, LostUnackedIsAValueHandedOutThatNeverCameBackForItsAck) {
  FaultEvent unanswered = ack("v1", "c1");
  unanswered.kind = Kind::kAckFailed;
  expect_only({pub("v0"), pub("v1"), pub("v2"), got("v0", "c1", 1), got("v1", "c1", 1),
               got("v2", "c1", 1), ack("v0", "c1"), unanswered, ack("v2", "c1", false)},
              "lost-unacked", {"v2"});
}

TEST(FaultHistory, UnexpectedIsAValueNeverPublishedOrDefinitelyFailed) {
  expect_only({pub("v0"), pub("v1", PublishResult::kFailed), got("v0", "c1", 1), got("v1", "c1", 1),
               got("v9", "c1", 1), got("junk", "c1", 1, "7")},
              "unexpected", {"v1", "v9", "junk"});
}

TEST(FaultHistory, DuplicatedIsOneValueStoredTwice) {
  // v0 under a second id (and never acked, so it is no ack coming back).
  expect_only({pub("v0"), got("v0", "c1", 1, "0"), pub("v1"), got("v1", "c1", 2, "1"),
               got("v0", "c2", 3, "2")},
              "duplicated", {"v0"});
}

TEST(FaultHistory, AckedCameBackIsADeliveryAfterAnAcceptedAck) {
  // v0 is never acked, so v1 is above the floor: a position-saving engine may do this.
  expect_only({pub("v0"), pub("v1"), got("v0", "c1", 1), got("v1", "c1", 1), ack("v1", "c1"),
               got("v0", "c2", 2), got("v1", "c2", 2), ack("v0", "c2")},
              "acked-came-back", {"v1"});
}

TEST(FaultHistory, FloorCameBackIsAnAckedValueBackWithEverythingBeforeItAcked) {
  const auto found = check_fault_history(
      {pub("v0"), pub("v1"), pub("v2"), got("v0", "c1", 1), got("v1", "c1", 1), got("v2", "c1", 1),
       ack("v1", "c1"), ack("v0", "c1"), got("v1", "c2", 2), got("v2", "c2", 2), ack("v2", "c2")});
  EXPECT_EQ(found.at("acked-came-back"), std::vector<std::string>{"v1"});
  EXPECT_EQ(found.at("floor-came-back"), std::vector<std::string>{"v1"});
}

// The floor stops at an id it never saw acked (a gap, or one a failed poll handed out
// unseen), and is not judged at all when the engine's ids are not numbers.
TEST(FaultHistory, TheFloorStopsAtAGapAndNeedsNumericIds) {
  const auto gap = check_fault_history({pub("v0"), pub("v1"), pub("v2"), got("v0", "c1", 1, "0"),
                                        got("v2", "c1", 2, "2"), ack("v0", "c1"), ack("v2", "c1"),
                                        got("v2", "c2", 3, "2"), got("v1", "c2", 3, "1")});
  EXPECT_EQ(gap.at("acked-came-back"), std::vector<std::string>{"v2"});
  EXPECT_TRUE(gap.at("floor-came-back").empty());
  // v1's ack before a crash is undone when v1 comes back above the floor: acking v0 then
  // moves the floor to v1, not past it, and v2 may come back.
  const auto undone = check_fault_history(
      {pub("v0"), pub("v1"), pub("v2"), got("v0", "c1", 1), got("v1", "c1", 1), ack("v1", "c1"),
       got("v0", "c1", 2), got("v1", "c1", 2), ack("v0", "c1"), got("v2", "c1", 3), ack("v2", "c1"),
       got("v2", "c2", 4), got("v1", "c2", 4), ack("v1", "c2"), ack("v2", "c2")});
  EXPECT_EQ(undone.at("acked-came-back"), (std::vector<std::string>{"v1", "v2"}));
  EXPECT_TRUE(undone.at("floor-came-back").empty());
  // v1's ack (epoch 0) died with the server; after it v0 is acked (epoch 1), and v1 coming
  // back is above the floor. Without the restart between them the floor passes v1.
  std::vector<FaultEvent> restart = {pub("v0"),          pub("v1"),          got("v0", "c1", 1),
                                     got("v1", "c1", 1), ack("v1", "c1"),    got("v0", "c1", 2),
                                     ack("v0", "c1"),    got("v1", "c1", 3), ack("v1", "c1")};
  for (std::size_t i = 5; i < restart.size(); ++i) restart[i].epoch = 1;
  EXPECT_TRUE(check_fault_history(restart).at("floor-came-back").empty());
  for (FaultEvent& e : restart) e.epoch = 0;
  EXPECT_EQ(check_fault_history(restart).at("floor-came-back"), std::vector<std::string>{"v1"});
  const auto named = check_fault_history(
      {pub("v0"), got("v0", "c1", 1, "1-0"), ack("v0", "c1"), got("v0", "c2", 2, "1-0")});
  EXPECT_EQ(named.at("acked-came-back"), std::vector<std::string>{"v0"});
  EXPECT_TRUE(named.at("floor-came-back").empty());
}

TEST(FaultHistory, NonmonotonicIsAConsumersFirstDeliveriesGoingBackwards) {
  // v1 is handed out before v0 by another poll of the same consumer; v0 was published
  // with an unknown outcome, so it is no poll-skip.
  expect_only(
      {pub("v0", PublishResult::kIndeterminate), pub("v1"), got("v1", "c1", 1), got("v0", "c1", 2)},
      "nonmonotonic", {"v0"});
}

TEST(FaultHistory, PollSkipIsALaterValueFirstWhileAnEarlierOkOneWaits) {
  // v1 (ok before the poll) is skipped by c1's poll of v2, and only c2 gets it later.
  expect_only(
      {pub("v0"), pub("v1"), pub("v2"), got("v0", "c1", 1), got("v2", "c1", 2), got("v1", "c2", 3)},
      "poll-skip", {"v1"});
}

// A poll the engine failed may have handed v1 to c1 unseen: v1 back after its deadline is
// at-least-once, neither a skip nor out of order. Without the failed poll, both.
TEST(FaultHistory, AFailedPollExcusesWhatItMayHaveHandedOut) {
  FaultEvent failed;
  failed.kind = Kind::kPollFailed;
  failed.consumer = "c1";
  const std::vector<FaultEvent> with = {pub("v0"), pub("v1"),          got("v0", "c1", 1), failed,
                                        pub("v2"), got("v2", "c1", 2), got("v1", "c1", 3)};
  for (const auto& [name, values] : check_fault_history(drained(with))) {
    EXPECT_TRUE(values.empty()) << name;
  }
  std::vector<FaultEvent> without = with;
  without.erase(without.begin() + 3);
  const auto found = check_fault_history(without);
  EXPECT_EQ(found.at("poll-skip"), std::vector<std::string>{"v1"});
  EXPECT_EQ(found.at("nonmonotonic"), std::vector<std::string>{"v1"});
}

TEST(FaultHistory, APublishAfterThePollBeganIsNoSkip) {
  const auto found =
      check_fault_history({pub("v0"), got("v0", "c1", 1), pub("v1", PublishResult::kIndeterminate),
                           pub("v2"), got("v2", "c1", 2), got("v1", "c2", 3)});
  EXPECT_TRUE(found.at("poll-skip").empty());
  EXPECT_TRUE(found.at("lost").empty());
}

// Each hand-out of a value counts above its last (R6); a count may jump (a failed poll may
// have handed it out unseen), never stay or go back.
TEST(FaultHistory, AttemptsWentBackIsAHandOutCountedAtOrBelowAnEarlierOne) {
  expect_only({pub("v0"), pub("v1"), got_at("v0", 1, 1), got_at("v1", 1, 1), got_at("v0", 2, 2),
               got_at("v1", 2, 1), got_at("v0", 3, 4)},
              "attempts-went-back", {"v1"});
  // Two stored copies count apart: that is duplicated, not a count gone back.
  FaultEvent copy = got_at("v0", 2, 1);
  copy.id = "5";
  expect_only({pub("v0"), got_at("v0", 1, 1), copy}, "duplicated", {"v0"});
}

// Across a restart (a higher epoch) counts are judged only where the engine keeps attempts
// (R34); without that a restart may lose what no commit saved (R19). A settled message's
// count is not judged, nor a count the engine does not say (0).
TEST(FaultHistory, AttemptsAreJudgedAcrossARestartOnlyWhereTheyAreKept) {
  const std::vector<FaultEvent> h =
      drained({pub("v0"), got_at("v0", 1, 1), got_at("v0", 2, 2), got_at("v0", 3, 2, 1)});
  EXPECT_TRUE(check_fault_history(h).at("attempts-went-back").empty());
  std::size_t across = 0;
  EXPECT_EQ(check_fault_history(h, AttemptsKept::kDurable, &across).at("attempts-went-back"),
            std::vector<std::string>{"v0"});
  EXPECT_EQ(across, 1u);
  // A settled message takes its count with it: brought back by a restart (acked-came-back,
  // here also after an ack the fault left unanswered), it counts anew.
  FaultEvent unanswered = ack("v1", "c1");
  unanswered.kind = Kind::kAckFailed;
  const std::vector<FaultEvent> settled =
      drained({pub("v0"), pub("v1"), got_at("v0", 1, 2), got_at("v1", 1, 2), ack("v0", "c1"),
               unanswered, got_at("v0", 2, 1, 1), got_at("v1", 2, 1, 1)});
  EXPECT_TRUE(
      check_fault_history(settled, AttemptsKept::kDurable).at("attempts-went-back").empty());
  const std::vector<FaultEvent> unsaid =
      drained({pub("v0"), got_at("v0", 1, 0), got_at("v0", 2, 0)});
  EXPECT_TRUE(check_fault_history(unsaid, AttemptsKept::kDurable).at("attempts-went-back").empty());
}

TEST(FaultHistory, EveryNameIsReportedEvenWhenNothingIsSeen) {
  const auto found = check_fault_history({});
  EXPECT_EQ(found.size(), anomaly_names().size());
}

}  // namespace
}  // namespace conformance
