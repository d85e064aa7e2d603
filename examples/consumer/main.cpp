// Uses the installed broker the way an application does: a push subscription drained on
// this thread, a pull subscription polled and acked by receipt, a manual clock, typed
// errors. Exits 1 with a message on the first unexpected result.
#include <broker/broker.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

void expect(bool ok, const std::string& what) {
  if (ok) return;
  std::cerr << "consumer: FAILED: " << what << "\n";
  std::exit(1);
}

}  // namespace

int main() {
  using broker::Millis;
  auto clock = std::make_shared<broker::ManualClock>();
  broker::Broker b(broker::BrokerOptions::synchronous().with_clock(clock));
  b.create_topic("orders");

  // Push: the handler confirms every message; deliveries run inside drain().
  std::vector<std::string> seen;
  b.subscribe("orders", "audit", [&seen](const broker::Delivery& d) {
    seen.emplace_back(d.message->payload());  // a view into the log: copy what you keep
    return true;
  });
  // Pull: a worker polls, then acks each message with its receipt.
  broker::PullOptions pull;
  pull.ack_timeout = Millis{1000};
  pull.start = broker::StartPosition::beginning();
  b.subscribe_pull("orders", "billing", pull);

  expect(b.publish("orders", "o-1", {{"type", "created"}}) == 0, "first offset is 0");
  expect(b.publish("orders", "o-2") == 1, "second offset is 1");
  const std::size_t pushed = b.drain();
  expect(pushed == 2 && seen == std::vector<std::string>{"o-1", "o-2"},
         "push handler got o-1, o-2");
  expect(b.stats("orders", "audit").committed == 2, "push subscription committed 2");

  const auto got = b.poll("orders", "billing", "w1", 10, clock->now());
  expect(got.size() == 2 && got[0].message->payload() == "o-1" && got[1].attempt == 1,
         "poll returns o-1, o-2 on their first attempt");
  expect(got[0].deadline == clock->now() + Millis{1000}, "deadline is now + ack_timeout");
  clock->advance(Millis{10});
  for (const broker::Received& r : got) {
    expect(b.ack(r.receipt, clock->now()).outcome == broker::AckOutcome::kAccepted, "ack accepted");
  }
  expect(b.ack(got[0].receipt, clock->now()).outcome == broker::AckOutcome::kAlreadySettled,
         "a second ack is refused: the message is settled already");
  const broker::SubscriptionStats s = b.stats("orders", "billing");
  expect(s.committed == 2 && s.in_flight == 0 && s.confirmed == 2, "pull stats after the acks");

  try {
    b.publish("no-such-topic", "x");
    expect(false, "publish to an unknown topic throws");
  } catch (const broker::UnknownTopic& e) {
    expect(e.code() == broker::ErrorCode::kUnknownTopic, "UnknownTopic carries its code");
  }
  std::cout << "consumer: ok (" << pushed << " pushed and confirmed, " << got.size()
            << " pulled and acked)\n";
  return 0;
}
