// Scenario 7: the cost of one subscribe and one unsubscribe on a topic that already has N
// subscriptions, N = 1,000 and 100,000 (push on the synchronous dispatcher, and pull). The
// N subscriptions are built outside the timing; each iteration times a batch of 1,000
// subscribes starting at N, their names spread over the topic's (then takes them back out,
// untimed); or unsubscribes the same way (the 1,000 just added, from N + 1,000 down to N);
// or unsubscribes 1,000 old ones spread over the topic (`unsubscribe_cold`: their states
// are cold in the cache). Nothing is published: a subscribe's own cost, not the push list
// the next publish rebuilds (broker/src/topic.h). `map_index` is a reference: a topic's
// three indexes as bare std::maps (the broker's own until it hashed two of them). Each figure is
// the fastest of 3 runs. Goal: the 100,000th subscribe costs within 2x of the 1,000th.
#include <benchmark/benchmark.h>
#include <broker/broker.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common.h"
#include "main.h"

namespace bench {
namespace {

constexpr std::int64_t kBatch = 1'000;
constexpr std::int64_t kWarmupRounds = 5;
constexpr const char* kTopic = "t";

/// "<prefix><i>" (snprintf: GCC 12 warns -Wrestrict on string concatenation here).
std::string Name(const char* prefix, std::int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%lld", prefix, static_cast<long long>(i));
  return buf;
}

/// The subscriptions of one topic, as a scenario adds and removes them.
class Subscriptions {
 public:
  virtual ~Subscriptions() = default;
  virtual void add(const std::string& name) = 0;
  virtual bool remove(const std::string& name) = 0;
};

enum class Kind { kPush, kPull };

/// Our broker (synchronous dispatcher), one topic; push subscriptions with a handler that
/// confirms, or pull subscriptions with the default options.
class BrokerTopic : public Subscriptions {
 public:
  explicit BrokerTopic(Kind kind) : kind_(kind) { b_.create_topic(kTopic); }
  void add(const std::string& name) override {
    if (kind_ == Kind::kPush) {
      b_.subscribe(kTopic, name, [](const broker::Delivery&) { return true; });
    } else {
      b_.subscribe_pull(kTopic, name, broker::PullOptions{});
    }
  }
  bool remove(const std::string& name) override { return b_.unsubscribe(kTopic, name); }

 private:
  broker::Broker b_{broker::BrokerOptions::synchronous()};
  const Kind kind_;
};

/// The reference: the three indexes a topic kept (by name, by creation sequence, the
/// sequence of a state), as plain std::maps over 1 KB per subscription (about the broker's
/// heap per subscription, BENCHMARKS.md), no locks, no dispatcher. What the memory
/// hierarchy alone makes an O(log n) subscribe cost at 100,000; the broker now finds names
/// and places by hash (broker/src/topic.h), so it may beat it.
class MapIndex : public Subscriptions {
 public:
  void add(const std::string& name) override {
    if (by_name_.count(name)) return;
    auto s = std::make_shared<State>();
    seq_of_.emplace(s.get(), next_);
    by_seq_.emplace(next_++, s);
    by_name_.emplace(name, std::move(s));
  }
  bool remove(const std::string& name) override {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return false;
    const std::shared_ptr<State> s = std::move(it->second);
    by_name_.erase(it);
    auto seq = seq_of_.find(s.get());
    by_seq_.erase(seq->second);
    seq_of_.erase(seq);
    return true;
  }

