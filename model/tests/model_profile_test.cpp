// The model under engine profiles (conformance kit, SPEC "Conformance"): each switch
// changes exactly its rule, and all off is SPEC.md.
#include <gtest/gtest.h>

#include "model/model.h"

namespace model {
namespace {

Model with(Profile p) {
  Model m(p);
  m.create_topic("t");
  m.subscribe_pull("t", "p",
                   {.ack_timeout = 10, .max_deliveries = 0, .start = {Start::Kind::kBeginning, 0}});
  for (const char* payload : {"a", "b", "c"}) m.publish("t", payload);
  return m;
}

TEST(ModelProfile, StrictRefusesALateAckAndRedeliversLowestOffsetFirst) {
  Model m = with({});
  ASSERT_EQ(m.poll("t", "p", "w", 0, 2).size(), 2u);
  EXPECT_TRUE(m.nack("t", "p", 1, "w", 0));
  m.expire(20);
  EXPECT_FALSE(m.ack("t", "p", 0, "w", 20));
  const std::vector<Received> again = m.poll("t", "p", "w", 20, 3);
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(again[0].offset, 0u);
  EXPECT_EQ(again[1].offset, 1u);
  EXPECT_EQ(again[2].offset, 2u);
}

TEST(ModelProfile, LateAckAcceptedSettlesAReturnedMessageOfItsLastHolderOnly) {
  Model m = with({.late_ack_accepted = true});
  ASSERT_EQ(m.poll("t", "p", "w", 0, 2).size(), 2u);
  m.expire(20);
  EXPECT_FALSE(m.ack("t", "p", 0, "other", 20));  // not its holder
  EXPECT_TRUE(m.ack("t", "p", 0, "w", 20));       // late, not offered since: settled
  EXPECT_TRUE(m.nack("t", "p", 1, "w", 20));      // late nack: stays returned
  const std::vector<Received> again = m.poll("t", "p", "v", 20, 3);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].offset, 1u);
  EXPECT_EQ(again[0].attempt, 2);
  EXPECT_FALSE(m.ack("t", "p", 1, "w", 20));  // offered again to v: w's delivery is gone
  EXPECT_EQ(m.stats("t", "p").confirmed, 1u);
  EXPECT_TRUE(m.nack("t", "p", 1, "v", 20));
  EXPECT_FALSE(m.ack("t", "p", 1, "v", 20));  // v gave it back: a nack is not a late answer
}

TEST(ModelProfile, RedeliveryInReturnOrderOffersWhatCameBackFirstFirst) {
  Model m = with({.redelivery_in_return_order = true});
  ASSERT_EQ(m.poll("t", "p", "w", 0, 3).size(), 3u);
  EXPECT_TRUE(m.nack("t", "p", 2, "w", 0));
  EXPECT_TRUE(m.nack("t", "p", 0, "w", 0));
  m.expire(20);  // offset 1 comes back last
  const std::vector<Received> again = m.poll("t", "p", "w", 20, 3);
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(again[0].offset, 2u);
  EXPECT_EQ(again[1].offset, 0u);
  EXPECT_EQ(again[2].offset, 1u);
}

// A delayed nack comes back when its wait ends: after an expiry whose deadline was earlier,
// though the nack came first; before one whose deadline was later.
TEST(ModelProfile, RedeliveryInReturnOrderPutsADelayedNackWhereItsWaitEnds) {
  Model m = with({.redelivery_in_return_order = true});
  ASSERT_EQ(m.poll("t", "p", "w", 0, 1).size(), 1u);  // 0: deadline 10
  EXPECT_TRUE(m.nack("t", "p", 0, "w", 0, 15));       // 0 waits until 15
  ASSERT_EQ(m.poll("t", "p", "w", 2, 1).size(), 1u);  // 1: deadline 12
  ASSERT_EQ(m.poll("t", "p", "w", 8, 1).size(), 1u);  // 2: deadline 18
  m.expire(30);
  const std::vector<Received> again = m.poll("t", "p", "w", 30, 3);
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(again[0].offset, 1u);  // back at 12
  EXPECT_EQ(again[1].offset, 0u);  // at 15
  EXPECT_EQ(again[2].offset, 2u);  // at 18
}

