// Generating parallel pull programs and running them on broker_fiber.
#include "linearizability_program.h"

#include <deque>
#include <memory>
#include <sstream>
#include <utility>

#include "broker/broker.h"
#include "history.h"
#include "sync/sync.h"
#include "uniform.h"

namespace fiberprop {
namespace {

using Kind = PullOp::Kind;

// An answer's offset when the run resolves it from the member's hand.
constexpr std::uint64_t kFromHand = ~std::uint64_t{0};

rc::Gen<PullOp> gen_op(int subs) {
  const auto sub = props::uniform_in(0, subs);
  const auto member = props::uniform_in(0, 2);
  const auto now = rc::gen::map(props::uniform_in(0, 7), [](int k) { return std::int64_t{5} * k; });
  const auto offset = props::uniform_in<std::uint64_t>(0, 5);
  auto settle = [=](Kind kind) {
    return rc::gen::apply([kind](int s, int m, std::uint64_t o,
                                 std::int64_t t) { return PullOp{kind, s, m, o, t, 0, 0}; },
                          sub, member, offset, now);
  };
  return rc::gen::weightedOneOf<PullOp>(
      {{2, rc::gen::map(props::uniform_in(0, 3),
                        [](int key) {
                          PullOp op{Kind::kPublish};
                          op.key = key;
                          return op;
                        })},
       {4, rc::gen::apply([](int s, int m, std::int64_t t,
                             int max) { return PullOp{Kind::kPoll, s, m, 0, t, max, 0}; },
                          sub, member, now, props::uniform_in(1, 3))},
       {3, settle(Kind::kAck)},
       {2, settle(Kind::kNack)},
       {1, rc::gen::apply(
               [](PullOp op, int ext) {
                 op.kind = Kind::kExtend;
                 op.arg = ext;
                 return op;
               },
               settle(Kind::kExtend), rc::gen::element(5, 10))},
       {2, rc::gen::map(now, [](std::int64_t t) {
          return PullOp{Kind::kExpire, 0, 0, 0, t};
        })}});
}

// How many ops and branches grows with the size (inRange scales), the choices inside do not
// (uniform.h).
rc::Gen<std::vector<std::vector<PullOp>>> gen_branches(int subs, const ProgramShape& shape) {
  auto branch = rc::gen::mapcat(rc::gen::inRange(shape.min_ops, shape.max_ops + 1), [subs](int n) {
    return rc::gen::container<std::vector<PullOp>>(static_cast<std::size_t>(n), gen_op(subs));
  });
  return rc::gen::mapcat(rc::gen::inRange(shape.min_branches, shape.max_branches + 1),
                         [branch](int n) {
                           return rc::gen::container<std::vector<std::vector<PullOp>>>(
                               static_cast<std::size_t>(n), branch);
                         });
}

// What a member (a branch) knows of its group (R32): the generation it last saw (set by
// join and poll_group) and the messages poll_group gave it, not yet answered, each with
// its receipt's generation (so a rebalance in between makes it a stale one).
struct MemberView {
  std::uint64_t seen = 0;
  struct Receipt {
    int partition = 0;
    std::uint64_t offset = 0;
    std::uint64_t generation = 0;  // the one poll_group gave it out in: a worker's receipt
  };
  std::deque<Receipt> hand;
};

std::string apply_or_throw(broker::Broker& b, const PullOp& op, MemberView& view) {
  const std::string sub = "p" + std::to_string(op.sub);
  const std::string member = "m" + std::to_string(op.member);
  const std::string topic =
      op.partition < 0 ? std::string(kLinTopic) : broker::partition_name(kLinTopic, op.partition);
  const broker::Receipt receipt{topic, sub, member, op.offset, op.generation};
  const char* boolean[] = {"false", "true"};
  switch (op.kind) {
    case Kind::kCreateTopic: {
      broker::TopicOptions options;
      options.partitions = static_cast<std::uint32_t>(std::max<std::int64_t>(1, op.arg));
      b.create_topic(kLinTopic, options);
      return "ok";
    }
    case Kind::kJoin: {
      broker::GroupOptions options;
      options.assignor = static_cast<broker::Assignor>(op.key);
      options.pull.ack_timeout = broker::Millis{op.arg};
      options.pull.max_deliveries = op.max_deliveries;
      options.pull.start = broker::StartPosition::beginning();
      const broker::Membership m = b.join_group(kLinTopic, sub, member, options);
      view.seen = m.generation;
      return format_membership(m.generation, m.partitions);
    }
    case Kind::kLeave:
      return boolean[b.leave_group(kLinTopic, sub, member)];
    case Kind::kPollGroup: {
      std::vector<PolledItem> items;
      for (const broker::Received& r :
           b.poll_group(kLinTopic, sub, member, static_cast<std::size_t>(op.arg),
                        broker::at(broker::Millis{op.now}))) {
        items.push_back({r.message->offset(), r.attempt, r.deadline.time_since_epoch().count(),
                         r.receipt.topic, r.receipt.generation});
        view.seen = r.receipt.generation;
        view.hand.push_back(
            {r.receipt.topic.back() - '0', r.message->offset(), r.receipt.generation});
      }
      return format_poll(items);
    }
    case Kind::kSubscribePull: {
      broker::PullOptions options;
      options.ack_timeout = broker::Millis{op.arg};
      options.max_deliveries = op.max_deliveries;
      options.start = broker::StartPosition::beginning();
      options.ordered_by_key = op.key == 1;
      b.subscribe_pull(kLinTopic, sub, options);
      return "ok";
    }
    case Kind::kPublish:
      return std::to_string(b.publish(kLinTopic, "x", {},
                                      op.key == 0   ? ""
                                      : op.key == 1 ? "a"
                                                    : "d"));
    case Kind::kPoll: {
      std::vector<PolledItem> items;
      for (const broker::Received& r :
           b.poll(kLinTopic, sub, member, static_cast<std::size_t>(op.arg),
                  broker::at(broker::Millis{op.now})))
        items.push_back({r.message->offset(), r.attempt, r.deadline.time_since_epoch().count()});
      return format_poll(items);
    }
    case Kind::kAck:
      return boolean[static_cast<bool>(b.ack(receipt, broker::at(broker::Millis{op.now})))];
    case Kind::kNack:
      return boolean[static_cast<bool>(b.nack(receipt, broker::at(broker::Millis{op.now})))];
    case Kind::kExtend:
      return boolean[static_cast<bool>(
          b.extend(receipt, broker::at(broker::Millis{op.now}), broker::Millis{op.arg}))];
    case Kind::kExpire: {
      std::vector<ExpiredItem> items;
      for (const broker::Expired& e : b.expire(broker::at(broker::Millis{op.now})))
        items.push_back({e.subscription, e.offset, e.dead_lettered});
      return format_expire(items);
    }
  }
  return "?";
}

std::string apply_broker(broker::Broker& b, const PullOp& op, MemberView& view) {
  try {
    return apply_or_throw(b, op, view);
  } catch (const broker::Error& e) {
    return format_error(broker::to_string(e.code()));
  }
}

}  // namespace

std::string ParallelProgram::show() const {
  std::ostringstream out;
  out << "  prefix:";
  for (const PullOp& op : prefix) out << " " << to_string(op) << ";";
  out << "\n";
  for (std::size_t b = 0; b < branches.size(); ++b) {
    out << "  branch " << b << ":";
    for (const PullOp& op : branches[b]) out << " " << to_string(op) << ";";
    out << "\n";
  }
  return out.str();
}

rc::Gen<ParallelProgram> gen_parallel_program(const ProgramShape& shape) {
  // (ack_timeout, max_deliveries), and R31's order on half the subscriptions.
  const auto options =
      rc::gen::pair(rc::gen::pair(rc::gen::element<std::int64_t>(10, 20), props::uniform_in(0, 4)),
                    props::uniform_in(0, 2));
  return rc::gen::mapcat(rc::gen::inRange(1, shape.max_subscriptions + 1), [=](int subs) {
    return rc::gen::apply(
        [subs](const std::vector<std::pair<std::pair<std::int64_t, int>, int>>& sub_options,
               int publishes, std::vector<std::vector<PullOp>> branches) {
          ParallelProgram p;
          p.prefix.push_back({Kind::kCreateTopic});
          for (int s = 0; s < subs; ++s) {
            const auto& [timeout_and_max, ordered] = sub_options[s];
            p.prefix.push_back({Kind::kSubscribePull, s, 0, 0, 0, timeout_and_max.first,
                                timeout_and_max.second, ordered});
          }
          // Keys a, b, a, none, ...: ordered subscriptions have a key to hold back.
          for (int i = 0; i < publishes; ++i) {
            PullOp publish{Kind::kPublish};
            publish.key = i % 4 == 3 ? 0 : 1 + i % 2;
            p.prefix.push_back(publish);
          }
          p.branches = std::move(branches);
          return p;
        },
        rc::gen::container<std::vector<std::pair<std::pair<std::int64_t, int>, int>>>(
            static_cast<std::size_t>(subs), options),
        props::uniform_in(0, 5), gen_branches(subs, shape));
  });
}

rc::Gen<ParallelProgram> gen_group_program(const ProgramShape& shape) {
  // One group "p0" over a topic of 2 partitions; branch k is member mk. Its ops: joins (with
  // the group's options, so they succeed), leaves, poll_group, and answers to a partition's
  // offset with the generation the member last saw; publishes in between.
  const auto now = rc::gen::map(props::uniform_in(0, 7), [](int k) { return std::int64_t{5} * k; });
  // Three answers in four name the oldest message in the member's hand (resolved when it
  // runs, as the generation is); the rest any offset of a partition.
  const auto answer = [=](Kind kind) {
    return rc::gen::apply(
        [kind](int partition, std::uint64_t offset, bool from_hand, std::int64_t t) {
          PullOp op{kind, 0, 0, from_hand ? kFromHand : offset, t, kind == Kind::kExtend ? 10 : 0,
                    0};
          op.partition = partition;
          return op;
        },
        props::uniform_in(0, 2), props::uniform_in<std::uint64_t>(0, 4),
        rc::gen::map(props::uniform_in(0, 4), [](int k) { return k != 0; }), now);
  };
  // No publish in the branches (the prefix publishes): poll_group takes one partition's lock
  // at a time, so a publish racing it can show up on a later round than a sequential run
  // allows (CI found [t-1:0 t-0:0]). Publishes are keyed: a keyless one takes a turn of the round
  // robin before it appends, so two racing ones may land in an order no sequential run gives (R29
  // promises the spread, not that). No expire: it takes one partition's lock at a time, like expire
  // over two subscriptions (R11ExpireIsAtomicPerSubscriptionNotAcrossThem).
  const auto op = rc::gen::weightedOneOf<PullOp>(
      {{2, rc::gen::just(PullOp{Kind::kJoin})},
       {1, rc::gen::just(PullOp{Kind::kLeave})},
       {4, rc::gen::apply(
               [](std::int64_t t, int max) { return PullOp{Kind::kPollGroup, 0, 0, 0, t, max, 0}; },
               now, props::uniform_in(1, 3))},
       {3, answer(Kind::kAck)},
       {1, answer(Kind::kNack)},
       {1, answer(Kind::kExtend)}});
  const auto branch =
      rc::gen::mapcat(rc::gen::inRange(shape.min_ops, shape.max_ops + 1), [op](int n) {
        return rc::gen::container<std::vector<PullOp>>(static_cast<std::size_t>(n), op);
      });
  return rc::gen::apply(
      [](int assignor, std::int64_t timeout, int max_deliveries, int publishes,
         std::vector<std::vector<PullOp>> branches) {
        ParallelProgram p;
        p.prefix.push_back({Kind::kCreateTopic, 0, 0, 0, 0, 2});
        PullOp join{Kind::kJoin, 0, 9, 0, 0, timeout, max_deliveries, assignor};
        p.prefix.push_back(join);  // m9 makes the group and leaves: the branches share it
        p.prefix.push_back(PullOp{Kind::kLeave, 0, 9});
        for (int i = 0; i < publishes; ++i) {
          PullOp publish{Kind::kPublish};
          publish.key = 1 + i % 2;
          p.prefix.push_back(publish);
        }
        for (std::size_t k = 0; k < branches.size(); ++k) {
          branches[k].insert(branches[k].begin(), PullOp{Kind::kJoin});  // a worker joins first
          for (PullOp& o : branches[k]) {
            o.member = static_cast<int>(k);
            if (o.kind == Kind::kJoin)
              o = PullOp{Kind::kJoin, 0, o.member, 0, 0, timeout, max_deliveries, assignor};
          }
        }
        p.branches = std::move(branches);
        return p;
      },
      props::uniform_in(0, 4), rc::gen::element<std::int64_t>(10, 20), props::uniform_in(0, 4),
      props::uniform_in(0, 5),
      rc::gen::mapcat(rc::gen::inRange(shape.min_branches, shape.max_branches + 1),
                      [branch](int n) {
                        return rc::gen::container<std::vector<std::vector<PullOp>>>(
                            static_cast<std::size_t>(n), branch);
                      }));
}

ParallelRun run_parallel(const ParallelProgram& program, const fiber::Schedule& schedule) {
  auto history = std::make_shared<ParallelHistory>();
  auto shared = std::make_shared<const ParallelProgram>(program);
  fiber::RunResult run =
      fiber::run_fibers({[history, shared] {
                          std::uint64_t clock = 0;
                          broker::Broker b{broker::BrokerOptions::synchronous().with_clock(
                              std::make_shared<broker::ManualClock>())};
                          // The generation each member (a branch, or the prefix) last saw: a
                          // group answer carries it, as a worker's receipt would (R32).
                          // An answer "from the hand" names the oldest message there, with
                          // its receipt's generation; any other, the member's latest.
                          std::vector<MemberView> views(shared->branches.size() + 1);
                          auto record = [&](PullOp op, int branch, std::vector<Call>& into) {
                            MemberView& mine = views[static_cast<std::size_t>(branch + 1)];
                            if (op.partition >= 0) {
                              op.generation = mine.seen;
                              if (op.offset == kFromHand) {
                                op.offset = 0;
                                if (!mine.hand.empty()) {
                                  op.partition = mine.hand.front().partition;
                                  op.offset = mine.hand.front().offset;
                                  op.generation = mine.hand.front().generation;
                                  mine.hand.pop_front();
                                }
                              }
                            }
                            // The history's order is happens-before (history.h).
                            observer_synchronizes();
                            Call c{op, branch, ++clock, 0, ""};
                            c.result = apply_broker(b, op, mine);
                            observer_synchronizes();
                            c.ret = ++clock;  // no scheduling point since the call returned
                            into.push_back(std::move(c));
                          };
                          for (const PullOp& op : shared->prefix) record(op, -1, history->prefix);
                          std::vector<broker::sync::Thread> threads;
                          for (std::size_t k = 0; k < shared->branches.size(); ++k) {
                            threads.emplace_back([&, k] {
                              for (const PullOp& op : shared->branches[k]) {
                                fiber::yield("next-op");
                                record(op, static_cast<int>(k), history->calls);
                              }
                            });
                          }
                          for (auto& t : threads) t.join();
                        }},
                        schedule);
  return {std::move(run), *history};
}

}  // namespace fiberprop
