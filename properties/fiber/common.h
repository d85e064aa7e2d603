// Shared pieces of the fiber properties: generated schedules, the env override, and
// the failure message that tells how to replay.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fiber/run.h"
#include "fiber/schedule.h"
#include "oplang/program.h"
#include "program_runner.h"
#include "uniform.h"

namespace fiberprop {

/// gen_schedule's interleavings, read as sequentially consistent.
inline rc::Gen<fiber::Schedule> gen_interleaving() {
  auto walk = rc::gen::map(rc::gen::pair(rc::gen::container<std::vector<std::uint32_t>>(
                                             props::uniform_in<std::uint32_t>(0, 4)),
                                         props::uniform_in<std::uint64_t>(0, 1u << 20)),
                           [](const std::pair<std::vector<std::uint32_t>, std::uint64_t>& p) {
                             fiber::Schedule s = fiber::Schedule::walk(p.first);
                             s.seed = p.second;
                             return s;
                           });
  auto pct = rc::gen::map(
      rc::gen::tuple(props::uniform_in<std::uint64_t>(1, 1u << 20), props::uniform_in(2, 4),
                     rc::gen::element<std::uint32_t>(50, 150, 400)),
      [](const std::tuple<std::uint64_t, int, std::uint32_t>& p) {
        return fiber::Schedule::pct(std::get<0>(p), std::get<1>(p), std::get<2>(p));
      });
  return rc::gen::weightedOneOf<fiber::Schedule>({{3, walk}, {1, pct}});
}

/// A schedule as RapidCheck data: mostly a walk (explicit choices, then a seeded random
/// tail; shrinks toward fewer/zero choices and seed 0, no preemption after the choices), and
/// a quarter PCT (depth 2-3 over about 50-400 scheduling points), which reaches a bug that
/// needs one or two preemptions at exact points with a stated probability (fiber/schedule.h).
/// Every one explores weak memory: a load may read an older store where the C++ memory model
/// allows it (the walk's choices pick which), and a read of published plain data that is not
/// happens-after its write is a data race. FIBER_MEMORY=sc in the environment turns that off
/// (the exploration before weak memory, to compare what each finds).
inline rc::Gen<fiber::Schedule> gen_schedule() {
  static const bool sc = std::getenv("FIBER_MEMORY") != nullptr &&
                         std::string_view(std::getenv("FIBER_MEMORY")) == "sc";
  return rc::gen::map(gen_interleaving(), [](fiber::Schedule s) {
    s.weak = !sc;
    return s;
  });
}

/// The generated schedule, unless FIBER_SCHEDULE overrides it.
inline fiber::Schedule pick_schedule(const fiber::Schedule& generated) {
  if (auto s = fiber::schedule_from_env()) return *s;
  return generated;
}

/// The (invoke, return) ticks of the first history line that contains `who_and_call`
/// (e.g. "w0      poll"), read from a ProgramRun's history text; (0, 0) if none.
inline std::pair<unsigned long, unsigned long> ticks_of(const ProgramRun& run,
                                                        const std::string& who_and_call) {
  const std::size_t at = run.history.find(who_and_call);
  if (at == std::string::npos) return {0, 0};
  const std::size_t bol = run.history.rfind('\n', at) + 1;
  unsigned long from = 0, to = 0;
  std::sscanf(run.history.c_str() + bol, " %lu..%lu", &from, &to);
  return {from, to};
}

/// Fails a property with the anomaly lines, the program as operation-language text, the
/// schedule and the one command that replays both (program_runner.h's failure_report).
inline std::string failure_text(const ProgramRun& run, const oplang::Program& program) {
  return "\n" + failure_report(run, program) +
         "  or, in this test: the RC_PARAMS=\"reproduce=...\" line RapidCheck prints below, with "
         "the same --gtest_filter\n";
}

/// For programs that are not operation-language programs (the linearizability property's
/// explicit-time pull calls): the anomaly lines, the program's own text and the schedule.
inline std::string failure_text(const std::string& failures, const std::string& script,
                                const fiber::RunResult& run) {
  return "\n" + failures + "script:\n" + script + run.describe() +
         "  replay exactly: the RC_PARAMS=\"reproduce=...\" line RapidCheck prints below, with "
         "the same --gtest_filter; or force the schedule with FIBER_SCHEDULE='" +
         fiber::to_string(run.schedule) + "'\n";
}

}  // namespace fiberprop
