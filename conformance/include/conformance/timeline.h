// Pictures of a run: a self-contained HTML page with an SVG timeline, one row per worker
// (the member a call names; "client" for the rest), each call a bar from invocation to
// completion, the violating call highlighted (Jepsen's timeline.html, Porcupine's view).
#pragma once

#include <string>
#include <vector>

#include "conformance/profile.h"
#include "conformance/target.h"
#include "oplang/ops.h"

namespace conformance {

/// One call as it ran.
struct TimedStep {
  std::string row;     // the worker (member) or "client"
  std::string call;    // the op in text form
  std::string model;   // what the model answered
  std::string engine;  // what the engine answered
  double start_ms = 0;
  double end_ms = 0;
  bool anomaly = false;  // the first call the engine got wrong
};

/// Runs script on target next to the model under p, timing each call (real time).
std::vector<TimedStep> timed_run(Target& target, const oplang::Script& script, const Profile& p);

/// The page: a title, the SVG (rows `<g class="row" data-row=NAME>`, bars `<rect class="bar">`,
/// the anomaly `class="bar anomaly"` with id "anomaly"), and a table of every call. No
/// scripts, no external resources.
std::string timeline_html(const std::string& title, const std::vector<TimedStep>& steps);

}  // namespace conformance