TEST(ModelProfile, RedeliveryInReturnOrderExpiresInDeadlineOrder) {
  Model m = with({.redelivery_in_return_order = true});
  ASSERT_EQ(m.poll("t", "p", "w", 0, 2).size(), 2u);  // offsets 0, 1, deadline 10
  EXPECT_TRUE(m.nack("t", "p", 0, "w", 0));
  m.advance(5);
  ASSERT_EQ(m.poll("t", "p", "w", 5, 1)[0].offset, 0u);  // deadline 15
  m.expire(20);                                          // 1 passed its deadline first
  const std::vector<Received> again = m.poll("t", "p", "w", 20, 3);
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(again[0].offset, 1u);
  EXPECT_EQ(again[1].offset, 0u);
  EXPECT_EQ(again[2].offset, 2u);
}

// Equal deadlines come back lowest offset first, whatever order they were handed out in
// (JetStream sorts what one pass of its ack-wait timer finds; seen with seed 43).
TEST(ModelProfile, RedeliveryInReturnOrderBreaksEqualDeadlinesByOffset) {
  Model m = with({.redelivery_in_return_order = true});
  ASSERT_EQ(m.poll("t", "p", "w", 0, 2).size(), 2u);
  EXPECT_TRUE(m.nack("t", "p", 1, "w", 0));
  EXPECT_TRUE(m.nack("t", "p", 0, "w", 0));
  const std::vector<Received> handed = m.poll("t", "p", "w", 0, 2);  // 1, then 0
  ASSERT_EQ(handed.size(), 2u);
  ASSERT_EQ(handed[0].offset, 1u);
  const std::vector<Expired> expired = m.expire(20);
  ASSERT_EQ(expired.size(), 2u);
  EXPECT_EQ(expired[0].offset, 0u);
  EXPECT_EQ(expired[1].offset, 1u);
  const std::vector<Received> again = m.poll("t", "p", "w", 20, 2);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].offset, 0u);
  EXPECT_EQ(again[1].offset, 1u);
}

TEST(ModelProfile, DeadLetterWhenOfferedAgainWaitsForThePoll) {
  Model m(Profile{.dead_letter_when_offered_again = true});
  m.create_topic("t");
  m.subscribe_pull("t", "p",
                   {.ack_timeout = 10, .max_deliveries = 1, .start = {Start::Kind::kBeginning, 0}});
  m.publish("t", "a");
  m.publish("t", "b");
  ASSERT_EQ(m.poll("t", "p", "w", 0, 1).size(), 1u);
  EXPECT_TRUE(m.nack("t", "p", 0, "w", 0));
  EXPECT_TRUE(m.dead_letters("t", "p").empty());  // not yet: it has not come round again
  const std::vector<Received> next = m.poll("t", "p", "w", 0, 2);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].offset, 1u);
  ASSERT_EQ(m.dead_letters("t", "p").size(), 1u);
  EXPECT_EQ(m.dead_letters("t", "p")[0].attempts, 1);
}

// A push engine offers the next message at once, so "offered again" is at the failure: the
// switch leaves a push subscription's dead letter where the contract puts it.
TEST(ModelProfile, DeadLetterWhenOfferedAgainLeavesPushAtTheFailure) {
  Model m(Profile{.dead_letter_when_offered_again = true});
  m.create_topic("t");
  m.subscribe("t", "h",
              {.max_deliveries = 1,
               .start = {Start::Kind::kBeginning, 0},
               .script = {Step{.verdict = Verdict::kReject}}});
  m.publish("t", "a");
  m.publish("t", "b");
  EXPECT_EQ(m.drain(), 0u);
  ASSERT_EQ(m.dead_letters("t", "h").size(), 1u);
  EXPECT_EQ(m.dead_letters("t", "h")[0].offset, 0u);
  EXPECT_EQ(m.dead_letters("t", "h")[0].attempts, 1);
  EXPECT_EQ(m.drain(), 1u);  // b, never a again
}

