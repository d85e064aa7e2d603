// Push consumer groups (R32) on the Lane and Pool dispatchers as fibers: members join and
// leave with handlers while a publisher publishes, under generated schedules. After a last
// member drains the rest, the run is judged against the contract's push-group rules:
//   - nothing lost: every partition's committed position reaches its end (R32, R19);
//   - one call at a time per partition (R15), and never two calls of one message with the
//     same attempt number (R6: an offer is counted once);
//   - leave_group returns only after the member's running call, and no call of a member
//     starts between its leave and its next join (R9 for groups);
//   - fencing: under an eager assignor every rebalance revokes every partition, so a call
//     that confirmed while a whole join or leave ran inside it did not count: its message
//     is offered again.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "common.h"
#include "fiber/run.h"
#include "sync/sync.h"

namespace fiberprop {
namespace {

enum class Step { kJoin, kLeave, kSleep };

/// One generated case: the dispatcher, the topic's partitions, the group's assignor, what
/// each member fiber does, and which messages fail on their first attempt.
struct PushGroupCase {
  bool pool = false;
  std::uint32_t partitions = 2;
  broker::Assignor assignor = broker::Assignor::kRange;
  int messages = 4;
  std::vector<std::vector<Step>> members;
  std::set<int> fail_first;  // payload numbers whose first attempt fails

