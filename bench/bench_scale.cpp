// Scenario 3: 10,000 subscriptions on a 2-thread pool: dispatch cost per delivery against
// a plain loop over std::functions (and Boost.Signals2), memory per subscription, and the
// CPU the process burns when nothing is published.
#include <benchmark/benchmark.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "baselines/good.h"
#include "baselines/signals2.h"
#include "baselines/weak.h"
#include "broker_contender.h"
#include "common.h"
#include "main.h"

namespace bench {
namespace {

/// The plain loop: every handler called in order on the publisher's thread, no lock.
class FunctionLoop {
 public:
  /// Makes `subscribers` handlers.
  FunctionLoop(std::size_t subscribers, const HandlerFactory& make) {
    for (std::size_t i = 0; i < subscribers; ++i) handlers_.push_back(make(i));
  }
  /// Calls each handler once.
  void publish(std::string_view payload) {
    for (auto& h : handlers_) h(payload);
  }

 private:
  std::vector<SubHandler> handlers_;
};

/// Bursts of 16 messages to every subscriber; ns per delivery.
template <class Make>
void dispatch(benchmark::State& state, Make make_contender) {
  const auto subs = static_cast<std::size_t>(state.range(0));
  constexpr std::int64_t kBurst = 16;
  Completion done(subs);
  auto contender = make_contender(subs, [&done](std::size_t i) -> SubHandler {
    return [&done, i](std::string_view) {
      done.confirm(i);
      return true;
    };
  });
  const std::string payload = make_payload(64);
  std::int64_t rounds = 0;
  const std::int64_t t0 = now_ns();
  for (auto _ : state) {
    done.arm(subs, kBurst);
    for (std::int64_t m = 0; m < kBurst; ++m) contender->publish(payload);
    if (!done.wait()) {
      state.SkipWithError("deliveries missing after 60 s");
      break;
    }
    ++rounds;
  }
  const double deliveries = static_cast<double>(rounds * kBurst) * static_cast<double>(subs);
  state.SetItemsProcessed(static_cast<std::int64_t>(deliveries));
  state.counters["ns_per_delivery"] = static_cast<double>(now_ns() - t0) / deliveries;
}

/// Memory per subscription (heap and RSS deltas after one delivery to each), and the
/// process CPU over an idle second.
template <class Make>
void footprint(benchmark::State& state, Make make_contender) {
  const auto subs = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    malloc_trim(0);
    const std::int64_t heap0 = heap_in_use();
    const std::int64_t rss0 = rss_bytes();
    Completion done(subs);
    auto contender = make_contender(subs, [&done](std::size_t i) -> SubHandler {
      return [&done, i](std::string_view) {
        done.confirm(i);
        return true;
      };
    });
    done.arm(subs, 1);
    contender->publish(make_payload(64));
    if (!done.wait()) state.SkipWithError("deliveries missing after 60 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto n = static_cast<double>(subs);
    state.counters["heap_bytes_per_sub"] = static_cast<double>(heap_in_use() - heap0) / n;
    state.counters["rss_bytes_per_sub"] = static_cast<double>(rss_bytes() - rss0) / n;
    const double idle_s = std::max(0.2, scale());
    const double cpu0 = process_cpu_seconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
    state.counters["idle_cpu_pct"] = 100.0 * (process_cpu_seconds() - cpu0) / idle_s;
  }
}

template <class C>
std::unique_ptr<C> plain(std::size_t subs, const HandlerFactory& make) {
  return std::make_unique<C>(subs, make);
}

std::unique_ptr<BrokerFanOut> broker_pool(std::size_t subs, const HandlerFactory& make) {
  return std::make_unique<BrokerFanOut>(subs, make, pool(2));
}

void register_all() {
  const std::int64_t iters = scaled(8);
  for (auto [name, run] : std::vector<std::pair<std::string, void (*)(benchmark::State&)>>{
           {"broker_pool", [](benchmark::State& s) { dispatch(s, broker_pool); }},
           {"function_loop", [](benchmark::State& s) { dispatch(s, plain<FunctionLoop>); }},
           {"signals2", [](benchmark::State& s) { dispatch(s, plain<Signals2FanOut>); }},
       }) {
    benchmark::RegisterBenchmark(("scale/" + name).c_str(), run)
        ->ArgName("subs")
        ->Arg(10'000)
        ->Iterations(iters)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  // The good design needs a thread per subscription: 1,000 of them, figures per subscription.
  for (auto [name, subs, run] :
       std::vector<std::tuple<std::string, int, void (*)(benchmark::State&)>>{
           {"broker_pool", 10'000, [](benchmark::State& s) { footprint(s, broker_pool); }},
           {"function_loop", 10'000,
            [](benchmark::State& s) { footprint(s, plain<FunctionLoop>); }},
           {"good", 1'000, [](benchmark::State& s) { footprint(s, plain<GoodFanOut>); }},
       }) {
    benchmark::RegisterBenchmark(("scale_footprint/" + name).c_str(), run)
        ->ArgName("subs")
        ->Arg(subs)
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace bench

BENCH_MAIN(bench::register_all)
