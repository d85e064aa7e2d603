// Seed 000, "The main use case, step by step": one test per step. Each test builds the
// state of the steps before it through the fixture and asserts only its own step.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "test_support.h"

namespace broker {
namespace {

using testing::SyncBroker;

/// One handler call as the handler saw it.
struct Offer {
  std::string subscription;
  Offset offset;
  int attempt;
  std::string payload;
  bool operator==(const Offer&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Offer& o) {
  return os << o.subscription << "@" << o.offset << "#" << o.attempt << "(" << o.payload << ")";
}

class Seed000MainUseCase : public ::testing::Test {
 protected:
  Broker b{SyncBroker()};
  std::vector<Offer> offers;
  bool billing_throws = false;
  std::string unsubscribe_from_billing;  // non-empty: billing's handler unsubscribes it

  Handler Recorder(const std::string& name) {
    return [this, name](const Delivery& d) {
      offers.push_back({name, d.message->offset(), d.attempt, std::string(d.message->payload())});
      if (name == "billing") {
        if (!unsubscribe_from_billing.empty()) {
          EXPECT_TRUE(b.unsubscribe("orders", unsubscribe_from_billing));
        }
        if (billing_throws) throw std::runtime_error("billing is down");
      }
      return true;
    };
  }

  // Step 1: topic `orders`, subscriptions billing and email (in that order).
  void CreateOrdersWithBillingAndEmail() {
    b.create_topic("orders");
    b.subscribe("orders", "billing", Recorder("billing"));
    b.subscribe("orders", "email", Recorder("email"));
  }
  // Step 2.
  Offset PublishOrder1() { return b.publish("orders", "order-1"); }
  // Steps 3-4.
  std::size_t FirstDrain() { return b.drain(); }
  // Step 5: order-2 arrives and billing throws.
  std::size_t Order2WithBillingThrowing() {
    b.publish("orders", "order-2");
    billing_throws = true;
    const std::size_t confirmed = b.drain();
    billing_throws = false;
    return confirmed;
  }