// Without the switch a held message keeps its body though retention dropped it (R3); with
// it, only its offset, until the next poll forgets it: its dead letter has no payload,
// headers or key, an extend or a poll forgets it (counted in skipped), and an ack before
// that still settles it.
TEST(ModelProfile, TrimmedHeldKeepsOnlyItsOffset) {
  for (const bool on : {false, true}) {
    SCOPED_TRACE(on ? "switch on" : "strict");
    Model m(Profile{.trimmed_held_keeps_only_its_offset = on});
    m.create_topic("t", 1, 0);
    m.subscribe_pull("t", "p", {.ack_timeout = 10, .max_deliveries = 1});
    m.publish("t", "a", {{"h", "v"}});
    ASSERT_EQ(m.poll("t", "p", "w", 0, 1).size(), 1u);
    m.publish("t", "b");  // a is held and dropped
    EXPECT_TRUE(m.nack("t", "p", 0, "w", 1));
    ASSERT_EQ(m.dead_letters("t", "p").size(), 1u);
    const DeadLetter dead = m.dead_letters("t", "p")[0];
    EXPECT_EQ(dead.payload, on ? "" : "a");
    EXPECT_EQ(dead.headers.empty(), on);
    ASSERT_EQ(m.poll("t", "p", "w", 1, 1).size(), 1u);  // b
    m.publish("t", "c");
    EXPECT_TRUE(m.extend("t", "p", 1, "w", 2, 10));
    EXPECT_EQ(static_cast<bool>(m.ack("t", "p", 1, "w", 3)), !on);
    ASSERT_EQ(m.poll("t", "p", "w", 3, 1).size(), 1u);  // c
    m.publish("t", "d");
    EXPECT_TRUE(m.ack("t", "p", 2, "w", 3));  // before a poll, an ack settles it either way
    ASSERT_EQ(m.poll("t", "p", "w", 3, 1).size(), 1u);  // d
    m.publish("t", "e");
    ASSERT_EQ(m.poll("t", "p", "w2", 3, 1).size(), 1u);  // e; under the switch d is forgotten
    EXPECT_EQ(static_cast<bool>(m.ack("t", "p", 3, "w", 4)), !on);
    EXPECT_EQ(m.stats("t", "p").skipped, on ? 2u : 0u);
  }
}

// ack_after_nack_settles: the member that nacked settles it by an ack (or a term) until it
// is offered again; a second nack is still refused; strictly the ack is refused.
TEST(ModelProfile, AckAfterNackSettlesUntilOfferedAgain) {
  Model strict = with({});
  ASSERT_EQ(strict.poll("t", "p", "w", 0, 1).size(), 1u);
  EXPECT_TRUE(strict.nack("t", "p", 0, "w", 0));
  EXPECT_FALSE(strict.ack("t", "p", 0, "w", 0));

  Model m = with({.ack_after_nack_settles = true});
  ASSERT_EQ(m.poll("t", "p", "w", 0, 2).size(), 2u);
  EXPECT_TRUE(m.nack("t", "p", 0, "w", 0));
  EXPECT_FALSE(m.nack("t", "p", 0, "w", 0));
  EXPECT_FALSE(m.ack("t", "p", 0, "other", 0));
  EXPECT_TRUE(m.ack("t", "p", 0, "w", 0));  // settled: never offered again
  EXPECT_TRUE(m.nack("t", "p", 1, "w", 0));
  EXPECT_TRUE(m.term("t", "p", 1, "w", 0));  // a term settles it too, as a dead letter
  ASSERT_EQ(m.dead_letters("t", "p").size(), 1u);
  EXPECT_EQ(m.dead_letters("t", "p")[0].offset, 1u);
  const std::vector<Received> next = m.poll("t", "p", "w", 0, 3);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].offset, 2u);
  EXPECT_TRUE(m.nack("t", "p", 2, "w", 0));
  ASSERT_EQ(m.poll("t", "p", "v", 0, 1).size(), 1u);  // offered again: w's nack is spent
  EXPECT_FALSE(m.ack("t", "p", 2, "w", 0));
}

// late_ack_by_previous_holder: after a message was offered to v, w (given it before) still
// acks, nacks, terms or extends it; a member never given it cannot.
TEST(ModelProfile, LateAckByPreviousHolderAppliesToTheMessageWhoeverHoldsIt) {
  Model m = with({.late_ack_by_previous_holder = true});
  ASSERT_EQ(m.poll("t", "p", "w", 0, 3).size(), 3u);
  m.expire(20);
  ASSERT_EQ(m.poll("t", "p", "v", 20, 3).size(), 3u);  // all three, now v's (deadline 30)
  EXPECT_FALSE(m.ack("t", "p", 0, "x", 20));           // never given it
  EXPECT_TRUE(m.ack("t", "p", 0, "w", 20));            // settles v's hold
  EXPECT_FALSE(m.ack("t", "p", 0, "v", 20));           // gone
  EXPECT_TRUE(m.extend("t", "p", 1, "w", 25, 10));     // moves v's deadline to 35
  EXPECT_TRUE(m.nack("t", "p", 2, "w", 25));           // takes it back from v
  EXPECT_TRUE(m.term("t", "p", 1, "w", 26));           // dead, with w's attempt
  const std::vector<DeadLetter> dead = m.dead_letters("t", "p");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].offset, 1u);
  EXPECT_EQ(dead[0].attempts, 1);
  const std::vector<Received> again = m.poll("t", "p", "x", 26, 3);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].offset, 2u);
  EXPECT_EQ(again[0].attempt, 3);
}

