// Runs one script on the model and on the broker and finds where they first disagree.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "oplang/ops.h"
#include "oplang/outcome.h"

namespace harness {

/// The first step whose outcomes differ.
struct Difference {
  std::size_t step = 0;  // 0-based index into the script
  oplang::Op op;
  oplang::Outcome model;
  oplang::Outcome broker;
  std::string why{};  // the rule that refused the broker's outcome, when one says (R21)
};

/// Runs `script` step by step on a fresh model and a fresh broker; nullopt if every
/// step's outcome is equal.
std::optional<Difference> first_difference(const oplang::Script& script);

/// A readable report: the step, its op in text form and both outcomes.
std::string describe(const Difference& difference);

}  // namespace harness
