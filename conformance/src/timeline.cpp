#include "conformance/timeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
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

std::string escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
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

std::string timeline_html(const std::string& title, const std::vector<TimedStep>& steps) {
  std::vector<std::string> rows;
  for (const TimedStep& s : steps) {
    if (std::find(rows.begin(), rows.end(), s.row) == rows.end()) rows.push_back(s.row);
  }
  std::sort(rows.begin(), rows.end(), [](const std::string& a, const std::string& b) {
    return (a == "client") != (b == "client") ? a == "client" : a < b;
  });
  // Calls on loopback take microseconds to milliseconds: each gets at least a bar's
  // width, laid out in order, so the picture reads in call order whatever the durations.
  constexpr double kLeft = 90;
  constexpr double kRowHeight = 36;
  constexpr double kMinWidth = 14;
  const double end = steps.empty() ? 1 : std::max(1.0, steps.back().end_ms);
  const double scale = std::max(1.0, 900.0 / end);
  std::ostringstream svg;
  const double width = kLeft + std::max(end * scale, steps.size() * (kMinWidth + 2)) + 40;
  const double height = kRowHeight * static_cast<double>(rows.size()) + 30;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\">\n";
  std::map<std::string, double> y;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    y[rows[r]] = 10 + kRowHeight * static_cast<double>(r);
    svg << "<g class=\"row\" data-row=\"" << escape(rows[r]) << "\"><text x=\"4\" y=\""
        << y[rows[r]] + 20 << "\">" << escape(rows[r]) << "</text>\n";
    double x_min = kLeft;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const TimedStep& s = steps[i];
      const double x = std::max(kLeft + s.start_ms * scale, kLeft + i * (kMinWidth + 2));
      x_min = std::max(x_min, x);
      if (s.row != rows[r]) continue;
      const double w = std::max(kMinWidth, (s.end_ms - s.start_ms) * scale);
      svg << "  <rect class=\"bar" << (s.anomaly ? " anomaly\" id=\"anomaly" : "") << "\" x=\"" << x
          << "\" y=\"" << y[rows[r]] << "\" width=\"" << w << "\" height=\"" << kRowHeight - 8
          << "\" fill=\"" << (s.anomaly ? "#d62728" : "#9ecae1") << "\"><title>" << i + 1 << ". "
          << escape(s.call) << " (" << s.end_ms - s.start_ms << " ms)\nmodel: " << escape(s.model)
          << "\nengine: " << escape(s.engine) << "</title></rect>\n";
    }
    svg << "</g>\n";
  }
  svg << "</svg>\n";
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << escape(title)
       << "</title>\n<style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:left;"
          "font-family:monospace}tr.anomaly{background:#fdd}</style></head><body>\n<h1>"
       << escape(title) << "</h1>\n<p>One row per worker; each call a bar from invocation to "
       << "completion (hover for its answers); the red bar is the first call the engine got "
          "wrong.</p>\n"
       << svg.str() << "<table>\n<tr><th>#</th><th>worker</th><th>call</th><th>model</th>"
       << "<th>engine</th><th>ms</th></tr>\n";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const TimedStep& s = steps[i];
    char took[32];
    std::snprintf(took, sizeof took, "%.2f", s.end_ms - s.start_ms);
    html << "<tr" << (s.anomaly ? " class=\"anomaly\"" : "") << "><td>" << i + 1 << "</td><td>"
         << escape(s.row) << "</td><td>" << escape(s.call) << "</td><td>" << escape(s.model)
         << "</td><td>" << escape(s.engine) << "</td><td>" << took << "</td></tr>\n";
  }
  html << "</table>\n</body></html>\n";
  return html.str();
}

}  // namespace conformance