// acks_always_confirmed: every answer from a member the message was given to is true,
// whatever it did; one never given it is still false. Strictly a second ack is false.
TEST(ModelProfile, AcksAlwaysConfirmedAnswersEveryoneItWasGivenTo) {
  Model strict = with({});
  ASSERT_EQ(strict.poll("t", "p", "w", 0, 1).size(), 1u);
  EXPECT_TRUE(strict.ack("t", "p", 0, "w", 0));
  EXPECT_FALSE(strict.ack("t", "p", 0, "w", 0));

  Model m = with({.acks_always_confirmed = true});
  ASSERT_EQ(m.poll("t", "p", "w", 0, 2).size(), 2u);
  EXPECT_TRUE(m.ack("t", "p", 0, "w", 0));
  EXPECT_TRUE(m.ack("t", "p", 0, "w", 0));
  EXPECT_TRUE(m.nack("t", "p", 0, "w", 0));
  EXPECT_TRUE(m.term("t", "p", 0, "w", 0));
  EXPECT_TRUE(m.extend("t", "p", 0, "w", 0, 10));
  EXPECT_FALSE(m.ack("t", "p", 0, "v", 0));
  EXPECT_FALSE(m.ack("t", "p", 2, "w", 0));
  EXPECT_TRUE(m.dead_letters("t", "p").empty());  // none of those changed anything
  EXPECT_EQ(m.stats("t", "p").confirmed, 1u);
}

// term_always_announced: a term after an ack, and a second term, are each a dead letter.
TEST(ModelProfile, TermAlwaysAnnouncedDeadLettersEveryTerm) {
  Model m = with({.term_always_announced = true});
  ASSERT_EQ(m.poll("t", "p", "w", 0, 1).size(), 1u);
  EXPECT_TRUE(m.ack("t", "p", 0, "w", 0));
  EXPECT_TRUE(m.term("t", "p", 0, "w", 0));
  EXPECT_TRUE(m.term("t", "p", 0, "w", 0));
  EXPECT_FALSE(m.term("t", "p", 0, "v", 0));  // never given it
  const std::vector<DeadLetter> dead = m.dead_letters("t", "p");
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_EQ(dead[0].payload, "a");
  EXPECT_EQ(dead[0].reason, "terminated");
  EXPECT_EQ(dead[1].attempts, 1);
}

// retention_terminates_held: a publish that drops a held and a returned message makes each a
// dead letter at once, with its body; neither is offered again, and the holder's ack is
// refused. Strictly the holder keeps its message alive (R3).
TEST(ModelProfile, RetentionTerminatesHeldAndReturnedMessages) {
  for (const bool on : {false, true}) {
    Model m(Profile{.retention_terminates_held = on});
    m.create_topic("t", 2);
    m.subscribe_pull("t", "p", {.ack_timeout = 10, .start = {Start::Kind::kBeginning, 0}});
    m.publish("t", "a");
    m.publish("t", "b");
    ASSERT_EQ(m.poll("t", "p", "w", 0, 2).size(), 2u);
    EXPECT_TRUE(m.nack("t", "p", 1, "w", 0));
    m.publish("t", "c");
    m.publish("t", "d");  // drops a (held) and b (returned)
    const std::vector<DeadLetter> dead = m.dead_letters("t", "p");
    if (!on) {
      EXPECT_TRUE(dead.empty());
      EXPECT_TRUE(m.ack("t", "p", 0, "w", 0));
      continue;
    }
    ASSERT_EQ(dead.size(), 2u);
    EXPECT_EQ(dead[0].offset, 0u);
    EXPECT_EQ(dead[0].payload, "a");
    EXPECT_EQ(dead[0].reason, "terminated");
    EXPECT_EQ(dead[1].offset, 1u);
    EXPECT_EQ(dead[1].payload, "b");
    EXPECT_FALSE(m.ack("t", "p", 0, "w", 0));
    const std::vector<Received> next = m.poll("t", "p", "w", 0, 4);
    ASSERT_EQ(next.size(), 2u);
    EXPECT_EQ(next[0].offset, 2u);
  }
}