  void UpToStep(int step) {
    if (step > 1) CreateOrdersWithBillingAndEmail();
    if (step > 2) PublishOrder1();
    if (step > 4) FirstDrain();  // steps 3 and 4 are the same drain
    if (step > 5) Order2WithBillingThrowing();
    if (step > 6) b.drain();  // step 6: billing confirms order-2 on its second offer
    offers.clear();
  }
};

TEST_F(Seed000MainUseCase, Step1_EachSubscriptionStartsAtTheEndOfTheLogWithCursorZero) {
  UpToStep(1);
  CreateOrdersWithBillingAndEmail();

  EXPECT_EQ(b.topics(), std::vector<std::string>{"orders"});
  EXPECT_EQ(b.subscriptions("orders"), (std::vector<std::string>{"billing", "email"}));
  EXPECT_EQ(b.stats("orders", "billing").cursor, 0u);
  EXPECT_EQ(b.stats("orders", "email").cursor, 0u);
  EXPECT_EQ(b.stats("orders", "billing").backlog, 0u);
  EXPECT_EQ(b.stats("orders", "email").backlog, 0u);
}

TEST_F(Seed000MainUseCase, Step2_PublishReturnsOffsetZeroAndRunsNoHandler) {
  UpToStep(2);

  EXPECT_EQ(PublishOrder1(), 0u);

  EXPECT_TRUE(offers.empty()) << "publish must not wait for (or run) a subscriber";
  EXPECT_EQ(b.end_offset("orders"), 1u);
  for (const char* name : {"billing", "email"}) {
    const auto s = b.stats("orders", name);
    EXPECT_EQ(s.delivered, 0u) << name;
    EXPECT_EQ(s.backlog, 1u) << name << ": order-1 waits for the next drain";
    EXPECT_EQ(s.cursor, 0u) << name;
  }
}

TEST_F(Seed000MainUseCase, Step3_DrainServesSubscriptionsInSubscribeOrder) {
  UpToStep(3);

  FirstDrain();

  EXPECT_EQ(offers, (std::vector<Offer>{{"billing", 0, 1, "order-1"}, {"email", 0, 1, "order-1"}}));
}

TEST_F(Seed000MainUseCase, Step3_EachSubscriptionDeliversAllItsWaitingMessagesBeforeTheNext) {
  UpToStep(3);
  b.publish("orders", "order-1b");

  FirstDrain();

  EXPECT_EQ(offers, (std::vector<Offer>{{"billing", 0, 1, "order-1"},
                                        {"billing", 1, 1, "order-1b"},
                                        {"email", 0, 1, "order-1"},
                                        {"email", 1, 1, "order-1b"}}));
}

TEST_F(Seed000MainUseCase, Step4_ConfirmationMovesEachSubscriptionsOwnOffsetFromZeroToOne) {
  UpToStep(4);
  ASSERT_EQ(b.stats("orders", "billing").cursor, 0u);
  ASSERT_EQ(b.stats("orders", "email").cursor, 0u);

  EXPECT_EQ(FirstDrain(), 2u) << "one confirmation per subscription";

  for (const char* name : {"billing", "email"}) {
    const auto s = b.stats("orders", name);
    EXPECT_EQ(s.cursor, 1u) << name;
    EXPECT_EQ(s.confirmed, 1u) << name;
    EXPECT_EQ(s.backlog, 0u) << name;
    EXPECT_EQ(s.in_flight, 0u) << name;
  }
  EXPECT_EQ(b.drain(), 0u) << "a confirmed message is not offered again";
}

TEST_F(Seed000MainUseCase, Step5_BillingThrowsOnOrder2AndStaysAtOneWhileEmailGoesOn) {
  UpToStep(5);

  EXPECT_EQ(Order2WithBillingThrowing(), 1u) << "only email confirmed order-2";

  EXPECT_EQ(offers, (std::vector<Offer>{{"billing", 1, 1, "order-2"}, {"email", 1, 1, "order-2"}}));
  const auto billing = b.stats("orders", "billing");
  // Billing's offset stays at 1 (order-2): its committed position has not moved past the
  // failed message, which waits to be offered again; nothing after it was confirmed and
  // nothing was dead-lettered. (SPEC R5/R13: the cursor itself already points past it; the
  // returned message waits in front of it.)
  EXPECT_EQ(billing.committed, 1u) << "billing's offset stays at 1";
  EXPECT_EQ(billing.cursor, 2u);
  EXPECT_EQ(billing.confirmed, 1u);
  EXPECT_EQ(billing.backlog, 1u);
  EXPECT_EQ(billing.in_flight, 0u);
  EXPECT_EQ(billing.dead_lettered, 0u);
  const auto email = b.stats("orders", "email");
  EXPECT_EQ(email.cursor, 2u);
  EXPECT_EQ(email.confirmed, 2u);
  EXPECT_EQ(email.backlog, 0u);
}

TEST_F(Seed000MainUseCase, Step5_ThrowingStopsOnlyBillingForThisDrain) {
  UpToStep(5);
  b.publish("orders", "order-2");
  b.publish("orders", "order-3");
  billing_throws = true;

  b.drain();

  EXPECT_EQ(offers, (std::vector<Offer>{{"billing", 1, 1, "order-2"},
                                        {"email", 1, 1, "order-2"},
                                        {"email", 2, 1, "order-3"}}))
      << "billing stops at its failure; email is served in full";
}

TEST_F(Seed000MainUseCase, Step6_NextDrainOffersOrder2ToBillingAgainWithAttempt2) {
  UpToStep(6);

  EXPECT_EQ(b.drain(), 1u);

  EXPECT_EQ(offers, (std::vector<Offer>{{"billing", 1, 2, "order-2"}}))
      << "at-least-once: billing gets order-2 again, email (which confirmed it) does not";
  const auto billing = b.stats("orders", "billing");
  EXPECT_EQ(billing.confirmed, 2u);
  EXPECT_EQ(billing.redelivered, 1u);
  EXPECT_EQ(billing.delivered, 3u);
  EXPECT_EQ(billing.backlog, 0u);
  EXPECT_EQ(billing.cursor, 2u);
}

TEST_F(Seed000MainUseCase, Step7_HandlerThatUnsubscribesItselfStopsAtOnceAndNeighbourIsServed) {
  UpToStep(7);
  b.publish("orders", "order-3");
  b.publish("orders", "order-4");
  unsubscribe_from_billing = "billing";

  b.drain();

  EXPECT_EQ(offers, (std::vector<Offer>{{"billing", 2, 1, "order-3"},
                                        {"email", 2, 1, "order-3"},
                                        {"email", 3, 1, "order-4"}}))
      << "billing gets nothing after its own unsubscribe; email is not skipped";
  EXPECT_EQ(b.subscriptions("orders"), std::vector<std::string>{"email"});
  offers.clear();
  b.publish("orders", "order-5");
  b.drain();
  EXPECT_EQ(offers, (std::vector<Offer>{{"email", 4, 1, "order-5"}}));
}

TEST_F(Seed000MainUseCase, Step7_HandlerThatUnsubscribesTheNextSubscriptionStopsItAtOnce) {
  UpToStep(7);
  b.publish("orders", "order-3");
  unsubscribe_from_billing = "email";

  b.drain();

  EXPECT_EQ(offers, (std::vector<Offer>{{"billing", 2, 1, "order-3"}}))
      << "email was unsubscribed before the drain reached it";
  EXPECT_EQ(b.subscriptions("orders"), std::vector<std::string>{"billing"});
}

}  // namespace
}  // namespace broker
