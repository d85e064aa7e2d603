// The memory-order sites of a process's fiber runs: each atomic operation's file:line, met
// at least once, and the one site a run may weaken (FIBER_WEAKEN=FILE:LINE, FILE from its
// first "broker/" folder on, e.g. broker/src/topic_log.h:79): its order becomes relaxed (a fence
// there does nothing), so scripts/memory-order-sites can ask of every site, without a
// rebuild, whether the fiber properties catch it weakened. FIBER_SITES=PATH writes the
// sites met to PATH at exit, one "FILE:LINE ORDER" a line.
#pragma once

#include <atomic>

namespace fiber::detail {

/// The order the operation at file:line runs with, and records the site as met.
/// Thread-safe (a process-wide registry under its own lock); never throws but bad_alloc.
std::memory_order order_at_site(std::memory_order written, const char* file, unsigned line);

}  // namespace fiber::detail
