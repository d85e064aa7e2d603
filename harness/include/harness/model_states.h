// The model states a durable broker may be in once a disk fault made a call undecided
// (SPEC R33), judged step by step against the broker's outcomes.
#pragma once

#include <cstddef>
#include <vector>

#include "oplang/model_runner.h"
#include "oplang/ops.h"
#include "oplang/outcome.h"

namespace harness {

/// R19, R33: the model states a drain cut short may leave: after each of its first n
/// offers (n from `called` to `offers`), each with its commit, and inside each (its handler
/// ran, with its effects; its result was not applied). `before` is the state before the
/// drain; `called`: how many handler calls the broker is known to have made before the
/// cut (each of them happened, with its attempt saved first under R34). With
/// `effect_undecided` (a failed write, R33: the drain's failing call may be the handler's
/// own effect), also inside each with that handler's effect not taken place, and inside
/// the offer after the last: its attempt saved (R34), its handler not called.
std::vector<oplang::ModelRunner> partial_drains(const oplang::ModelRunner& before,
                                                std::size_t offers, std::size_t called = 0,
                                                bool effect_undecided = false);

/// R33, R19: the model states an expire cut short may leave: after the commits of its first
/// k pull subscriptions, each expired in turn (0 < k < how many subscriptions `before`
/// holds; Model::expire). `before` is the state before the expire.
std::vector<oplang::ModelRunner> partial_expires(const oplang::ModelRunner& before);

/// The model, as a set of states the broker may be in. One state, except after a call that
/// threw IoError while a `fault` was armed (R33): that call is undecided until a reopen, so
/// the state where it changed nothing, the one where it took effect, and for a drain the
/// ones after each of its offers all stay, each refusing every call with IoError until a
/// restart or crash, and later outcomes drop those that disagree (Jepsen's indeterminate
/// `:info` operations). A call that returned while a fault was armed, and a later call
/// refused, is judged the same way (the fault met a write the call did not wait for). Not
/// thread-safe.
class ModelStates {
 public:
  /// What one step found.
  struct Verdict {
    bool agrees = false;       // some state gave the broker's outcome (or an undecided call)
    bool undecided = false;    // this step's IoError made a call undecided
    oplang::Outcome expected;  // the staying states' outcome, else the first state's
    std::string why;           // when no state agrees and a rule says why ("" otherwise)
  };

  ModelStates() : states_(1) {}

  /// Runs op on every state and keeps those whose outcome equals `broker` (the broker's
  /// outcome of the same op); see the class comment for an IoError after a fault. A crash
  /// with damage (R21) is judged by what the broker says the reopen cut (CutResult): a
  /// cut R21 allows is applied to every state (Model::lose_tail), any other is refused.
  Verdict step(const oplang::Op& op, const oplang::Outcome& broker);

  /// Says a fault is armed on the broker's disk without a `fault` op (a test that arms the
  /// simulated disk itself): the next IoError is judged as the class comment says.
  void arm() { fault_armed_ = true; }

  /// How many states are still possible.
  [[nodiscard]] std::size_t size() const { return states_.size(); }
  /// The first possible state.
  [[nodiscard]] oplang::ModelRunner& front() { return states_.front(); }
  /// Whether the model's storage has failed (R33) in the first state.
  [[nodiscard]] bool storage_failed() const { return states_.front().model().storage_failed(); }

 private:
  Verdict step_damaged(const oplang::Crash& crash, const oplang::Outcome& broker);

  std::vector<oplang::ModelRunner> states_;
  bool fault_armed_ = false;  // a fault since the last reopen that no call has met
};

}  // namespace harness
