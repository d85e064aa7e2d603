#include "broker/clock.h"

#include "sync/sync.h"

namespace broker {

// The back-end's steady time: std::chrono::steady_clock (read through sync::CycleClock,
// which interpolates between kernel reads or reuses a recent one: well within a
// millisecond of it, never ahead of it on a VM's clock), or the fiber runtime's virtual
// clock in broker_fiber, so deadlines that poll_wait and auto expiry take from the clock
// agree with the waits they do.
Time SteadyClock::now() const { return Time{sync::clock_now()}; }

bool SteadyClock::moved_by_caller() const { return sync::kClockMovedByCaller; }

}  // namespace broker
