// Runs scripts on a target next to the model under the target's profile, attributes every
// difference to a SPEC rule or a profile switch, and shrinks violations.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conformance/profile.h"
#include "conformance/target.h"
#include "oplang/ops.h"
#include "oplang/outcome.h"

namespace conformance {

/// A fresh engine for one script (a new broker, or new streams under a new prefix).
using TargetFactory = std::function<std::unique_ptr<Target>()>;

/// The first step where the engine and the profiled model disagree.
struct Violation {
  std::size_t step = 0;
  std::string rule;  // "R5", ...
  oplang::Outcome model;
  oplang::Outcome engine;
};

/// What one script showed.
struct Verdict {
  std::optional<Violation> violation;
  /// The engine fell more than the lag limit behind the model's clock: the run says nothing.
  bool void_run = false;
  /// Switches the script needed: with the switch off, the model would disagree.
  std::vector<Switch> needed;
  /// Steps checked, per rule.
  std::vector<std::pair<std::string, std::size_t>> checked;
};

/// The SPEC rule a step of op belongs to, given how the outcomes differ (R14 for errors;
/// R3 for a poll that returned an offset below `oldest`, the model's oldest kept offset of
/// the polled topic after the step).
std::string rule_for(const oplang::Op& op, const oplang::Outcome& model,
                     const oplang::Outcome& engine,
                     std::optional<model::Offset> oldest = std::nullopt);

/// Runs script on target and on models under p (and under p without each switch, to see
/// which switches the script needed); stops, void, once target.lag() passes lag_limit.
/// Throws TargetFailure.
Verdict check(Target& target, const oplang::Script& script, const Profile& p,
              model::Millis lag_limit = model::kMaxDuration);

/// Removes steps while the script still violates the same rule on fresh targets (each
/// candidate must fail `confirmations` times in a row and keep the margin), for at most
/// `trials` candidate runs. Returns the smallest script found.
oplang::Script shrink(const TargetFactory& factory, oplang::Script script, const Profile& p,
                      model::Millis margin, int confirmations, int trials);

/// A replayable file: a comment line naming target, profile and seed, then the script.
std::string replay_text(const std::string& target, const Profile& p, std::uint64_t seed,
                        const oplang::Script& script);

/// One step of a run beside the model: what each side answered, whether they agree under
/// the profile, and when the engine's call began and ended (real ms since the run began).
struct SideStep {
  std::size_t index = 0;
  oplang::Outcome model;
  oplang::Outcome engine;
  bool agreed = false;
  std::optional<model::Offset> oldest;  // the model's oldest kept offset of op's topic, after
  double start_ms = 0;
  double end_ms = 0;
};

/// Runs every op of script on target and on a fresh model under p, handing each step to
/// `each` in order. Throws TargetFailure.
void side_by_side(Target& target, const oplang::Script& script, const Profile& p,
                  const std::function<void(const oplang::Op&, const SideStep&)>& each);

/// Step by step, model against engine, for a replay (the first violation marked).
std::string trace(Target& target, const oplang::Script& script, const Profile& p);

/// One run that is both judged and printed: its verdict (violation and void only) and its
/// trace (as trace()) come from the same run, so a report never shows a run other than the
/// one it judged. Stops, void, once target.lag() passes lag_limit. Throws TargetFailure.
struct TracedRun {
  Verdict verdict;
  std::string trace;
};
TracedRun traced_check(Target& target, const oplang::Script& script, const Profile& p,
                       model::Millis lag_limit = model::kMaxDuration);

/// A run of script on a fresh target from factory that fails again, with its trace: the
/// first of up to `reruns` runs that shows a violation (void runs do not). Throws
/// TargetFailure.
std::optional<TracedRun> fails_again(const TargetFactory& factory, const oplang::Script& script,
                                     const Profile& p, model::Millis lag_limit, int reruns);

/// What a report may say of a script that disagreed once.
struct Finding {
  /// A re-run failed again: a violation. Otherwise the disagreement is not reproduced, and
  /// no verdict.
  bool reproduced = false;
  /// What failed again: the shrunk script if it did, else the original (and the original
  /// when nothing did).
  oplang::Script script;
  /// That re-run, judged and printed together (when reproduced).
  TracedRun shown;
};

/// Shrinks a script that disagreed once (shrink(), with margin, confirmations and trials),
/// then re-runs the shrunk script up to `reruns` times on fresh targets, then the original
/// as often: reproduced at the first run that fails again. Throws TargetFailure.
Finding reproduce(const TargetFactory& factory, const oplang::Script& script, const Profile& p,
                  model::Millis margin, int confirmations, int trials, int reruns);

/// The first disagreement of a run as a report prints it: the step, its op, the model's
/// answer and the engine's, and the rule.
std::string disagreement_text(const std::string& engine, const oplang::Script& script,
                              const Violation& v);

}  // namespace conformance
