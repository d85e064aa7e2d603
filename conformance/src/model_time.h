// The model's clock on a real engine's: one model ms lasts `unit_ms` real ms from a
// target's start. Internal to the kit (jetstream_target.cpp, redis_target.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>

#include "model/types.h"

namespace conformance {

/// model ms -> real ns, saturating at half of int64 either way. Throws nothing.
inline std::int64_t to_nanos(model::Millis ms, model::Millis unit_ms) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max() / 2;
  const long double ns = static_cast<long double>(ms) * static_cast<long double>(unit_ms) * 1e6L;
  if (ns >= static_cast<long double>(kMax)) return kMax;
  if (ns <= -static_cast<long double>(kMax)) return -kMax;
  return static_cast<std::int64_t>(ns);
}

/// The wall-clock instant of model time `time`, given the wall clock at the model's 0 (the
/// same host's clock that stamps an engine's messages). Throws nothing.
inline std::chrono::system_clock::time_point wall_instant(
    std::chrono::system_clock::time_point wall_start, model::Millis time, model::Millis unit_ms) {
  return wall_start + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                          std::chrono::nanoseconds(to_nanos(time, unit_ms)));
}

}  // namespace conformance
