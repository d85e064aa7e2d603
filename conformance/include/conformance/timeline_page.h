// Pictures of a run: a self-contained HTML page with an SVG timeline, one row per worker
// (a member, a fiber), each call a bar from invocation to completion, the anomaly
// highlighted (Jepsen's timeline.html, Porcupine's view). Plain C++, no dependencies: the
// conformance kit and the fiber properties' replay tool both draw with it.
#pragma once

#include <string>
#include <vector>

namespace conformance {

/// One call as it ran.
struct TimedStep {
  std::string row;      // the worker (member, fiber) or "client"
  std::string call;     // the op in text form
  std::string model;    // what the model answered ("" if no model ran beside it)
  std::string engine;   // what the engine answered
  double start_ms = 0;  // invocation and completion: real ms, or logical ticks
  double end_ms = 0;
  bool anomaly = false;  // part of what the checker reported
};

/// The page: a title, a caption, the SVG (rows `<g class="row" data-row=NAME>`, bars
/// `<rect class="bar">`, anomalies `class="bar anomaly"`, the first with id "anomaly"), and
/// a table of every call. No scripts, no external resources.
std::string timeline_html(const std::string& title, const std::vector<TimedStep>& steps,
                          const std::string& caption = "");

}  // namespace conformance
