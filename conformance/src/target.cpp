// The common subset every conformance target serves (conformance/target.h).
#include "conformance/target.h"

#include <algorithm>
#include <type_traits>
#include <variant>

namespace conformance {

bool in_subset(const oplang::Op& op) {
  return std::visit(
      [](const auto& o) -> bool {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, oplang::CreateTopic>) {
          return o.retention_messages == 0 && o.retention_bytes == 0 && o.partitions == 1 &&
                 !o.if_absent;
        } else if constexpr (std::is_same_v<T, oplang::Publish>) {
          return o.key.empty();
        } else if constexpr (std::is_same_v<T, oplang::Nack>) {
          return o.which == oplang::Which::kOffset && !o.delay;
        } else if constexpr (std::is_same_v<T, oplang::Ack> || std::is_same_v<T, oplang::Term>) {
          return o.which == oplang::Which::kOffset;
        } else if constexpr (std::is_same_v<T, oplang::Extend>) {
          // By the subscription's ack timeout only (the target checks): JetStream's
          // in-progress ack restarts AckWait, and knows no other extension.
          return o.which == oplang::Which::kOffset && o.generation == 0;
        } else if constexpr (std::is_same_v<T, oplang::SubscribePull>) {
          return (o.start.kind == model::Start::Kind::kBeginning ||
                  o.start.kind == model::Start::Kind::kEnd) &&
                 o.max_in_flight == 0 && o.backoff.empty() && !o.ordered_by_key;
        } else {
          return std::is_same_v<T, oplang::DeleteTopic> || std::is_same_v<T, oplang::Unsubscribe> ||
                 std::is_same_v<T, oplang::Poll> || std::is_same_v<T, oplang::Advance> ||
                 std::is_same_v<T, oplang::Expire> || std::is_same_v<T, oplang::GetDeadLetters>;
        }
      },
      op);
}

bool pull_with_max_in_flight(const oplang::Op& op) {
  const auto* s = std::get_if<oplang::SubscribePull>(&op);
  if (s == nullptr || s->max_in_flight == 0) return false;
  oplang::SubscribePull without = *s;
  without.max_in_flight = 0;
  return in_subset(without);
}

bool nack_with_delay(const oplang::Op& op) {
  const auto* n = std::get_if<oplang::Nack>(&op);
  return n != nullptr && n->which == oplang::Which::kOffset && n->delay.has_value();
}

bool push_without_effects(const oplang::Op& op) {
  if (std::holds_alternative<oplang::Drain>(op)) return true;
  const auto* s = std::get_if<oplang::Subscribe>(&op);
  if (s == nullptr || !s->group.empty() || s->idempotent || !s->backoff.empty() ||
      s->durable_attempts || s->saved) {
    return false;
  }
  if (s->start.kind != model::Start::Kind::kBeginning &&
      s->start.kind != model::Start::Kind::kEnd) {
    return false;
  }
  return std::all_of(s->script.begin(), s->script.end(), [](const model::Step& step) {
    return step.effect == model::EffectKind::kNone;
  });
}

bool retention_by_messages(const oplang::Op& op) {
  const auto* c = std::get_if<oplang::CreateTopic>(&op);
  return c != nullptr && c->retention_messages > 0 && c->retention_bytes == 0 &&
         c->partitions == 1 && !c->if_absent;
}

}  // namespace conformance
