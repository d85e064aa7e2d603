// Exactly-once in effect: at-least-once delivery plus a handler that skips repeats.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "broker/message.h"

namespace broker {

/// Wraps a handler so that each (topic, offset) is applied at most once: offsets at or
/// below the highest one the inner handler confirmed are confirmed again without calling
/// it (seed 000, "Great"). Per-subscription offsets rise, so a high-water mark is enough;
/// a seek back replays nothing already applied. Locks its own mutex only around the mark,
/// never while the inner handler runs, so it suits a subscription served by one context
/// at a time (every dispatcher guarantees that).
inline Handler idempotent(Handler inner) {
  struct State {
    std::mutex mu;
    std::map<std::string, Offset> applied;  // topic -> one past the highest applied offset
  };
  auto state = std::make_shared<State>();
  return [inner = std::move(inner), state](const Delivery& d) {
    {
      std::lock_guard<std::mutex> lock(state->mu);
      auto it = state->applied.find(*d.topic);
      if (it != state->applied.end() && d.message->offset < it->second) return true;  // a repeat
    }
    if (!inner(d)) return false;
    std::lock_guard<std::mutex> lock(state->mu);
    Offset& mark = state->applied[*d.topic];
    mark = std::max(mark, d.message->offset + 1);
    return true;
  };
}

}  // namespace broker
