// SPEC R11's one time line as a property: every call that takes `now` (poll, poll_group,
// ack, nack, nack with a delay, term, extend, expire, lag) refuses a `now` more than
// kMaxClockSkew behind or ahead of the broker's clock with InvalidArgument naming both
// times, and changes nothing; within the bound it takes it. The clock is the user's own
// (stopped at a generated time anywhere in the 64-bit range, so the bound is exact), and a
// ManualClock takes any time.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "broker/errors.h"
#include "uniform.h"

namespace props {
namespace {

using broker::Millis;
using broker::Time;

// A user's clock that nobody moves from the broker's side: stopped at one time.
class StoppedClock final : public broker::Clock {
 public:
  explicit StoppedClock(Time at) : at_(at) {}
  [[nodiscard]] Time now() const override { return at_; }

 private:
  Time at_;
};

const std::vector<std::string> kCalls = {"poll", "poll_group", "ack",    "nack", "nack_delay",
                                         "term", "extend",     "expire", "lag"};

// A clock's time, near zero or anywhere up to 2^62 ms either side (a clock's raw ticks since
// any epoch; a deadline an hour after it still fits in 64 bits).
rc::Gen<std::int64_t> gen_clock_ms() {
  constexpr std::int64_t kFar = std::int64_t{1} << 62;
  return rc::gen::oneOf(uniform_in<std::int64_t>(-1'000'000'000, 1'000'000'000),
                        rc::gen::element<std::int64_t>(0, kFar, -kFar),
                        uniform_in<std::int64_t>(-kFar, kFar));
}

// How far the passed `now` is from the clock: the bound's edges exactly, around it, far
// away, and arbitrary offsets (the sum is taken in unsigned arithmetic: it may wrap).
rc::Gen<std::int64_t> gen_offset_ms() {
  const std::int64_t k = broker::kMaxClockSkew.count();
  return rc::gen::oneOf(rc::gen::element<std::int64_t>(0, k, -k, k + 1, -k - 1),
                        uniform_in<std::int64_t>(-3 * k, 3 * k + 1),
                        rc::gen::arbitrary<std::int64_t>());
}

// One broker holding one message of "t"/"s" and one of a group's partition, on `clock`.
struct Setup {
  broker::Broker b;
  broker::Received held;
  broker::Received held_in_group;

  explicit Setup(std::shared_ptr<broker::Clock> clock)
      : b(broker::BrokerOptions::synchronous().with_clock(std::move(clock))) {
    broker::PullOptions o;
    o.ack_timeout = Millis{3'600'000};
    o.start = broker::StartPosition::beginning();
    b.create_topic("t");
    b.subscribe_pull("t", "s", o);
    b.publish("t", "m0");
    b.publish("t", "m1");
    held = b.poll("t", "s", "w", 1).at(0);
    broker::TopicOptions two;
    two.partitions = 2;
    b.create_topic("g", two);
    broker::GroupOptions g;
    g.pull = o;
    b.join_group("g", "grp", "w", g);
    b.publish_to("g", 0, "x");
    b.publish_to("g", 1, "y");
    held_in_group = b.poll_group("g", "grp", "w", 1).at(0);
  }

  // The call by name at `now`.
  void call(const std::string& name, Time now) {
    if (name == "poll") (void)b.poll("t", "s", "w", 1, now);
    if (name == "poll_group") (void)b.poll_group("g", "grp", "w", 1, now);
    if (name == "ack") (void)b.ack(held.receipt, now);
    if (name == "nack") (void)b.nack(held.receipt, now);
    if (name == "nack_delay") (void)b.nack(held.receipt, now, Millis{5});
    if (name == "term") (void)b.term(held_in_group.receipt, now);
    if (name == "extend") (void)b.extend(held.receipt, now, Millis{5});
    if (name == "expire") (void)b.expire(now);
    if (name == "lag") (void)b.lag("t", "s", now);
  }

  // What a refused call must leave as it was.
  struct State {
    broker::SubscriptionStats s;
    broker::SubscriptionStats grp0;
    broker::SubscriptionStats grp1;
    bool operator==(const State&) const = default;
  };
  State state() const {
    return {b.stats("t", "s"), b.stats(broker::partition_name("g", 0), "grp"),
            b.stats(broker::partition_name("g", 1), "grp")};
  }
};

Time at_ms(std::int64_t ms) { return Time{Millis{ms}}; }

RC_GTEST_PROP(OneTimeLine, ANowFarFromTheClockIsRefusedNamingBothTimesAndChangesNothing, ()) {
  const std::int64_t clock_ms = *gen_clock_ms();
  const std::int64_t offset = *gen_offset_ms();
  const std::string name = *rc::gen::elementOf(kCalls);
  // The passed time, and its true distance from the clock (no signed overflow either way).
  const auto now_ms = static_cast<std::int64_t>(static_cast<std::uint64_t>(clock_ms) +
                                                static_cast<std::uint64_t>(offset));
  const bool behind = now_ms < clock_ms;
  const std::uint64_t gap = behind ? static_cast<std::uint64_t>(clock_ms) - now_ms
                                   : static_cast<std::uint64_t>(now_ms) - clock_ms;
  const bool far = gap > static_cast<std::uint64_t>(broker::kMaxClockSkew.count());
  RC_TAG(far ? "refused" : "taken", name);

  Setup setup(std::make_shared<StoppedClock>(at_ms(clock_ms)));
  const Setup::State before = setup.state();
  try {
    setup.call(name, at_ms(now_ms));
    RC_ASSERT(!far);
  } catch (const broker::InvalidArgument& e) {
    RC_LOG() << name << " at " << now_ms << " ms, clock " << clock_ms << " ms: " << e.what()
             << "\n";
    RC_ASSERT(far);
    const std::string what = e.what();
    RC_ASSERT(what.find(std::to_string(now_ms) + " ms") != std::string::npos);
    RC_ASSERT(what.find(std::to_string(clock_ms) + " ms") != std::string::npos);
    RC_ASSERT(what.find(behind ? "behind" : "ahead") != std::string::npos);
    RC_ASSERT(setup.state() == before);
    // Still held by w, deadline and all: the same call at the clock's time is taken.
    RC_ASSERT(static_cast<bool>(setup.b.extend(setup.held.receipt, Millis{5})));
  }
}

// A ManualClock's time is the program's: any `now` is taken, however far from it.
RC_GTEST_PROP(OneTimeLine, AManualClockTakesAnyNow, ()) {
  const std::int64_t clock_ms = *uniform_in<std::int64_t>(-1'000'000'000, 1'000'000'000);
  const std::int64_t offset = *uniform_in<std::int64_t>(-1'000'000'000, 1'000'000'000);
  const std::string name = *rc::gen::elementOf(kCalls);
  Setup setup(std::make_shared<broker::ManualClock>(at_ms(clock_ms)));
  setup.call(name, at_ms(clock_ms + offset));  // throws nothing
}

}  // namespace
}  // namespace props
