#include "conformance/inproc_target.h"

#include <stdexcept>
#include <variant>

#include "model/errors.h"
#include "oplang/text.h"

namespace conformance {

namespace {

// Another caller of the target's broker: the broker is the thread-safe part.
class InProcWorker final : public Target {
 public:
  explicit InProcWorker(harness::BrokerRunner& runner) : runner_(runner) {}
  [[nodiscard]] std::string name() const override { return "inproc worker"; }
  oplang::Outcome step(const oplang::Op& op) override { return runner_.step_pull(op); }

 private:
  harness::BrokerRunner& runner_;
};

}  // namespace

std::unique_ptr<Target> InProcTarget::worker() { return std::make_unique<InProcWorker>(runner_); }

std::optional<model::Stats> InProcTarget::stats(const std::string& topic,
                                                const std::string& subscription) {
  const oplang::Outcome out = runner_.step(oplang::GetStats{topic, subscription});
  if (out.error) {
    throw TargetFailure("stats(" + topic + ", " + subscription +
                        ") failed: " + model::to_string(*out.error));
  }
  return std::get<model::Stats>(out.value);
}

bool InProcTarget::serves(const oplang::Op& op) const {
  return in_subset(op) || retention_by_messages(op) || pull_with_max_in_flight(op) ||
         std::holds_alternative<oplang::Seek>(op) ||
         std::holds_alternative<oplang::SeekToTime>(op) || nack_with_delay(op) ||
         std::holds_alternative<oplang::GetLag>(op) || push_without_effects(op);
}

oplang::Outcome InProcTarget::step(const oplang::Op& op) {
  if (!serves(op)) throw std::invalid_argument("not in the subset: " + oplang::print(op));
  return runner_.step(op);
}

}  // namespace conformance
