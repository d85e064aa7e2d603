// The fiber properties' generators of concurrent programs (programs.h), shared by the
// properties and the swarm coverage test.
//
// Swarm testing: with `swarm`, a case first draws which kinds it may use (a subset of the
// worker op kinds, or of the handler behaviours, of a size drawn from 1 to all; every kind
// in about half of the subsets), then draws only from those. Long stretches of one kind
// happen (many nacks in a row: dead letters; only failures: back-offs and dead letters),
// which the uniform mix reaches rarely. Without `swarm` every kind is always available.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "programs.h"
#include "uniform.h"

namespace fiberprop {

/// The kinds selected by bit mask `mask` out of `all` (all of them when `mask` has none).
template <typename T>
std::vector<T> swarm_subset(const std::vector<T>& all, unsigned mask) {
  std::vector<T> out;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (mask & (1u << i)) out.push_back(all[i]);
  return out.empty() ? all : out;
}

/// A mask for swarm_subset over `n` kinds: with `swarm`, k of them, k drawn uniformly from 1
/// to n (as the model's swarm_of draws: small subsets, long runs of one kind, are as likely
/// as large ones) and then the k kinds, each set of k equally likely; else every kind.
inline rc::Gen<unsigned> gen_swarm_mask(bool swarm, std::size_t n) {
  const unsigned every = (1u << n) - 1;
  if (!swarm) return rc::gen::just(every);
  return rc::gen::exec([n] {
    std::vector<unsigned> bits;
    for (std::size_t i = 0; i < n; ++i) bits.push_back(1u << i);
    const std::size_t k = *rc::gen::noShrink(props::uniform_in<std::size_t>(1, n + 1));
    unsigned mask = 0;
    for (std::size_t i = 0; i < k; ++i) {  // k picks without replacement
      const std::size_t j = *rc::gen::noShrink(props::uniform_in<std::size_t>(i, n));
      std::swap(bits[i], bits[j]);
      mask |= bits[i];
    }
    return mask;
  });
}

/// Pull programs: 1-2 publishers, 1-3 workers of up to 10 ops; a third on a topic keeping
/// 2-3 messages, a quarter with a late subscriber. Swarm keeps `poll` (progress) and draws
/// a subset of the other kinds.
inline rc::Gen<PullScript> gen_pull_script(bool swarm) {
  const std::vector<WorkerOp::Kind> kinds = {
      WorkerOp::kAckOldest, WorkerOp::kNackOldest, WorkerOp::kAckAll,    WorkerOp::kExpire,
      WorkerOp::kSleep,     WorkerOp::kPollWait,   WorkerOp::kTermOldest};
  return rc::gen::mapcat(gen_swarm_mask(swarm, kinds.size()), [kinds](unsigned mask) {
    std::vector<WorkerOp::Kind> kept = swarm_subset(kinds, mask);
    kept.insert(kept.begin(), 2, WorkerOp::kPoll);  // 2 shares, as against 1 per other kind
    auto op = rc::gen::map(rc::gen::pair(rc::gen::elementOf(kept), props::uniform_in(1, 4)),
                           [](const std::pair<WorkerOp::Kind, int>& p) {
                             return WorkerOp{p.first, p.second};
                           });
    return rc::gen::build<PullScript>(
        rc::gen::set(&PullScript::publishers,
                     rc::gen::resize(2, rc::gen::nonEmpty(rc::gen::container<std::vector<int>>(
                                            props::uniform_in(1, 5))))),
        rc::gen::set(
            &PullScript::workers,
            rc::gen::resize(
                3, rc::gen::nonEmpty(rc::gen::container<std::vector<std::vector<WorkerOp>>>(
                       rc::gen::resize(10, rc::gen::nonEmpty(
                                               rc::gen::container<std::vector<WorkerOp>>(op))))))),
        rc::gen::set(&PullScript::retention,
                     rc::gen::weightedElement<std::size_t>({{4, 0}, {1, 2}, {1, 3}})),
        rc::gen::set(&PullScript::setup_messages, rc::gen::element(0, 0, 2, 3)),
        rc::gen::set(&PullScript::publish_gap, rc::gen::element(0, 0, 10, 20)),
        rc::gen::set(
            &PullScript::late_after,
            rc::gen::weightedOneOf<int>({{3, rc::gen::just(-1)}, {1, props::uniform_in(0, 8)}})),
        rc::gen::set(&PullScript::max_in_flight,
                     rc::gen::weightedElement<std::size_t>({{3, 0}, {1, 1}, {1, 2}})));
  });
}

/// Timed pull programs (R11's waits, R17): an expiry period of 5, 20, 50 or 200 ms against
/// ack timeouts of 10 or 30 ms, 1-2 publishers of 1-5 messages 0-20 ms apart, 1-3 workers of
/// up to 8 ops (poll and poll_wait most, acks rare so holds expire, extends of every
/// length), every side option of q equally often, 1-2 waiters on q and a move a fifth of
/// the time each.
inline rc::Gen<TimedPullScript> gen_timed_pull_script() {
  using S = TimedPullScript::Side;
  using M = TimedPullScript::Move;
  auto kind = rc::gen::weightedElement<WorkerOp::Kind>({{3, WorkerOp::kPoll},
                                                        {2, WorkerOp::kPollWait},
                                                        {1, WorkerOp::kAckOldest},
                                                        {1, WorkerOp::kNackOldest},
                                                        {2, WorkerOp::kExtendOldest},
                                                        {2, WorkerOp::kSleep}});
  auto op = rc::gen::map(rc::gen::pair(std::move(kind), props::uniform_in(1, 5)),
                         [](const std::pair<WorkerOp::Kind, int>& p) {
                           return WorkerOp{p.first, p.second};
                         });
  return rc::gen::build<TimedPullScript>(
      rc::gen::set(&TimedPullScript::publishers,
                   rc::gen::resize(2, rc::gen::nonEmpty(rc::gen::container<std::vector<int>>(
                                          props::uniform_in(1, 6))))),
      rc::gen::set(&TimedPullScript::publish_gap, rc::gen::element(0, 3, 10, 20)),
      rc::gen::set(&TimedPullScript::period, rc::gen::element<std::int64_t>(5, 20, 50, 200)),
      rc::gen::set(&TimedPullScript::ack_timeout, rc::gen::element<std::int64_t>(10, 30)),
      rc::gen::set(
          &TimedPullScript::workers,
          rc::gen::resize(
              3, rc::gen::nonEmpty(
                     rc::gen::container<std::vector<std::vector<WorkerOp>>>(rc::gen::resize(
                         8, rc::gen::nonEmpty(rc::gen::container<std::vector<WorkerOp>>(op))))))),
      rc::gen::set(&TimedPullScript::side,
                   rc::gen::element(S::kPlain, S::kFilter, S::kOrdered, S::kBounded, S::kPaused)),
      rc::gen::set(&TimedPullScript::side_waiters, props::uniform_in(1, 3)),
      rc::gen::set(&TimedPullScript::waits, props::uniform_in(1, 4)),
      rc::gen::set(&TimedPullScript::wait_ms, rc::gen::element<std::int64_t>(7, 20, 45)),
      rc::gen::set(&TimedPullScript::move,
                   rc::gen::weightedElement<M>(
                       {{2, M::kNone}, {1, M::kSeek}, {1, M::kResume}, {1, M::kUnsubscribe}})),
      rc::gen::set(&TimedPullScript::move_after, props::uniform_in(0, 40)));
}

/// A sync policy: always, none, or every(5|10|25|50).
inline rc::Gen<oplang::SyncPolicy> gen_sync_policy() {
  using K = oplang::SyncPolicy::Kind;
  return rc::gen::oneOf(
      rc::gen::just(oplang::SyncPolicy{}), rc::gen::just(oplang::SyncPolicy{K::kNone, 0}),
      rc::gen::map(rc::gen::element<model::Millis>(5, 10, 25, 50), [](model::Millis ms) {
        return oplang::SyncPolicy{K::kEvery, ms};
      }));
}

/// Durable programs with a power cut: a pair of sync policies (every pair of kinds equally
/// likely), 1-2 publishers of 1-6 messages 0-15 ms apart, 1-2 workers of up to 8 ops (poll,
/// ack, nack, sleep), and a cut 0-150 ms into the run.
inline rc::Gen<DurableScript> gen_durable_script() {
  const std::vector<WorkerOp::Kind> kinds = {WorkerOp::kPoll,       WorkerOp::kPoll,
                                             WorkerOp::kAckOldest,  WorkerOp::kAckAll,
                                             WorkerOp::kNackOldest, WorkerOp::kSleep};
  auto op = rc::gen::map(rc::gen::pair(rc::gen::elementOf(kinds), props::uniform_in(1, 4)),
                         [](const std::pair<WorkerOp::Kind, int>& p) {
                           return WorkerOp{p.first, p.second};
                         });
  return rc::gen::build<DurableScript>(
      rc::gen::set(&DurableScript::publish_sync, gen_sync_policy()),
      rc::gen::set(&DurableScript::commit_sync, gen_sync_policy()),
      rc::gen::set(&DurableScript::publishers,
                   rc::gen::resize(2, rc::gen::nonEmpty(rc::gen::container<std::vector<int>>(
                                          props::uniform_in(1, 7))))),
      rc::gen::set(&DurableScript::publish_gap, props::uniform_in(0, 16)),
      rc::gen::set(
          &DurableScript::workers,
          rc::gen::resize(
              2, rc::gen::nonEmpty(
                     rc::gen::container<std::vector<std::vector<WorkerOp>>>(rc::gen::resize(
                         8, rc::gen::nonEmpty(rc::gen::container<std::vector<WorkerOp>>(op))))))),
      rc::gen::set(&DurableScript::cut_after, props::uniform_in(0, 151)),
      rc::gen::set(&DurableScript::seed, props::uniform_in<std::uint64_t>(0, 1u << 20)));
}

/// Handler behaviours, swarm-selected, with their usual weights.
inline rc::Gen<std::vector<Behavior>> gen_handler(
    const std::vector<std::pair<int, Behavior>>& weighted, unsigned mask) {
  std::vector<Behavior> pool;  // each kept kind as often as its weight
  for (std::size_t i = 0; i < weighted.size(); ++i)
    if (mask & (1u << i))
      pool.insert(pool.end(), static_cast<std::size_t>(weighted[i].first), weighted[i].second);
  if (pool.empty())
    for (const auto& [w, b] : weighted) pool.insert(pool.end(), static_cast<std::size_t>(w), b);
  return rc::gen::resize(
      4, rc::gen::nonEmpty(rc::gen::container<std::vector<Behavior>>(rc::gen::elementOf(pool))));
}

/// Push programs: Lane or Pool(2), 1-2 publishers of 1-3 messages, in a quarter of the cases
/// 6-16 more published by the setup (a backlog: a lane's runs grow to 8 and more, so a pause,
/// seek or unsubscribe lands inside one), two subscriptions with cyclic behaviours, maybe
/// fibers that unsubscribe s1, subscribe `late`, join s0's group, seek, pause or redrive s0
/// while the publishers run. Swarm draws the behaviours a case uses.
inline rc::Gen<PushScript> gen_push_script(bool swarm) {
  const std::vector<std::pair<int, Behavior>> weighted = {
      {6, Behavior::kOk},       {2, Behavior::kFail},      {1, Behavior::kThrow},
      {1, Behavior::kStall},    {1, Behavior::kStallLong}, {1, Behavior::kUnsubscribeSelf},
      {1, Behavior::kStallFail}};
  return rc::gen::mapcat(gen_swarm_mask(swarm, weighted.size()), [weighted](unsigned mask) {
    return rc::gen::build<PushScript>(
        rc::gen::set(&PushScript::pool), rc::gen::set(&PushScript::pool_timeout),
        rc::gen::set(&PushScript::publishers,
                     rc::gen::resize(2, rc::gen::nonEmpty(rc::gen::container<std::vector<int>>(
                                            props::uniform_in(1, 4))))),
        rc::gen::set(&PushScript::handlers, rc::gen::container<std::vector<std::vector<Behavior>>>(
                                                2, gen_handler(weighted, mask))),
        rc::gen::set(&PushScript::unsubscribe_after, props::uniform_in(-1, 8)),
        rc::gen::set(
            &PushScript::setup_messages,
            rc::gen::weightedOneOf<int>({{3, rc::gen::just(0)}, {1, props::uniform_in(6, 17)}})),
        rc::gen::set(
            &PushScript::late_after,
            rc::gen::weightedOneOf<int>({{2, rc::gen::just(-1)}, {1, props::uniform_in(0, 8)}})),
        rc::gen::set(&PushScript::retention,
                     rc::gen::weightedElement<std::size_t>({{4, 0}, {1, 2}, {1, 3}})),
        rc::gen::set(&PushScript::max_deliveries, rc::gen::weightedElement<int>({{4, 3}, {1, 1}})),
        rc::gen::set(
            &PushScript::join_after,
            rc::gen::weightedOneOf<int>({{3, rc::gen::just(-1)}, {1, props::uniform_in(0, 8)}})),
        rc::gen::set(
            &PushScript::seek_after,
            rc::gen::weightedOneOf<int>({{3, rc::gen::just(-1)}, {1, props::uniform_in(0, 8)}})),
        rc::gen::set(
            &PushScript::pause_after,
            rc::gen::weightedOneOf<int>({{3, rc::gen::just(-1)}, {1, props::uniform_in(0, 8)}})),
        rc::gen::set(&PushScript::pause_for, props::uniform_in(0, 12)),
        rc::gen::set(
            &PushScript::redrive_after,
            rc::gen::weightedOneOf<int>({{3, rc::gen::just(-1)}, {1, props::uniform_in(0, 160)}})));
  });
}

/// The timing rules (R15) and shutdown (R16): long runs of messages (a pool task ends after
/// 32 offers), back-offs long enough to see, publishers spread over virtual time, 1-2 pool
/// threads, in a quarter of the cases a shutdown mid-work, and in a quarter R24 back-off
/// lists (a failed message waits while newer ones go on, also inside a lane's run).
inline rc::Gen<PushScript> gen_timed_push_script(bool swarm) {
  const std::vector<std::pair<int, Behavior>> weighted = {{6, Behavior::kOk},
                                                          {3, Behavior::kFail},
                                                          {1, Behavior::kThrow},
                                                          {1, Behavior::kStall},
                                                          {1, Behavior::kStallLong}};
  return rc::gen::mapcat(gen_swarm_mask(swarm, weighted.size()), [weighted](unsigned mask) {
    return rc::gen::build<PushScript>(
        rc::gen::set(&PushScript::pool), rc::gen::set(&PushScript::pool_timeout),
        rc::gen::set(&PushScript::threads, props::uniform_in<std::size_t>(1, 3)),
        rc::gen::set(&PushScript::backoff, rc::gen::element<std::int64_t>(5, 40, 300)),
        rc::gen::set(&PushScript::setup_messages,
                     rc::gen::weightedOneOf<int>(
                         {{1, props::uniform_in(0, 4)}, {1, props::uniform_in(30, 40)}})),
        rc::gen::set(&PushScript::publish_gap, rc::gen::element(0, 0, 3, 30)),
        rc::gen::set(&PushScript::retention,
                     rc::gen::weightedElement<std::size_t>({{5, 0}, {1, 3}, {1, 20}})),
        rc::gen::set(&PushScript::shutdown,
                     rc::gen::weightedElement<bool>({{3, false}, {1, true}})),
        rc::gen::set(
            &PushScript::waits,
            rc::gen::weightedOneOf<std::vector<std::int64_t>>(
                {{3, rc::gen::just(std::vector<std::int64_t>{})},
                 {1, rc::gen::resize(
                         2, rc::gen::nonEmpty(rc::gen::container<std::vector<std::int64_t>>(
                                rc::gen::element<std::int64_t>(0, 2, 15, 60))))}})),
        rc::gen::set(
            &PushScript::publishers,
            rc::gen::resize(2, rc::gen::container<std::vector<int>>(props::uniform_in(1, 4)))),
        rc::gen::set(&PushScript::handlers,
                     rc::gen::resize(2, rc::gen::nonEmpty(
                                            rc::gen::container<std::vector<std::vector<Behavior>>>(
                                                gen_handler(weighted, mask))))));
  });
}

}  // namespace fiberprop