// seek_moves_only_the_cursor: a seek back keeps the held message held by its member (its
// ack still settles it) and the returned one returned; the cursor reaching a message still
// held hands it out anew, attempt 1, to the poller. Strictly the seek forgets both, and the
// holder's ack is refused. Both after a seek forget whom a message was given to.
TEST(ModelProfile, SeekMovesOnlyTheCursorKeepsWhatIsHeldAndHandsItOutAnew) {
  for (const bool on : {false, true}) {
    Model m(Profile{.seek_moves_only_the_cursor = on});
    m.create_topic("t");
    m.subscribe_pull("t", "p", {.ack_timeout = 10, .start = {Start::Kind::kBeginning, 0}});
    for (const char* p : {"a", "b", "c"}) m.publish("t", p);
    ASSERT_EQ(m.poll("t", "p", "w1", 0, 3).size(), 3u);
    EXPECT_TRUE(m.nack("t", "p", 2, "w1", 0));  // returned, attempt 1 used
    m.seek("t", "p", 1);
    const std::vector<Received> again = m.poll("t", "p", "w2", 0, 4);
    if (!on) {
      EXPECT_FALSE(m.ack("t", "p", 0, "w1", 0));
      ASSERT_EQ(again.size(), 2u);  // 1 and 2, both at attempt 1
      EXPECT_EQ(again[0].offset, 1u);
      EXPECT_EQ(again[1].offset, 2u);
      EXPECT_EQ(again[1].attempt, 1);
      continue;
    }
    // 2 comes back first (returned, attempt 2), then the cursor reaches 1 (held by w1:
    // handed to w2 anew, attempt 1) and 2 again (attempt 1).
    ASSERT_EQ(again.size(), 3u);
    EXPECT_EQ(again[0].offset, 2u);
    EXPECT_EQ(again[0].attempt, 2);
    EXPECT_EQ(again[1].offset, 1u);
    EXPECT_EQ(again[1].attempt, 1);
    EXPECT_EQ(again[2].offset, 2u);
    EXPECT_EQ(again[2].attempt, 1);
    EXPECT_TRUE(m.ack("t", "p", 0, "w1", 0));   // 0 stayed held by w1
    EXPECT_FALSE(m.ack("t", "p", 1, "w1", 0));  // 1 is w2's now
    EXPECT_TRUE(m.ack("t", "p", 1, "w2", 0));
  }
}

// The switch holds for push too (Redis: SETID keeps the pending list whoever reads it): what
// a failed handler gave back before a seek past it is offered at the next drain, at its next
// attempt, before the new cursor's message.
TEST(ModelProfile, SeekMovesOnlyTheCursorKeepsWhatAPushHandlerGaveBack) {
  Model m(Profile{.seek_moves_only_the_cursor = true});
  m.create_topic("t");
  m.subscribe("t", "h",
              {.max_deliveries = 0,
               .start = {Start::Kind::kBeginning, 0},
               .script = {Step{.verdict = Verdict::kReject}}});
  m.publish("t", "a");
  m.publish("t", "b");
  EXPECT_EQ(m.drain(), 0u);  // a#1 rejected: given back
  m.seek("t", "h", 1);
  EXPECT_EQ(m.drain(), 2u);
  const std::vector<HandlerCall> calls = m.take_calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[1].offset, 0u);
  EXPECT_EQ(calls[1].attempt, 2);
  EXPECT_EQ(calls[2].offset, 1u);
}

// seek_moves_only_the_cursor: a held message the cursor reaches again is handed out anew at
// attempt 1, also when its one attempt used up max_deliveries (its attempts start over).
TEST(ModelProfile, SeekMovesOnlyTheCursorHandsOutAnewWhatUsedItsLastAttempt) {
  Model m(Profile{.seek_moves_only_the_cursor = true});
  m.create_topic("t");
  m.subscribe_pull("t", "p",
                   {.ack_timeout = 10, .max_deliveries = 1, .start = {Start::Kind::kBeginning, 0}});
  m.publish("t", "a");
  ASSERT_EQ(m.poll("t", "p", "w1", 0, 1).size(), 1u);
  m.seek("t", "p", 0);
  const std::vector<Received> again = m.poll("t", "p", "w2", 0, 1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].attempt, 1);
  EXPECT_TRUE(m.dead_letters("t", "p").empty());
}

