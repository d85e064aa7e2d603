// The line protocol between the conformance kit and a broker served in a process of its own
// (tools/broker_server.cpp): the durable in-process broker as a target that can be killed.
// A request is one op as a script line (oplang::print); the reply is one line:
//   error NAME | done | offset N | bool 0|1 | answer OUTCOME | count N
//   received K OFFSET:ATTEMPT:DEADLINE:HEX ...   (the payload's bytes in hex)
//   fail TEXT                                    (the server could not run the op)
#pragma once

#include <string>

#include "oplang/outcome.h"

namespace conformance {

/// The reply line (without its newline) for outcome. Throws std::invalid_argument for a
/// value the protocol does not carry (only Done, OffsetResult, BoolResult, CountResult and
/// received messages) or an outcome with handler calls (push is not served).
std::string encode_reply(const oplang::Outcome& outcome);

/// The reply line of a failure the server met running an op ("fail " + what, one line).
std::string encode_failure(const std::string& what);

/// The outcome a reply line stands for. Throws TargetFailure for a `fail` line (the server
/// says why) and for a line that is not a reply.
oplang::Outcome decode_reply(const std::string& line);

}  // namespace conformance
