// Scenario 2: publish-to-handler latency at fixed rates (10k, 100k, 1M msg/s), measured
// from each message's intended send time so a stalled publisher cannot hide a stall
// (coordinated omission); one subscription; p50/p99/p99.9 from a log-bucket histogram.
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <string>

#include "baselines/good.h"
#include "baselines/spsc.h"
#include "baselines/zmq.h"
#include "broker_contender.h"
#include "common.h"
#include "main.h"

namespace bench {
namespace {

/// Publishes at a fixed rate; the handler records now - intended send time.
template <class Make>
void latency(benchmark::State& state, Make make_contender) {
  const std::int64_t rate = state.range(0);
  const std::int64_t count = scaled(rate / 5, 200);  // about 0.2 s of traffic per rate...
  const std::int64_t n = std::max<std::int64_t>(count, scaled(10'000, 200));  // ...>= 10k
  Histogram hist;  // written by the one subscriber only
  Completion done(1);
  auto contender = make_contender([&](std::size_t) -> SubHandler {
    return [&](std::string_view p) {
      const std::int64_t intended = read_stamp(p);
      if (intended > 0) hist.record(now_ns() - intended);
      done.confirm(0);
      return true;
    };
  });
  const std::string warm = make_payload(64, 0);
  done.arm(1, 1000);
  for (int i = 0; i < 1000; ++i) contender->publish(warm);
  done.wait();
  const std::int64_t period = 1'000'000'000 / rate;
  bool ok = true;
  for (auto _ : state) {
    done.arm(1, n);
    std::string payload = make_payload(64, 1);
    const std::int64_t t0 = now_ns() + 1'000'000;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t intended = t0 + i * period;
      wait_until_ns(intended);
      std::memcpy(payload.data(), &intended, sizeof intended);
      contender->publish(payload);
    }
    ok = done.wait();
  }
  if (!ok) state.SkipWithError("deliveries missing after 60 s");
  state.SetItemsProcessed(static_cast<std::int64_t>(hist.count()));
  state.counters["p50_us"] = hist.quantile(0.50) / 1e3;
  state.counters["p99_us"] = hist.quantile(0.99) / 1e3;
  state.counters["p999_us"] = hist.quantile(0.999) / 1e3;
  state.counters["max_us"] = hist.max() / 1e3;
  state.counters["target_rate"] = static_cast<double>(rate);
}

template <class C>
auto plain() {
  return [](const HandlerFactory& make) { return std::make_unique<C>(1, make); };
}

void register_all() {
  using Run = std::function<void(benchmark::State&)>;
  const std::vector<std::pair<std::string, Run>> contenders = {
      {"broker_lane",
       [](benchmark::State& s) {
         latency(s, [](const HandlerFactory& m) {
           return std::make_unique<BrokerFanOut>(1, m, lane());
         });
       }},
      {"broker_pool",
       [](benchmark::State& s) {
         latency(s, [](const HandlerFactory& m) {
           return std::make_unique<BrokerFanOut>(1, m, pool(2));
         });
       }},
      {"good", [](benchmark::State& s) { latency(s, plain<GoodFanOut>()); }},
      {"spsc", [](benchmark::State& s) { latency(s, plain<SpscFanOut>()); }},
      {"zmq", [](benchmark::State& s) { latency(s, plain<ZmqFanOut>()); }},
  };
  for (const auto& [name, run] : contenders) {
    benchmark::RegisterBenchmark(("latency/" + name).c_str(), run)
        ->ArgName("rate")
        ->Arg(10'000)
        ->Arg(100'000)
        ->Arg(1'000'000)
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace bench

BENCH_MAIN(bench::register_all)