// retry_wait_holds_a_place: with max_in_flight 1, a message waiting for its retry keeps
// the place: no new message is offered until it has been offered again and settled.
// Strictly the waiting message holds nothing and the next one is offered.
TEST(ModelProfile, RetryWaitHoldsAPlace) {
  for (const bool on : {false, true}) {
    Model m(Profile{.retry_wait_holds_a_place = on});
    m.create_topic("t");
    m.subscribe_pull(
        "t", "p", {.ack_timeout = 10, .start = {Start::Kind::kBeginning, 0}, .max_in_flight = 1});
    m.publish("t", "a");
    m.publish("t", "b");
    ASSERT_EQ(m.poll("t", "p", "w", 0, 2).size(), 1u);
    EXPECT_TRUE(m.nack("t", "p", 0, "w", 0, 20));
    const std::vector<Received> meanwhile = m.poll("t", "p", "w", 5, 2);
    if (!on) {
      ASSERT_EQ(meanwhile.size(), 1u);
      EXPECT_EQ(meanwhile[0].offset, 1u);
      continue;
    }
    EXPECT_TRUE(meanwhile.empty());
    const std::vector<Received> later = m.poll("t", "p", "w", 20, 2);
    ASSERT_EQ(later.size(), 1u);  // the redelivery, then the bound again
    EXPECT_EQ(later[0].offset, 0u);
    EXPECT_TRUE(m.ack("t", "p", 0, "w", 21));
    EXPECT_EQ(m.poll("t", "p", "w", 21, 2).at(0).offset, 1u);
  }
}

// answers_reset_a_retry_wait: a plain nack of a message waiting for its delayed retry makes
// it ready now; an extend of one still waiting makes it wait the extension from now; a
// delayed nack of a ready one makes it wait. Strictly none of them is the holder's answer:
// refused, and the wait stands.
TEST(ModelProfile, AnswersResetARetryWait) {
  for (const bool on : {false, true}) {
    Model m(Profile{.answers_reset_a_retry_wait = on});
    m.create_topic("t");
    m.subscribe_pull("t", "p", {.ack_timeout = 10, .start = {Start::Kind::kBeginning, 0}});
    m.publish("t", "a");
    ASSERT_EQ(m.poll("t", "p", "w", 0, 1).size(), 1u);
    EXPECT_TRUE(m.nack("t", "p", 0, "w", 0, 50));
    EXPECT_EQ(static_cast<bool>(m.nack("t", "p", 0, "w", 1)), on);
    EXPECT_EQ(m.poll("t", "p", "w", 2, 1).size(), on ? 1u : 0u);
    if (!on) continue;
    EXPECT_TRUE(m.nack("t", "p", 0, "w", 2, 50));    // waits until 52
    EXPECT_TRUE(m.extend("t", "p", 0, "w", 3, 10));  // now until 13
    EXPECT_TRUE(m.poll("t", "p", "w", 12, 1).empty());
    EXPECT_EQ(m.poll("t", "p", "w", 13, 1).size(), 1u);
    EXPECT_TRUE(m.nack("t", "p", 0, "w", 14));         // ready
    EXPECT_TRUE(m.nack("t", "p", 0, "w", 14, 6));      // a ready one made to wait until 20
    EXPECT_FALSE(m.extend("t", "p", 0, "w", 21, 10));  // ready: an extend changes nothing
    EXPECT_EQ(m.poll("t", "p", "w", 21, 1).size(), 1u);
  }
}

// lag_counts_trimmed: once a subscription has read (or was made at the end, or
// sought), what retention dropped before its cursor reached it stays counted in lag, also
// after it reads past it; before its first read only kept messages count; a seek starts
// the count again.
// RabbitMQ: a queue bound to an exchange holds nothing routed before it was bound.
TEST(ModelProfile, StartsAtTheEndGivesASubscriptionFromTheBeginningOnlyWhatFollows) {
  for (const bool on : {false, true}) {
    Model m({.starts_at_the_end = on});
    m.create_topic("t");
    m.publish("t", "old");
    const PullOptions options{
        .ack_timeout = 10, .max_deliveries = 0, .start = {Start::Kind::kBeginning, 0}};
    m.subscribe_pull("t", "p", options);
    m.publish("t", "new");
    const std::vector<Received> got = m.poll("t", "p", "w", 0, 3);
    ASSERT_EQ(got.size(), on ? 1u : 2u) << on;
    EXPECT_EQ(got[0].offset, on ? 1u : 0u);
    EXPECT_NO_THROW(m.subscribe_pull("t", "p", options));  // the same options: the same one
  }
}

