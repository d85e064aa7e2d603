// The serving side of the target protocol (target_protocol.h): a conformance::Target behind
// stdin and stdout, for targets written in C++ (tools/inproc_protocol_target.cpp).
#pragma once

#include <istream>
#include <ostream>

#include "conformance/target.h"
#include "conformance/target_protocol.h"

namespace conformance {

/// Writes `hello`, then answers each request line of `in` until its end, in order: worker 0
/// is `target`, worker N > 0 its N-th worker() (made at N's first request); `stats` is
/// Target::stats. An op the
/// target refuses with std::invalid_argument or TargetFailure is answered `fail`. Returns 0
/// at the end of `in`, 2 after a request line that is not the protocol's (said on `errors`;
/// a kit that sends one has a bug). Single-threaded: requests are answered one at a time.
int serve_protocol(Target& target, const Hello& hello, std::istream& in, std::ostream& out,
                   std::ostream& errors);

}  // namespace conformance
