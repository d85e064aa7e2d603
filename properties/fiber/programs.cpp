// Generator-side shapes of the fiber properties as operation-language programs (programs.h).
#include "programs.h"

#include <string>

namespace fiberprop {
namespace {

constexpr const char* kTopic = "t";
constexpr const char* kPullSub = "p";
constexpr int kMaxDeliveries = 3;

oplang::Fiber publisher(std::size_t index, int messages, int gap_ms = 0) {
  oplang::Fiber f{"pub" + std::to_string(index), {}};
  for (int i = 0; i < messages; ++i) {
    if (gap_ms > 0) f.ops.push_back(oplang::Advance{gap_ms});
    oplang::Publish publish{kTopic, "m", {}, {}};
    publish.via_publisher = index % 2 == 1;  // every other fiber through a broker::Publisher
    f.ops.push_back(publish);
  }
  return f;
}

oplang::Step step_of(Behavior b) {
  oplang::Step s;
  switch (b) {
    case Behavior::kOk:
      break;
    case Behavior::kFail:
      s.verdict = oplang::Verdict::kReject;
      break;
    case Behavior::kThrow:
      s.verdict = oplang::Verdict::kThrowStd;
      break;
    case Behavior::kStall:
      s.effect = oplang::EffectKind::kStall;
      s.ms = 20;
      break;
    case Behavior::kStallLong:
      s.effect = oplang::EffectKind::kStall;
      s.ms = 80;
      break;
    case Behavior::kUnsubscribeSelf:
      s.effect = oplang::EffectKind::kUnsubscribeSelf;
      break;
    case Behavior::kStallFail:
      s.effect = oplang::EffectKind::kStall;
      s.ms = 20;
      s.verdict = oplang::Verdict::kReject;
      break;
  }
  return s;
}

// `cycle` repeated over `calls` calls, without the trailing plain confirms (the default).
oplang::HandlerScript unroll(const std::vector<Behavior>& cycle, std::size_t calls) {
  oplang::HandlerScript out;
  if (cycle.empty()) return out;
  for (std::size_t i = 0; i < calls; ++i) out.push_back(step_of(cycle[i % cycle.size()]));
  while (!out.empty() && out.back() == oplang::Step{}) out.pop_back();
  return out;
}

// Worker `index` (member w<index>) of subscription p on topic t, its ops translated.
oplang::Fiber worker(std::size_t index, const std::vector<WorkerOp>& ops) {
  const std::string member = "w" + std::to_string(index);
  oplang::Fiber f{member, {}};
  {
    for (const WorkerOp& op : ops) {
      switch (op.kind) {
        case WorkerOp::kPoll:
          f.ops.push_back(oplang::Poll{kTopic, kPullSub, member, static_cast<std::size_t>(op.arg)});
          break;
        case WorkerOp::kAckOldest:
          f.ops.push_back(oplang::Ack{kTopic, kPullSub, 0, member, oplang::Which::kOldest});
          break;
        case WorkerOp::kNackOldest:
          f.ops.push_back(oplang::Nack{kTopic, kPullSub, 0, member, oplang::Which::kOldest});
          break;
        case WorkerOp::kAckAll:
          f.ops.push_back(oplang::Ack{kTopic, kPullSub, 0, member, oplang::Which::kAll});
          break;
        case WorkerOp::kTermOldest:
          f.ops.push_back(oplang::Term{kTopic, kPullSub, 0, member, oplang::Which::kOldest});
          break;
        case WorkerOp::kExpire:
          f.ops.push_back(oplang::Expire{});
          break;
        case WorkerOp::kSleep:
          f.ops.push_back(oplang::Advance{op.arg * 10});
          break;
        case WorkerOp::kPollWait:
          f.ops.push_back(
              oplang::PollWait{kTopic, kPullSub, member, static_cast<std::size_t>(op.arg), 20});
          break;
        case WorkerOp::kExtendOldest: {
          oplang::Extend extend{kTopic, kPullSub, 0, member, extension_ms(op.arg)};
          extend.which = oplang::Which::kOldest;
          f.ops.push_back(extend);
          break;
        }
      }
    }
  }
  return f;
}

// `subscribe_pull t p timeout=30 max=3 start=begin [inflight=N]`: the workers' subscription.
oplang::SubscribePull workers_subscription(std::size_t max_in_flight) {
  oplang::SubscribePull sub;
  sub.topic = kTopic;
  sub.name = kPullSub;
  sub.ack_timeout = 30;
  sub.max_deliveries = kMaxDeliveries;
  sub.start = model::Start{model::Start::Kind::kBeginning, 0};
  sub.max_in_flight = max_in_flight;
  return sub;
}

}  // namespace

std::int64_t extension_ms(int arg) {
  switch (arg) {
    case 1:
      return 1;
    case 2:
      return 5;
    case 3:
      return 20;
    default:
      return 60;
  }
}

oplang::Program PullScript::program() const {
  oplang::Program p;
  p.setup.push_back(oplang::CreateTopic{kTopic, retention, 0});
  p.setup.push_back(workers_subscription(max_in_flight));
  for (int i = 0; i < setup_messages; ++i) p.setup.push_back(oplang::Publish{kTopic, "m", {}, {}});
  for (std::size_t i = 0; i < publishers.size(); ++i)
    p.fibers.push_back(publisher(i, publishers[i], publish_gap));
  for (std::size_t w = 0; w < workers.size(); ++w) p.fibers.push_back(worker(w, workers[w]));
  if (late_after >= 0) {
    oplang::Fiber f{"late", {}};
    if (late_after > 0) f.ops.push_back(oplang::Yield{static_cast<std::size_t>(late_after)});
    oplang::SubscribePull q;
    q.topic = kTopic;
    q.name = "q";
    q.ack_timeout = 30;
    q.max_deliveries = kMaxDeliveries;
    f.ops.push_back(q);  // start=end: owed every message published after it returned
    f.ops.push_back(oplang::Poll{kTopic, "q", "late", 2});
    p.fibers.push_back(std::move(f));
  }
  return p;
}

oplang::Program PushScript::program() const {
  oplang::Program p;
  if (pool) {
    p.broker.dispatcher = oplang::BrokerSpec::Dispatcher::kPool;
    p.broker.threads = threads;
    p.broker.timeout = pool_timeout ? 50 : 0;
  } else {
    p.broker.dispatcher = oplang::BrokerSpec::Dispatcher::kLane;
  }
  p.broker.backoff = backoff;
  p.broker.shutdown = shutdown;
  std::size_t messages = static_cast<std::size_t>(setup_messages);
  for (int n : publishers) messages += static_cast<std::size_t>(n);
  p.setup.push_back(oplang::CreateTopic{kTopic, retention, 0});
  for (std::size_t s = 0; s < handlers.size(); ++s) {
    oplang::Subscribe sub;
    sub.topic = kTopic;
    sub.name = "s" + std::to_string(s);
    sub.max_deliveries = max_deliveries;
    sub.start = model::Start{model::Start::Kind::kBeginning, 0};
    sub.script = unroll(handlers[s], messages * max_deliveries);
    if (s == 0 && redrive_after >= 0 && join_after < 0) {
      // The first message dies at once, so the redrive has a dead letter to return while
      // the handler's cycle confirms the rest (runs grow) or fails it.
      const oplang::HandlerScript dies(static_cast<std::size_t>(max_deliveries),
                                       step_of(Behavior::kFail));
      sub.script.insert(sub.script.begin(), dies.begin(), dies.end());
    }
    for (std::int64_t w : waits) sub.backoff.push_back(w);
    if (s == 0 && join_after >= 0) sub.group = "g";
    p.setup.push_back(std::move(sub));
  }
  for (int i = 0; i < setup_messages; ++i) p.setup.push_back(oplang::Publish{kTopic, "m", {}, {}});
  for (std::size_t i = 0; i < publishers.size(); ++i)
    p.fibers.push_back(publisher(i, publishers[i], publish_gap));
  if (unsubscribe_after >= 0) {
    oplang::Fiber f{"unsub", {}};
    if (unsubscribe_after > 0)
      f.ops.push_back(oplang::Yield{static_cast<std::size_t>(unsubscribe_after)});
    f.ops.push_back(oplang::Unsubscribe{kTopic, "s1"});
    p.fibers.push_back(std::move(f));
  }
  if (late_after >= 0 && !handlers.empty()) {
    oplang::Fiber f{"late", {}};
    if (late_after > 0) f.ops.push_back(oplang::Yield{static_cast<std::size_t>(late_after)});
    oplang::Subscribe sub;
    sub.topic = kTopic;
    sub.name = "late";
    sub.max_deliveries = max_deliveries;  // start=end: owed what is published after it returned
    sub.script = unroll(handlers[0], messages * max_deliveries);
    f.ops.push_back(std::move(sub));
    p.fibers.push_back(std::move(f));
  }
  if (join_after >= 0 && !handlers.empty()) {
    oplang::Fiber f{"joiner", {}};
    if (join_after > 0) f.ops.push_back(oplang::Yield{static_cast<std::size_t>(join_after)});
    oplang::Subscribe sub;
    sub.topic = kTopic;
    sub.name = "j0";
    sub.max_deliveries = max_deliveries;
    sub.start = model::Start{model::Start::Kind::kBeginning, 0};  // as the group's (R10)
    sub.group = "g";
    sub.script = unroll(handlers[0], messages * max_deliveries);
    f.ops.push_back(std::move(sub));
    p.fibers.push_back(std::move(f));
  }
  if (seek_after >= 0) {
    oplang::Fiber f{"seeker", {}};
    if (seek_after > 0) f.ops.push_back(oplang::Yield{static_cast<std::size_t>(seek_after)});
    f.ops.push_back(oplang::Seek{kTopic, "s0", 0});  // replays everything from 0
    p.fibers.push_back(std::move(f));
  }
  if (pause_after >= 0 && !handlers.empty() &&
      join_after < 0) {  // (a member's pause is its group's)
    oplang::Fiber f{"pauser", {}};
    if (pause_after > 0) f.ops.push_back(oplang::Yield{static_cast<std::size_t>(pause_after)});
    f.ops.push_back(oplang::Pause{kTopic, "s0"});
    if (pause_for > 0) f.ops.push_back(oplang::Yield{static_cast<std::size_t>(pause_for)});
    f.ops.push_back(oplang::Resume{kTopic, "s0"});
    p.fibers.push_back(std::move(f));
  }
  if (redrive_after >= 0 && !handlers.empty() && join_after < 0) {  // (a member's are its group's)
    // The first message dies after its back-off (two failures in a row), when the dispatcher
    // goes on with the rest in zero virtual time: the redrive comes then, after some yields.
    oplang::Fiber f{"redriver", {oplang::Advance{backoff}}};
    if (redrive_after > 0) f.ops.push_back(oplang::Yield{static_cast<std::size_t>(redrive_after)});
    f.ops.push_back(oplang::Redrive{kTopic, "s0"});
    p.fibers.push_back(std::move(f));
  }
  return p;
}

oplang::Program TimedPullScript::program() const {
  oplang::Program p;
  p.broker.auto_expire = period;
  p.setup.push_back(oplang::CreateTopic{kTopic, 0, 0});
  oplang::SubscribePull sub = workers_subscription(0);
  sub.ack_timeout = ack_timeout;
  p.setup.push_back(sub);
  oplang::SubscribePull q = sub;
  q.name = "q";
  if (side == Side::kFilter) q.filter = {{"h", "a"}};
  if (side == Side::kOrdered) q.ordered_by_key = true;
  if (side == Side::kBounded) q.max_in_flight = 1;
  p.setup.push_back(q);
  if (side == Side::kPaused) p.setup.push_back(oplang::Pause{kTopic, "q"});
  int sent = 0;
  for (std::size_t i = 0; i < publishers.size(); ++i) {
    oplang::Fiber f{"pub" + std::to_string(i), {}};
    for (int k = 0; k < publishers[i]; ++k, ++sent) {
      if (publish_gap > 0) f.ops.push_back(oplang::Advance{publish_gap});
      oplang::Publish publish{
          kTopic, "m", {{"h", sent % 2 == 0 ? "a" : "b"}}, "k" + std::to_string(sent / 2 % 2)};
      publish.via_publisher = i % 2 == 1;
      f.ops.push_back(publish);
    }
    p.fibers.push_back(std::move(f));
  }
  for (std::size_t w = 0; w < workers.size(); ++w) p.fibers.push_back(worker(w, workers[w]));
  for (int i = 0; i < side_waiters; ++i) {
    const std::string member = "q" + std::to_string(i);
    oplang::Fiber f{member, {}};
    for (int n = 0; n < waits; ++n) {
      f.ops.push_back(oplang::PollWait{kTopic, "q", member, 1, wait_ms});
      f.ops.push_back(oplang::Ack{kTopic, "q", 0, member, oplang::Which::kAll});
    }
    p.fibers.push_back(std::move(f));
  }
  if (move != Move::kNone) {
    oplang::Fiber f{"mover", {}};
    if (move_after > 0) f.ops.push_back(oplang::Advance{move_after});
    if (move == Move::kSeek) f.ops.push_back(oplang::Seek{kTopic, "q", 0});
    if (move == Move::kResume) f.ops.push_back(oplang::Resume{kTopic, "q"});
    if (move == Move::kUnsubscribe) f.ops.push_back(oplang::Unsubscribe{kTopic, "q"});
    p.fibers.push_back(std::move(f));
  }
  return p;
}

oplang::Program DurableScript::program() const {
  oplang::Program p;
  p.broker.durable = true;
  p.broker.publish_sync = publish_sync;
  p.broker.commit_sync = commit_sync;
  p.setup.push_back(oplang::CreateTopic{kTopic, 0, 0});
  p.setup.push_back(workers_subscription(0));
  for (std::size_t i = 0; i < publishers.size(); ++i) {
    oplang::Fiber f{"pub" + std::to_string(i), {}};
    for (int k = 0; k < publishers[i]; ++k) {
      if (publish_gap > 0) f.ops.push_back(oplang::Advance{publish_gap});
      // Distinct payloads, a byte >= 0x80 among them: a record read back from the wrong
      // place, or damaged, shows.
      oplang::Publish publish{kTopic, "m" + std::to_string(i) + "\xe9" + std::to_string(k), {}, {}};
      publish.via_publisher = i % 2 == 1;
      f.ops.push_back(publish);
    }
    p.fibers.push_back(std::move(f));
  }
  for (std::size_t w = 0; w < workers.size(); ++w) p.fibers.push_back(worker(w, workers[w]));
  oplang::Fiber cut{"cut", {}};
  if (cut_after > 0) cut.ops.push_back(oplang::Advance{cut_after});
  cut.ops.push_back(oplang::Crash{seed});
  p.fibers.push_back(std::move(cut));
  return p;
}

}  // namespace fiberprop