  [[nodiscard]] std::string text() const {
    static const char* const kAssignors[] = {"range", "round_robin", "sticky", "cooperative"};
    std::string out = std::string(pool ? "pool" : "lane") +
                      " partitions=" + std::to_string(partitions) +
                      " assignor=" + kAssignors[static_cast<int>(assignor)] +
                      " messages=" + std::to_string(messages) + " fail_first=[";
    for (int m : fail_first) out += std::to_string(m) + " ";
    out += "]\n";
    for (std::size_t i = 0; i < members.size(); ++i) {
      out += "  member m" + std::to_string(i) + ":";
      for (Step s : members[i]) {
        out += s == Step::kJoin ? " join" : s == Step::kLeave ? " leave" : " sleep";
      }
      out += "\n";
    }
    return out;
  }
};

rc::Gen<PushGroupCase> gen_case() {
  return rc::gen::exec([] {
    PushGroupCase c;
    c.pool = *rc::gen::arbitrary<bool>();
    c.partitions = *props::uniform_in<std::uint32_t>(1, 4);
    c.assignor = *rc::gen::element(broker::Assignor::kRange, broker::Assignor::kRoundRobin,
                                   broker::Assignor::kSticky, broker::Assignor::kCooperativeSticky);
    c.messages = *props::uniform_in(1, 7);
    const int members = *props::uniform_in(1, 4);
    for (int i = 0; i < members; ++i) {
      c.members.push_back(*rc::gen::container<std::vector<Step>>(
          *props::uniform_in(1, 6), rc::gen::weightedElement<Step>(
                                        {{3, Step::kJoin}, {2, Step::kLeave}, {1, Step::kSleep}})));
    }
    for (int m = 0; m < c.messages; ++m) {
      if (props::one_in(3)) c.fail_first.insert(m);
    }
    return c;
  });
}

struct Call {
  std::string member;
  std::string topic;
  std::string payload;
  int attempt = 0;
  std::uint64_t enter = 0;
  std::uint64_t exit = 0;  // 0 while running
  bool confirmed = false;
};

struct Change {  // a join or leave that changed the membership (a rebalance)
  std::string member;
  bool join = true;
  std::uint64_t invoke = 0;
  std::uint64_t ret = 0;
};

/// What the fibers recorded. One OS thread runs every fiber, and recording has no
/// scheduling point, so plain fields suffice.
struct Record {
  std::uint64_t clock = 0;
  std::vector<Call> calls;
  std::vector<Change> changes;
  std::map<std::string, bool> active;     // between a join's invoke and a leave's return
  std::map<std::string, int> running;     // calls of a member running now
  std::map<std::string, int> running_on;  // calls on a partition running now
  std::vector<std::string> anomalies;
  std::uint64_t generation = 0;  // the highest a join returned
  std::uint64_t tick() { return ++clock; }
};

broker::Handler handler_for(const std::string& member, Record& r, const PushGroupCase& c) {
  return [member, &r, &c](const broker::Delivery& d) {
    const std::size_t me = r.calls.size();
    r.calls.push_back(
        {member, *d.topic, std::string(d.message->payload()), d.attempt, r.tick(), 0, false});
    if (!r.active[member]) {
      r.anomalies.push_back("call of " + member + " on " + *d.topic + " (" +
                            std::string(d.message->payload()) +
                            ") started after its leave_group returned");
    }
    if (++r.running_on[*d.topic] > 1) {
      r.anomalies.push_back("two calls at once on " + *d.topic + " (R15)");
    }
    ++r.running[member];
    fiber::yield("handler");
    const bool ok =
        !(d.attempt == 1 && c.fail_first.contains(std::stoi(std::string(d.message->payload()))));
    --r.running_on[*d.topic];
    --r.running[member];
    r.calls[me].exit = r.tick();
    r.calls[me].confirmed = ok;
    return ok;
  };
}

void body(const PushGroupCase& c, Record& r) {
  using broker::Millis;
  auto b = std::make_unique<broker::Broker>(
      c.pool ? broker::BrokerOptions::pool(2).with_retry_backoff(Millis{1})
             : broker::BrokerOptions::lane().with_retry_backoff(Millis{1}));
  broker::TopicOptions topic;
  topic.partitions = c.partitions;
  b->create_topic("t", topic);
  broker::GroupOptions options;
  options.assignor = c.assignor;
  options.push.start = broker::StartPosition::beginning();
  options.push.max_deliveries = 0;  // nothing dies: every message must end confirmed
  auto join = [&](const std::string& m) {
    r.active[m] = true;
    const std::uint64_t invoke = r.tick();
    const broker::Membership got = b->join_group("t", "g", m, handler_for(m, r, c), options);
    // A new member makes a new generation; a member already in changes nothing.
    if (got.generation > r.generation) r.changes.push_back({m, true, invoke, r.tick()});
    r.generation = std::max(r.generation, got.generation);
  };
  auto leave = [&](const std::string& m) {
    const std::uint64_t invoke = r.tick();
    const bool was = b->leave_group("t", "g", m);
    const std::uint64_t ret = r.tick();
    if (!was) return;
    r.changes.push_back({m, false, invoke, ret});
    ++r.generation;
    if (r.running[m] > 0) {
      r.anomalies.push_back("leave_group of " + m + " returned while its call ran (R9)");
    }
    r.active[m] = false;
  };
  join("setup");  // the group exists before the fibers start; setup leaves in its turn
  std::vector<broker::sync::Thread> threads;
  threads.emplace_back([&] {
    for (int m = 0; m < c.messages; ++m)
      b->publish("t", std::to_string(m), {}, "k" + std::to_string(m));
  });
  threads.emplace_back([&] { leave("setup"); });
  for (std::size_t i = 0; i < c.members.size(); ++i) {
    threads.emplace_back([&, i] {
      const std::string me = "m" + std::to_string(i);
      for (Step s : c.members[i]) {
        if (s == Step::kJoin) join(me);
        if (s == Step::kLeave) leave(me);
        if (s == Step::kSleep) fiber::sleep_for(std::chrono::milliseconds(2));
      }
    });
  }
  for (auto& t : threads) t.join();
  join("last");
  if (!b->wait_delivered(Millis{60'000})) r.anomalies.push_back("not delivered within 60 s");
  for (const broker::PartitionStats& p : b->group_stats("t", "g").partitions) {
    if (p.committed != p.end) {
      r.anomalies.push_back("lost: " + p.topic + " committed " + std::to_string(p.committed) +
                            " of " + std::to_string(p.end));
    }
  }
  b.reset();
}

/// The checks that need the whole record.
void judge(const PushGroupCase& c, Record& r) {
  std::set<std::pair<std::string, int>> seen;  // (payload, attempt)
  for (const Call& call : r.calls) {
    if (!seen.emplace(call.payload, call.attempt).second) {
      r.anomalies.push_back("message " + call.payload + " offered twice as attempt " +
                            std::to_string(call.attempt));
    }
  }
  if (c.assignor == broker::Assignor::kCooperativeSticky) return;
  for (const Call& call : r.calls) {
    if (!call.confirmed) continue;
    for (const Change& ch : r.changes) {
      if (!(call.enter < ch.invoke && ch.ret < call.exit)) continue;
      const bool again = std::any_of(r.calls.begin(), r.calls.end(), [&](const Call& later) {
        return later.payload == call.payload && later.attempt > call.attempt;
      });
      if (!again) {
        r.anomalies.push_back("the confirmation of " + call.payload + " by " + call.member +
                              " counted though " + ch.member + (ch.join ? " joined" : " left") +
                              " while it ran (fencing, R32)");
      }
    }
  }
}

RC_GTEST_PROP(FiberPushGroups, MembersJoiningAndLeavingKeepEachPartitionsContract, ()) {
  const PushGroupCase c = *gen_case();
  const fiber::Schedule schedule = pick_schedule(*gen_schedule());
  auto record = std::make_shared<Record>();  // outlives an abandoned run's fibers
  auto shared = std::make_shared<const PushGroupCase>(c);
  const fiber::RunResult run =
      fiber::run_fibers({[record, shared] { body(*shared, *record); }}, schedule);
  if (run.ok()) judge(c, *record);
  std::string failures;
  for (const std::string& a : record->anomalies) failures += "  " + a + "\n";
  RC_TAG(c.assignor == broker::Assignor::kCooperativeSticky ? "cooperative" : "eager");
  RC_CLASSIFY(record->changes.size() > 3, "a member's rebalance");  // 3 are setup's and last's
  RC_CLASSIFY(std::any_of(record->calls.begin(), record->calls.end(),
                          [](const Call& x) { return x.attempt > 1; }),
              "a redelivery");
  if (!run.ok() || !failures.empty()) {
    RC_FAIL(failure_text(failures, c.text(), run));
  }
}

}  // namespace
}  // namespace fiberprop
