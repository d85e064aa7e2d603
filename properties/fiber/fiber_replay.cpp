// fiber-replay [--schedule SCHEDULE] [--html PAGE] FILE|-: runs a concurrent operation-language
// program (oplang/program.h) on the real broker (broker_fiber) under one fiber schedule, prints the
// recorded history and the verdict of the fiber properties' checkers. Every fiber property
// failure and schedule_fuzzer finding prints the fiber-replay command that reproduces it.
// Exit status: 0 the checks pass, 1 they fail, 2 bad usage or a program that does not parse.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "conformance/timeline_page.h"
#include "fiber/schedule.h"
#include "oplang/text.h"
#include "program_runner.h"

namespace {

constexpr int kPass = 0;
constexpr int kFail = 1;
constexpr int kBadInput = 2;

constexpr std::string_view kUsage = R"(usage: fiber-replay [--schedule SCHEDULE] [--html PAGE] FILE
       fiber-replay --help

Runs a concurrent program of the operation language on the real broker (the
fiber back-end) under one deterministic fiber schedule, prints every call and
handler call with its logical ticks and result, then the verdict of the
concurrent checkers (lost, unexpected, duplicated-beyond-redelivery, double-held,
acked-came-back, nonmonotonic, poll-skip, delivery-after-unsubscribe, redrive-order, counters,
stuck, late-start, early-start, early-retry, start-after-shutdown, early-return, deadlock /
livelock; SPEC.md "Anomalies"). The program form is in oplang/include/oplang/text.h;
each further `broker` line starts another program, run side by side on its own
broker in the same run:

  broker lane                      # sync | lane | pool [threads=N] [timeout=MS] [backoff=MS] [shutdown]
  create_topic t                   # lines before the first fiber run first, in order
  subscribe t s0 max=3 start=begin script=[reject,stall(20)]
  fiber pub0                       # then every fiber runs its indented ops
    publish t m
  fiber unsub
    yield 3                        # three scheduling points
    unsubscribe t s0

Arguments:
  FILE        the program; `-` reads it from standard input

Options:
  --schedule SCHEDULE   the fiber schedule, as failures print it:
                        walk:seed=S:choices=C,C,...  or  pct:d=D:k=K:seed=S,
                        with mem=weak after the kind for weak memory (a load
                        may read an older store; walk:mem=weak:seed=S:...)
                        (default walk:seed=0:choices= , no preemption at all)
  --html PAGE           also write the run as a self-contained HTML page: an SVG
                        timeline, one row per fiber, each call a bar from invocation
                        to return, the calls the first anomaly names in red
  -h, --help            print this help and exit

Exit status:
  0  the run completed and every check passed
  1  a check failed (the anomaly lines say which)
  2  bad usage, an unreadable file, a bad schedule, or a program that does not parse

Examples:
  fiber-replay examples/concurrent/seed004_three_workers.program
  fiber-replay --schedule 'walk:seed=53:choices=1,0,2' - <<'EOF'
  broker lane
  ...
  EOF
)";

int usage_error(const std::string& message) {
  std::cerr << "fiber-replay: " << message << " (try fiber-replay --help)\n";
  return kBadInput;
}

// A run that did not complete leaves its fibers parked on a thread that never ends: leave
// without running static destructors.
[[noreturn]] void leave(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<std::string> path;
  fiber::Schedule schedule = fiber::Schedule::walk({});
  std::string html;  // --html FILE: the run as a timeline page
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!options_done && (arg == "-h" || arg == "--help")) {
      std::cout << kUsage;
      return kPass;
    }
    if (!options_done && (arg == "--schedule" || arg.rfind("--schedule=", 0) == 0)) {
      std::string text;
      if (arg == "--schedule") {
        if (i + 1 >= argc) return usage_error("--schedule needs a SCHEDULE");
        text = argv[++i];
      } else {
        text = arg.substr(std::string("--schedule=").size());
      }
      std::optional<fiber::Schedule> s = fiber::parse_schedule(text);
      if (!s) {
        return usage_error(
            "bad schedule '" + text +
            "' (walk:seed=S:choices=C,C,... or pct:d=D:k=K:seed=S, mem=weak after the kind)");
      }
      schedule = *s;
    } else if (!options_done && arg == "--html") {
      if (i + 1 >= argc) return usage_error("--html needs a FILE");
      html = argv[++i];
    } else if (!options_done && arg == "--") {
      options_done = true;
    } else if (!options_done && arg.size() > 1 && arg[0] == '-') {
      return usage_error("unknown option '" + arg + "'");
    } else if (path) {
      return usage_error("one FILE only, got '" + *path + "' and '" + arg + "'");
    } else {
      path = arg;
    }
  }
  if (!path) return usage_error("missing FILE (a program, or - for standard input)");

  const std::string name = *path == "-" ? "<stdin>" : *path;
  const std::optional<std::string> text = oplang::read_source(*path, std::cerr);
  if (!text) return kBadInput;
  std::vector<oplang::Program> programs;  // one per `broker` line, side by side
  try {
    programs = oplang::parse_programs(*text);
  } catch (const oplang::ParseError& e) {
    std::cerr << name << ":" << e.what() << "\n";
    return kBadInput;
  }

  const fiberprop::ProgramRun run = fiberprop::run_programs(programs, schedule);
  if (!html.empty()) {
    const std::string first = run.failures.substr(0, run.failures.find('\n'));
    std::ofstream page(html);
    page << conformance::timeline_html(
        name + (run.ok() ? ": ok" : ": " + first), run.timeline,
        "One row per fiber; each call a bar from invocation to return, in logical ticks "
        "(hover for its result); red: the calls that name the offset the first anomaly names"
        " (or, in a run that did not complete, the calls that never returned). Schedule " +
            fiber::to_string(schedule) + ".");
    if (!page) return usage_error("cannot write " + html);
  }
  std::cout << "schedule: " << fiber::to_string(schedule) << "\n"
            << "history (invoke..return tick, who, call -> result):\n"
            << run.history << "run: " << fiber::to_string(run.run.outcome) << " after "
            << run.run.steps << " scheduling points, " << run.run.virtual_end.count()
            << " ms of virtual time\n";
  if (run.run.error) std::cout << "  exception in " << run.run.error_fiber << "\n";
  std::cout << run.run.report << run.checked << "\n";
  if (run.ok()) {
    std::cout << "verdict: ok\n";
    leave(kPass);
  }
  std::cout << run.failures << "verdict: FAILED\n";
  leave(kFail);
}
