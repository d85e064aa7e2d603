// run_fibers: one fresh thread per run, driven by the ChoiceAlgorithm and a Controller.
#include "fiber/run.h"

#include <boost/fiber/operations.hpp>
#include <future>
#include <sstream>
#include <thread>

#include "choice_algorithm.h"
#include "controller.h"

namespace fiber {

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::kCompleted:
      return "completed";
    case Outcome::kDeadlock:
      return "deadlock";
    case Outcome::kStepLimit:
      return "step-limit (livelock or run too long)";
  }
  return "?";
}

std::string RunResult::describe() const {
  std::ostringstream out;
  out << "fiber run " << to_string(outcome) << " after " << steps << " scheduling points\n";
  if (error) out << "  exception in " << error_fiber << "\n";
  if (!data_race.empty()) out << "  " << data_race << "\n";
  out << report;
  out << "  schedule: " << to_string(schedule) << "\n";
  Schedule as_walk = Schedule::walk(choices);
  as_walk.weak = schedule.weak;
  out << "  same run as a walk: " << to_string(as_walk) << "\n";
  out << "  replay: FIBER_SCHEDULE='" << to_string(schedule) << "' <test binary> "
      << "--gtest_filter=<test>\n";
  return out.str();
}

RunResult run_fibers(std::vector<std::function<void()>> bodies, const Schedule& schedule,
                     RunOptions options) {
  auto promise = std::make_shared<std::promise<RunResult>>();
  std::future<RunResult> future = promise->get_future();
  std::thread runner([promise, bodies = std::move(bodies), schedule, options]() mutable {
    detail::ChoiceAlgorithm* algo = nullptr;
    boost::fibers::use_scheduling_algorithm<detail::ChoiceAlgorithm>(&algo);
    detail::Controller controller(schedule, options, algo);
    broker::sync::installed_fiber_runtime() = &controller;
    for (auto& body : bodies) controller.spawn(std::move(body));
    bodies.clear();
    RunResult result = controller.run_to_end();
    const bool completed = result.outcome == Outcome::kCompleted;
    promise->set_value(std::move(result));
    if (!completed) {
      // Abandon the run: its fibers are suspended mid-flight and must never resume.
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    }
    broker::sync::installed_fiber_runtime() = nullptr;
  });
  RunResult result = future.get();
  if (result.outcome == Outcome::kCompleted) {
    runner.join();
  } else {
    runner.detach();
  }
  return result;
}

namespace {
const char kSleepToken = 0;
}  // namespace

void sleep_for(std::chrono::milliseconds d) {
  broker::sync::FiberRuntime& rt = broker::sync::fiber_runtime();
  rt.park(&kSleepToken, "sleep", rt.now() + d);
}

void yield(const char* label) { broker::sync::fiber_runtime().point(label); }

}  // namespace fiber
