#include "broker/clock.h"

#include "sync/sync.h"

namespace broker {

// The back-end's steady time: std::chrono::steady_clock (interpolated between kernel reads
// by sync::CycleClock, well within a millisecond of it), or the fiber runtime's virtual
// clock in broker_fiber, so deadlines that poll_wait and auto expiry take from the clock
// agree with the waits they do.
Time SteadyClock::now() const { return Time{sync::clock_now()}; }

}  // namespace broker
