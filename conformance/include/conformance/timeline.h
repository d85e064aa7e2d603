// A timed run of a conformance script, drawn with timeline_page.h.
#pragma once

#include <vector>

#include "conformance/profile.h"
#include "conformance/target.h"
#include "conformance/timeline_page.h"
#include "oplang/ops.h"

namespace conformance {

/// Runs script on target next to the model under p, timing each call (real ms); the first
/// call the engine got wrong is the anomaly.
std::vector<TimedStep> timed_run(Target& target, const oplang::Script& script, const Profile& p);

}  // namespace conformance
