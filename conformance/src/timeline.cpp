#include "conformance/timeline.h"

#include <algorithm>
#include <variant>

#include "conformance/runner.h"
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
  std::vector<TimedStep> out;
  bool marked = false;
  side_by_side(target, script, p, [&](const oplang::Op& op, const SideStep& step) {
    TimedStep s;
    s.row = row_of(op);
    s.call = oplang::print(op);
    s.start_ms = step.start_ms;
    s.end_ms = step.end_ms;
    s.model = one_line(oplang::print(step.model));
    s.engine = one_line(oplang::print(step.engine));
    if (!marked && !step.agreed) s.anomaly = marked = true;
    out.push_back(std::move(s));
  });
  return out;
}

}  // namespace conformance
