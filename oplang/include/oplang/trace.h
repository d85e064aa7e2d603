// The step-by-step trace of a script, as spec-trace prints it. One source for every place a
// trace is shown: spec-trace (native), and the spec site's playground (the model compiled to
// WebAssembly, site/playground.cpp), so the browser shows byte for byte what the tool prints.
#pragma once

#include <cstddef>
#include <exception>
#include <optional>
#include <string>

#include "oplang/ops.h"
#include "oplang/outcome.h"

namespace oplang {

/// One runner's outcome of a step, or the text of the exception that escaped it.
struct StepResult {
  std::optional<Outcome> outcome;
  std::string escaped;
};

/// Runs one op, turning an exception that escapes the runner into text (a trace keeps going
/// to say what happened instead of dying). Runner: anything with Outcome step(const Op&).
template <typename Runner>
StepResult run_step(Runner& runner, const Op& op) {
  try {
    return {runner.step(op), {}};
  } catch (const std::exception& e) {
    return {std::nullopt, std::string("exception escaped: ") + e.what()};
  } catch (...) {
    return {std::nullopt, "exception escaped (not a std::exception)"};
  }
}

/// A step's heading line, "[N] op" with N counting from 1, without a newline.
std::string step_heading(std::size_t number, const Op& op);
/// A result as a trace shows it: the outcome with its handler calls indented under the step.
std::string show(const StepResult& result);
/// The model's whole trace of a script: each step's heading and outcome, then
/// "model: N steps". What `spec-trace --model-only` prints and the playground shows.
std::string model_trace(const Script& script);

}  // namespace oplang
