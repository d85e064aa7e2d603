#include "conformance/timeline.h"

#include <algorithm>
#include <chrono>
#include <variant>

#include "oplang/model_runner.h"
#include "oplang/text.h"

namespace conformance {

namespace {

std::string row_of(const oplang::Op& op) {
  return std::visit(
      [](const auto& o) -> std::string {
        if constexpr (requires { o.member; }) {
          return o.member.empty() ? std::string("client") : o.member;
        } else {
          return "client";
        }
      },
      op);
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

std::vector<TimedStep> timed_run(Target& target, const oplang::Script& script, const Profile& p) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  auto ms = [&](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(t - t0).count();
  };
  oplang::ModelRunner model(model_switches(p));
  std::vector<TimedStep> out;
  bool marked = false;
  for (const oplang::Op& op : script) {
    const oplang::Outcome want = model.step(op);
    TimedStep s;
    s.row = row_of(op);
    s.call = oplang::print(op);
    s.start_ms = ms(Clock::now());
    const oplang::Outcome got = target.step(op);
    s.end_ms = ms(Clock::now());
    s.model = one_line(oplang::print(want));
    s.engine = one_line(oplang::print(got));
    if (!marked && !agree(op, want, got, p)) s.anomaly = marked = true;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace conformance
