// Test engines for the kit's own tests: the model under switches, and this broker lying
// about one answer (with the search for a script that catches it).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "conformance/generator.h"
#include "conformance/inproc_target.h"
#include "conformance/profile.h"
#include "conformance/runner.h"
#include "conformance/target.h"
#include "oplang/model_runner.h"

namespace conformance {

/// An engine that is the model under some switches: what a real engine with exactly
/// those documented differences would answer.
class ModelTarget final : public Target {
 public:
  explicit ModelTarget(model::Profile p) : runner_(p) {}
  [[nodiscard]] std::string name() const override { return "model"; }
  oplang::Outcome step(const oplang::Op& op) override { return runner_.step(op); }

 private:
  oplang::ModelRunner runner_;
};

/// This broker, but every accepted ack of offset 2 is reported as refused.
class LyingTarget final : public Target {
 public:
  [[nodiscard]] std::string name() const override { return "liar"; }
  oplang::Outcome step(const oplang::Op& op) override {
    oplang::Outcome out = inner_.step(op);
    if (const auto* a = std::get_if<oplang::Ack>(&op); a && a->offset == 2 && !out.error) {
      out.value = oplang::BoolResult{false};
    }
    return out;
  }

 private:
  InProcTarget inner_;
};

/// A script on which LyingTarget breaks the contract, and that script shrunk.
struct LyingViolation {
  oplang::Script script;  // the first generated one that catches the lie
  Verdict verdict;        // LyingTarget's run of script
  oplang::Script small;   // script shrunk on fresh LyingTargets
};

/// The first script of seeds 1 to 500 (strict, margin 0) that LyingTarget gets wrong, and
/// its shrink; nullopt if none of them acks offset 2.
inline std::optional<LyingViolation> find_lying_violation() {
  GenOptions options;
  options.margin = 0;
  const TargetFactory liar = [] { return std::make_unique<LyingTarget>(); };
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    oplang::Script script = generate(seed, options, strict_profile());
    LyingTarget target;
    Verdict v = check(target, script, strict_profile());
    if (!v.violation) continue;
    oplang::Script small = shrink(liar, script, strict_profile(), 0, 1, 500);
    return LyingViolation{std::move(script), std::move(v), std::move(small)};
  }
  return std::nullopt;
}

}  // namespace conformance
