// Scripted push handlers: what a handler does on each offer, so the model knows what every
// offer does. The operation language names these too (oplang/script.h).
//
// A Script is a finite list of Steps. Each offer to the subscription (or group member)
// consumes the next Step: first the Step's side effect runs (from inside the handler,
// against the same broker), then the handler ends with the Step's verdict. When the
// Script is used up every further offer is answered by `confirm` with no side effect, so
// every run terminates once publishing stops.
//
// Verdicts: kConfirm returns true; kReject returns false (reason "rejected");
// kThrowStd throws std::runtime_error("boom") (reason "exception: boom"); kThrowOther
// throws the int 42 (reason "unknown exception"); kTerminate gives up on the message (R23:
// the broker's handler throws broker::Terminate, reason "terminated", dead-lettered at once).
// Effects: kUnsubscribeSelf unsubscribes the handler's own name; kUnsubscribe unsubscribes
// (topic, name); kPublish publishes (topic, payload) with no headers and no key; kSeek
// seeks (topic, name, offset); kDrain calls drain() (always ReentrantDrain, R8); kStall
// keeps the handler busy for `ms` of time: on the fiber back-end (properties/fiber) the
// handler sleeps `ms` of virtual time, so other fibers run meanwhile and a pool's handler
// timeout can pass; in a sequential run (model, broker runner) it changes no result and
// records "stall -> ok".
// The effect's result (or error) is recorded in HandlerCall::effect; an error there does
// not change the verdict.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace model {

/// How a scripted handler call ends.
enum class Verdict { kConfirm, kReject, kThrowStd, kThrowOther, kTerminate };

/// What a scripted handler call does before its verdict.
enum class EffectKind { kNone, kUnsubscribeSelf, kUnsubscribe, kPublish, kSeek, kDrain, kStall };

/// One handler call: an optional side effect, then a verdict.
struct Step {
  EffectKind effect = EffectKind::kNone;
  std::string topic{};       // kUnsubscribe, kPublish, kSeek
  std::string name{};        // kUnsubscribe, kSeek
  std::string payload{};     // kPublish
  std::uint64_t offset = 0;  // kSeek
  Verdict verdict = Verdict::kConfirm;
  std::int64_t ms = 0;  // kStall
  bool operator==(const Step&) const = default;
};

/// A handler's behaviour: one Step per offer, then `confirm` forever.
using Script = std::vector<Step>;

/// The text of a side effect's result as HandlerCall::effect records it, e.g.
/// "publish -> 3", "unsubscribe -> false", "seek -> ok", "seek -> offset_out_of_range",
/// "stall -> ok".
std::string effect_result(EffectKind kind, const std::string& result);

/// The dead-letter reason a failing verdict gives ("rejected", "exception: boom", "unknown
/// exception", "terminated"); "" for kConfirm.
const char* failure_reason(Verdict verdict);

/// How a scripted handler ends its call: returns true (kConfirm) or false (kReject), or
/// throws std::runtime_error("boom") (kThrowStd) or the int 42 (kThrowOther). Every runner
/// of handler scripts ends a call with it, so they fail alike.
bool end_with(Verdict verdict);
/// end_with, where kTerminate throws Terminate: what the engine under test takes as "give up
/// on this message" (broker::Terminate). The plain end_with throws std::logic_error for it:
/// only a runner knows its engine's word.
template <typename Terminate>
bool end_with(Verdict verdict) {
  if (verdict == Verdict::kTerminate) throw Terminate{};
  return end_with(verdict);
}

}  // namespace model