 private:
  struct State {
    std::array<char, 1024> bytes{};
  };
  std::map<std::string, std::shared_ptr<State>> by_name_;
  std::map<std::uint64_t, std::shared_ptr<State>> by_seq_;
  std::map<const State*, std::uint64_t> seq_of_;
  std::uint64_t next_ = 0;
};

using Make = std::unique_ptr<Subscriptions> (*)();

/// A topic made by `make` with `n` subscriptions named s0..s<n-1>.
std::unique_ptr<Subscriptions> Topic(Make make, std::int64_t n) {
  auto t = make();
  for (std::int64_t i = 0; i < n; ++i) t->add(Name("s", i));
  return t;
}

/// The names of one batch: kBatch names spread evenly over the n names s0..s<n-1> of the
/// topic ("s<k>+" sorts right after "s<k>"), so the batch walks the whole name index, not
/// just its right edge.
std::vector<std::string> SpreadNames(std::int64_t n) {
  std::vector<std::string> batch;
  for (std::int64_t j = 0; j < kBatch; ++j) batch.push_back(Name("s", j * (n / kBatch)) + "+");
  return batch;
}

/// Times `timed` over the batch, runs `untimed` after it; ns per operation into counters.
/// A few rounds first, untimed: the heap's pages are touched before the clock runs.
template <typename Timed, typename Untimed>
void Batches(benchmark::State& state, Timed timed, Untimed untimed) {
  std::int64_t timed_ns = 0;
  std::int64_t round = 0;
  for (; round < kWarmupRounds; ++round) {
    timed(round);
    untimed(round);
  }
  for (auto _ : state) {
    const std::int64_t t0 = now_ns();
    timed(round);
    const std::int64_t dt = now_ns() - t0;
    timed_ns += dt;
    state.SetIterationTime(static_cast<double>(dt) * 1e-9);
    untimed(round);
    ++round;
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["ns_per_op"] =
      static_cast<double>(timed_ns) / static_cast<double>(state.iterations() * kBatch);
}

/// ns per subscribe when the topic has N = range(0) subscriptions: kBatch subscribes of
/// names spread over the topic, taking it from N to N + kBatch (then back, untimed).
void SubscribeCost(benchmark::State& state, Make make) {
  const std::int64_t n = state.range(0);
  auto t = Topic(make, n);
  const std::vector<std::string> batch = SpreadNames(n);
  Batches(
      state,
      [&](std::int64_t) {
        for (const auto& name : batch) t->add(name);
      },
      [&](std::int64_t) {
        for (const auto& name : batch) t->remove(name);
      });
}

/// ns per unsubscribe, the same way: the kBatch subscriptions just added (untimed) are
/// taken back out, from N + kBatch down to N.
void UnsubscribeCost(benchmark::State& state, Make make) {
  const std::int64_t n = state.range(0);
  auto t = Topic(make, n);
  const std::vector<std::string> batch = SpreadNames(n);
  for (const auto& name : batch) t->add(name);
  Batches(
      state,
      [&](std::int64_t) {
        for (const auto& name : batch) benchmark::DoNotOptimize(t->remove(name));
      },
      [&](std::int64_t) {
        for (const auto& name : batch) t->add(name);
      });
}

/// ns per unsubscribe of old subscriptions: every (N / kBatch)-th of the N built at the
/// start (a different slice each round), so each one's state is cold in the cache; put
/// back untimed.
void UnsubscribeColdCost(benchmark::State& state, Make make) {
  const std::int64_t n = state.range(0);
  auto t = Topic(make, n + kBatch);
  const std::int64_t stride = (n + kBatch) / kBatch;
  std::vector<std::string> batch(kBatch);
  auto pick = [&](std::int64_t round) {
    for (std::int64_t j = 0; j < kBatch; ++j) batch[j] = Name("s", j * stride + round % stride);
  };
  pick(0);
  Batches(
      state,
      [&](std::int64_t) {
        for (const auto& name : batch) benchmark::DoNotOptimize(t->remove(name));
      },
      [&](std::int64_t round) {
        for (const auto& name : batch) t->add(name);
        pick(round + 1);
      });
}

template <class C, Kind kind = Kind::kPush>
std::unique_ptr<Subscriptions> make() {
  if constexpr (std::is_same_v<C, BrokerTopic>) {
    return std::make_unique<BrokerTopic>(kind);
  } else {
    return std::make_unique<C>();
  }
}

void register_all() {
  // Warms the process (heap pages, CPU clock) so the first benchmark does not pay for it.
  (void)Topic(make<BrokerTopic, Kind::kPush>, 100'000);
  const std::int64_t iters = scaled(30, 5);
  using Run = void (*)(benchmark::State&, Make);
  for (auto [op, run] : std::vector<std::pair<std::string, Run>>{
           {"subscribe", SubscribeCost},
           {"unsubscribe", UnsubscribeCost},
           {"unsubscribe_cold", UnsubscribeColdCost},
       }) {
    for (auto [contender, make_one] : std::vector<std::pair<std::string, Make>>{
             {"broker_sync_push", make<BrokerTopic, Kind::kPush>},
             {"broker_pull", make<BrokerTopic, Kind::kPull>},
             {"map_index", make<MapIndex>},
         }) {
      benchmark::RegisterBenchmark(
          (op + "/" + contender).c_str(),
          [run = run, make_one = make_one](benchmark::State& s) { run(s, make_one); })
          ->ArgName("subs")
          ->Arg(1'000)
          ->Arg(100'000)
          ->Iterations(iters)
          // The least disturbed of 3 runs: a shared machine's noise only ever adds time.
          ->Repetitions(3)
          ->ComputeStatistics(
              "min",
              [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
          ->ReportAggregatesOnly(true)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace
}  // namespace bench

BENCH_MAIN(bench::register_all)
