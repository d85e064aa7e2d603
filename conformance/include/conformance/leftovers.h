// What killed runs of the tool leave on an engine the user runs (--url): streams or keys
// under the prefix "aloc<pid>_" of a tool process that no longer runs. A run that ends
// removes its own; one killed by SIGKILL cannot, so the next run removes them.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace conformance {

/// The prefix of every target a tool process with this pid makes ("aloc<pid>"; each
/// script's target adds "_<n>").
std::string run_prefix(pid_t pid);

/// The pid in a name that starts with a run prefix ("aloc123_..." or its encoded form);
/// 0 if the name is not one of the tool's.
pid_t pid_of_leftover(const std::string& name);

/// Deletes, on the JetStream server at url, every stream whose run prefix names a pid
/// that is not running on this machine; returns their names. Throws TargetFailure.
std::vector<std::string> remove_jetstream_leftovers(const std::string& url);

#ifdef CONFORMANCE_HAS_REDIS
/// The same for the keys on the Redis server at url (redis://HOST:PORT). Throws
/// TargetFailure, std::invalid_argument for a bad url.
std::vector<std::string> remove_redis_leftovers(const std::string& url);
#endif

}  // namespace conformance
