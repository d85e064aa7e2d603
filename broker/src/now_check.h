// SPEC R11's one time line: a `now` a caller passes must be the broker clock's time.
#pragma once

#include <string_view>

#include "broker/clock.h"

namespace broker {

/// Refuses a `now` more than kMaxClockSkew behind or ahead of clock.now(), unless the clock
/// is moved by its caller (a ManualClock). Reads the clock, which is user code: call it with
/// no lock held. Throws InvalidArgument naming the call, both times and the bound.
void check_now(const Clock& clock, Time now, std::string_view call);

}  // namespace broker
