// The trace of a script (oplang/trace.h).
#include "oplang/trace.h"

#include "oplang/model_runner.h"
#include "oplang/text.h"

namespace oplang {
namespace {

// Indents every line after the first so multi-line outcomes stay under their step.
std::string indent(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out;
}

}  // namespace

std::string step_heading(std::size_t number, const Op& op) {
  return "[" + std::to_string(number) + "] " + print(op);
}

std::string show(const StepResult& result) {
  return result.outcome ? indent(print(*result.outcome)) : result.escaped;
}

std::string model_trace(const Script& script) {
  ModelRunner model;
  std::string out;
  for (std::size_t i = 0; i < script.size(); ++i) {
    out += step_heading(i + 1, script[i]) + "\n    " + show(run_step(model, script[i])) + "\n";
  }
  return out + "model: " + std::to_string(script.size()) + " steps\n";
}

}  // namespace oplang
