#include "now_check.h"

#include <cstdint>
#include <string>

#include "broker/errors.h"

namespace broker {

void check_now(const Clock& clock, Time now, std::string_view call) {
  if (clock.moved_by_caller()) return;
  const Time clock_now = clock.now();
  const Millis::rep a = now.time_since_epoch().count();
  const Millis::rep b = clock_now.time_since_epoch().count();
  // |a - b| without overflow: any two 64-bit times, the extremes too.
  const bool behind = a < b;
  const auto gap = behind ? static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a)
                          : static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b);
  if (gap <= static_cast<std::uint64_t>(kMaxClockSkew.count())) return;
  const auto ms = [](Time t) { return std::to_string(t.time_since_epoch().count()) + " ms"; };
  throw InvalidArgument(std::string(call) + ": now " + ms(now) + " is " + std::to_string(gap) +
                        " ms " + (behind ? "behind" : "ahead of") + " the broker's clock (" +
                        ms(clock_now) + "); it may be at most " +
                        std::to_string(kMaxClockSkew.count()) +
                        " ms away: call it without `now`, pass clock().now(), or build the "
                        "broker with a ManualClock (SPEC R11)");
}

}  // namespace broker
