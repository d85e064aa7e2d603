// Test engines for the kit's own tests: the model under switches, and this broker lying
// about one answer.
#pragma once

#include <string>
#include <variant>

#include "conformance/inproc_target.h"
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

}  // namespace conformance
