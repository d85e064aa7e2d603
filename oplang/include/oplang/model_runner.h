// Runs ops against the reference model and records their outcomes.
#pragma once

#include <vector>

#include "model/model.h"
#include "oplang/ops.h"
#include "oplang/outcome.h"

namespace oplang {

/// Executes ops one at a time on a fresh model::Model. Not thread-safe.
class ModelRunner {
 public:
  /// A model under profile (the default: SPEC.md as stated).
  explicit ModelRunner(model::Profile profile = {}) : model_(profile) {}
  /// Runs one op; the Outcome carries its result or error and the handler calls it made.
  Outcome step(const Op& op);
  /// The model, for properties that want to look inside.
  [[nodiscard]] model::Model& model() { return model_; }
  [[nodiscard]] const model::Model& model() const { return model_; }

 private:
  model::Model model_;
};

/// Runs a whole script on a fresh model.
std::vector<Outcome> run(const Script& script);

}  // namespace oplang
