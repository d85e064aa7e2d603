// Any program that speaks the target protocol (target_protocol.h) as a conformance target:
// `scripts/conformance exec -- CMD ARGS...` runs the kit's whole suite against it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "conformance/target.h"
#include "conformance/target_protocol.h"

namespace conformance {

class ExecChannel;  // the child and its pipes, shared by a target and its workers

/// One child process running `command`, started at construction (stdin and stdout are the
/// protocol's pipes; stderr goes to a log whose tail failures quote). The child is in a
/// process group of its own and dies with the kit, even when the kit is killed by SIGKILL.
/// A reply must come within `reply_limit` (plus an advance's real time); a late, malformed
/// or mistyped reply, a `fail` reply or a child that exits throws TargetFailure naming the
/// line: the engine failed, never a violation. Not thread-safe; workers() may step at once
/// (each request names its worker).
class ExecTarget final : public Target {
 public:
  /// Starts the child and reads its hello. Throws TargetFailure (no hello within the limit,
  /// a bad hello, a command that cannot run) and std::invalid_argument (an empty command).
  ExecTarget(std::vector<std::string> command, std::chrono::milliseconds reply_limit);
  /// Closes the child's stdin, waits up to a second for it to exit, then kills its group.
  ~ExecTarget() override;
  ExecTarget(const ExecTarget&) = delete;
  ExecTarget& operator=(const ExecTarget&) = delete;

  /// The hello's name.
  [[nodiscard]] std::string name() const override;
  /// The common subset and the features the hello lists.
  [[nodiscard]] bool serves(const oplang::Op& op) const override;
  /// Throws std::invalid_argument outside serves(), TargetFailure if the engine failed.
  oplang::Outcome step(const oplang::Op& op) override;
  /// The latest reply's ahead_ms.
  [[nodiscard]] model::Millis lag() const override;
  [[nodiscard]] bool filter_is_the_adapters() const override;
  /// A worker naming the next worker number in its requests, on the same child; nullptr if
  /// the hello says no workers.
  std::unique_ptr<Target> worker() override;
  /// The child's `stats` where its hello serves them; else nullopt.
  std::optional<model::Stats> stats(const std::string& topic,
                                    const std::string& subscription) override;
  /// The hello the child said.
  [[nodiscard]] const Hello& hello() const;

 private:
  std::shared_ptr<ExecChannel> channel_;
  std::uint32_t next_worker_ = 1;
};

}  // namespace conformance
