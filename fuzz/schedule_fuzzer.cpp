// Bytes -> a small concurrent program on the real broker (broker_fiber) plus the fiber
// choice sequence that interleaves it -> the concurrent invariants of properties/fiber
// (history.h's Jepsen-named checkers: lost, duplicated-beyond-redelivery, double-held,
// acked-came-back, nonmonotonic, delivery-after-unsubscribe, counters; and no deadlock or
// livelock). The bytes decode to the generator-side shapes of properties/fiber/programs.h,
// the same the RapidCheck properties generate, which become operation-language programs
// (oplang/program.h) run by properties/fiber/program_runner.h; only the decoding from bytes
// lives here.
//
// Format. Program choices are one byte each, read from the END of the input
// (FuzzedDataProvider's integral order); the schedule is what is left, read from the FRONT.
//   kind                 b % 3: 0 pull workers, 1 push on Lane, 2 push on Pool(2)
//   pull:  publishers    1 + b % 2, each publishing 1 + b % 4 messages
//          workers       1 + b % (3 - publishers)     (2-3 program fibers in all)
//          per worker    1 + b % 6 ops, each one byte: kind b % 6 (poll, ack-oldest,
//                        nack-oldest, ack-all, expire, sleep), arg 1 + (b / 6) % 3
//   push:  pool timeout  b % 2 (Pool only: handler_timeout 50ms)
//          publishers    1 + b % 2, each publishing 1 + b % 3 messages
//          unsubscriber  b % 9: 0 none, n > 0: a fiber that yields n - 1 times, then
//                        unsubscribes s1 (only with one publisher: 2-3 program fibers)
//          handlers s0,s1 each 1 + b % 4 behaviours cycled per call, each one byte b % 8:
//                        0-2 ok, 3 fail, 4 throw, 5 stall 20ms, 6 stall 80ms, 7 unsubscribe self
//                        (the program's handler scripts unroll the cycle: confirm, reject,
//                        throw, stall(20), stall(80), unsubscribe)
//   schedule             every remaining byte is one walk choice (fiber::Schedule::walk:
//                        c % runnable, 0 = keep running), under weak memory, so a load with
//                        older stores it may read takes a choice too (c % stores, 0 = the
//                        newest); past the end: no preemption, every load the newest.
// FUZZ_SHOW=1 prints every decoded program (operation-language text) and schedule (e.g. with
// the replay program). A finding prints the anomaly lines, the program, the run and the one
// command that replays it (fiber-replay --schedule '...' - <<'EOF' ...), and aborts, so
// libFuzzer saves the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "FuzzedDataProvider.h"
#include "fiber/schedule.h"
#include "oplang/text.h"
#include "program_runner.h"
#include "programs.h"

namespace {

using fiberprop::Behavior;
using fiberprop::PullScript;
using fiberprop::PushScript;
using fiberprop::WorkerOp;

constexpr std::size_t kMaxChoices = 1024;

int byte(FuzzedDataProvider& in) { return in.ConsumeIntegral<std::uint8_t>(); }

PullScript decode_pull(FuzzedDataProvider& in) {
  PullScript s;
  const int publishers = 1 + byte(in) % 2;
  for (int p = 0; p < publishers; ++p) s.publishers.push_back(1 + byte(in) % 4);
  const int workers = 1 + byte(in) % (3 - publishers);
  for (int w = 0; w < workers; ++w) {
    std::vector<WorkerOp>& ops = s.workers.emplace_back();
    const int n = 1 + byte(in) % 6;
    for (int i = 0; i < n; ++i) {
      const int b = byte(in);
      ops.push_back({static_cast<WorkerOp::Kind>(b % 6), 1 + (b / 6) % 3});
    }
  }
  return s;
}

PushScript decode_push(FuzzedDataProvider& in, bool pool) {
  static constexpr Behavior kBehaviors[] = {
      Behavior::kOk,    Behavior::kOk,    Behavior::kOk,        Behavior::kFail,
      Behavior::kThrow, Behavior::kStall, Behavior::kStallLong, Behavior::kUnsubscribeSelf};
  PushScript s;
  s.pool = pool;
  // SCHEDULE_FUZZER_NO_OVERRUN=1 keeps handler_timeout off (the byte is still read, so inputs
  // keep their meaning): a stopgap to fuzz past an open overrun bug (fuzz/README.md).
  static const bool no_overrun = std::getenv("SCHEDULE_FUZZER_NO_OVERRUN") != nullptr;
  s.pool_timeout = pool && byte(in) % 2 == 1 && !no_overrun;
  const int publishers = 1 + byte(in) % 2;
  for (int p = 0; p < publishers; ++p) s.publishers.push_back(1 + byte(in) % 3);
  const int unsub = byte(in) % 9;
  s.unsubscribe_after = unsub > 0 && publishers == 1 ? unsub - 1 : -1;
  for (int h = 0; h < 2; ++h) {
    std::vector<Behavior>& calls = s.handlers.emplace_back();
    const int n = 1 + byte(in) % 4;
    for (int i = 0; i < n; ++i) calls.push_back(kBehaviors[byte(in) % 8]);
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const int kind = byte(in) % 3;
  const oplang::Program program =
      kind == 0 ? decode_pull(in).program() : decode_push(in, kind == 2).program();
  const std::vector<std::uint8_t> rest = in.ConsumeBytes<std::uint8_t>(kMaxChoices);
  fiber::Schedule schedule =
      fiber::Schedule::walk(std::vector<std::uint32_t>(rest.begin(), rest.end()));
  schedule.weak = true;

  static const bool show = std::getenv("FUZZ_SHOW") != nullptr;  // replay: print the program
  if (show) {
    std::fprintf(stderr, "%sschedule: %s\n", oplang::print(program).c_str(),
                 fiber::to_string(schedule).c_str());
  }
  const fiberprop::ProgramRun run = fiberprop::run_program(program, schedule);
  if (!run.ok()) {
    std::fprintf(stderr, "schedule_fuzzer: the concurrent contract broke\n%s",
                 fiberprop::failure_report(run, program).c_str());
    std::abort();
  }
  return 0;
}
