#include "conformance/timeline_page.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace conformance {

namespace {

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

}  // namespace

std::string timeline_html(const std::string& title, const std::vector<TimedStep>& steps,
                          const std::string& caption) {
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
  std::size_t first_anomaly = steps.size();
  for (std::size_t i = 0; i < steps.size() && first_anomaly == steps.size(); ++i) {
    if (steps[i].anomaly) first_anomaly = i;
  }
  std::map<std::string, double> y;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    y[rows[r]] = 10 + kRowHeight * static_cast<double>(r);
    svg << "<g class=\"row\" data-row=\"" << escape(rows[r]) << "\"><text x=\"4\" y=\""
        << y[rows[r]] + 20 << "\">" << escape(rows[r]) << "</text>\n";
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const TimedStep& s = steps[i];
      const double x = std::max(kLeft + s.start_ms * scale, kLeft + i * (kMinWidth + 2));
      if (s.row != rows[r]) continue;
      const double w = std::max(kMinWidth, (s.end_ms - s.start_ms) * scale);
      const bool first = s.anomaly && i == first_anomaly;
      svg << "  <rect class=\"bar" << (s.anomaly ? " anomaly" : "")
          << (first ? "\" id=\"anomaly" : "") << "\" x=\"" << x << "\" y=\"" << y[rows[r]]
          << "\" width=\"" << w << "\" height=\"" << kRowHeight - 8 << "\" fill=\""
          << (s.anomaly ? "#d62728" : "#9ecae1") << "\"><title>" << i + 1 << ". " << escape(s.call)
          << " (took " << s.end_ms - s.start_ms << ")\nmodel: " << escape(s.model)
          << "\nengine: " << escape(s.engine) << "</title></rect>\n";
    }
    svg << "</g>\n";
  }
  svg << "</svg>\n";
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << escape(title)
       << "</title>\n<style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:left;"
          "font-family:monospace}tr.anomaly{background:#fdd}</style></head><body>\n<h1>"
       << escape(title) << "</h1>\n<p>"
       << escape(caption.empty() ? "One row per worker; each call a bar from invocation to "
                                   "completion (hover for its answers); the red bar is the first "
                                   "call the engine got wrong."
                                 : caption)
       << "</p>\n"
       << svg.str() << "<table>\n<tr><th>#</th><th>worker</th><th>call</th><th>model</th>"
       << "<th>engine</th><th>took</th></tr>\n";
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