// RabbitMQ's quorum queue
// (RabbitMqRawProbe.AReturnedMessageGoesBehindTheQueueUnlessThereIsADeliveryLimit).
TEST(ModelProfile, ReturnedToTheBackGoesBehindWhatWasPublishedBeforeItCameBack) {
  for (const bool on : {false, true}) {
    Model m({.redelivery_in_return_order = on, .returned_to_the_back = on});
    m.create_topic("t");
    m.subscribe_pull("t", "p", {.ack_timeout = 10, .max_deliveries = 0, .start = {}});
    m.subscribe_pull("t", "limited", {.ack_timeout = 10, .max_deliveries = 5, .start = {}});
    m.publish("t", "a");
    m.publish("t", "b");
    ASSERT_EQ(m.poll("t", "p", "w", 0, 1).size(), 1u);  // a
    m.publish("t", "c");
    ASSERT_EQ(m.poll("t", "limited", "w", 0, 1).size(), 1u);
    EXPECT_TRUE(m.nack("t", "p", 0, "w", 0));        // a comes back behind b and c
    EXPECT_TRUE(m.nack("t", "limited", 0, "w", 0));  // with a limit: ahead of them
    m.publish("t", "d");                             // and ahead of d
    std::vector<Offset> order;
    for (const Received& r : m.poll("t", "p", "w", 0, 4)) order.push_back(r.offset);
    EXPECT_EQ(order, (on ? std::vector<Offset>{1, 2, 0, 3} : std::vector<Offset>{0, 1, 2, 3}));
    order.clear();
    for (const Received& r : m.poll("t", "limited", "w", 0, 4)) order.push_back(r.offset);
    EXPECT_EQ(order, (std::vector<Offset>{0, 1, 2, 3}));
  }
}

TEST(ModelProfile, LagCountsTrimmed) {
  for (const bool on : {false, true}) {
    Model m(Profile{.lag_counts_trimmed = on});
    m.create_topic("t", 3);
    m.subscribe_pull("t", "p", {.ack_timeout = 10, .start = {Start::Kind::kBeginning, 0}});
    m.subscribe_pull("t", "q", {.ack_timeout = 10, .start = {Start::Kind::kBeginning, 0}});
    m.publish("t", "m0");
    ASSERT_EQ(m.poll("t", "p", "w", 0, 1).size(), 1u);  // p has read; q has not
    EXPECT_TRUE(m.ack("t", "p", 0, "w", 0));
    for (const char* x : {"m1", "m2", "m3", "m4", "m5", "m6"}) m.publish("t", x);  // keeps 4..6
    EXPECT_EQ(m.lag("t", "q", 0).messages, 3u);            // never read: kept ones only
    EXPECT_EQ(m.lag("t", "p", 0).messages, on ? 6u : 3u);  // 1..3 trimmed unread
    ASSERT_EQ(m.poll("t", "p", "w", 0, 1).size(), 1u);     // 4, held
    EXPECT_EQ(m.lag("t", "p", 0).messages, on ? 6u : 3u);  // 5, 6, held 4, and 1..3
    m.seek("t", "p", 5);
    EXPECT_EQ(m.lag("t", "p", 0).messages, 2u);            // 5, 6: counted from the seek again
    ASSERT_EQ(m.poll("t", "p", "w", 0, 1).size(), 1u);     // 5
    EXPECT_TRUE(m.nack("t", "p", 5, "w", 0));              // returned
    for (const char* x : {"m7", "m8"}) m.publish("t", x);  // keeps 6..8: drops 5
    EXPECT_EQ(m.lag("t", "p", 0).messages, on ? 4u : 3u);  // 6..8, and 5 until the next poll
    ASSERT_EQ(m.poll("t", "p", "w", 0, 1).size(), 1u);     // 6
    EXPECT_EQ(m.lag("t", "p", 0).messages, 3u);            // 7, 8, held 6
  }
}

}  // namespace
}  // namespace model
