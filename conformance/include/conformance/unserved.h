// The SPEC rules the kit's scripts do not reach, with the reason per engine, so a report has
// a row for every rule: one not served says why, never nothing (CONFORMANCE.md).
#pragma once

#include <string>
#include <vector>

namespace conformance {

/// A rule outside the kit's common subset: its number ("R8") and what it covers.
struct UnservedRule {
  const char* rule;
  const char* what;
};

/// Every SPEC rule the kit's scripts do not check on some engine, in rule order.
const std::vector<UnservedRule>& unserved_rules();

/// Why `rule` is not checked on `target` ("inproc", "jetstream", "redis", "rabbitmq",
/// "exec"): the engine has
/// no counterpart, the kit has no adapter for it yet (and what the engine offers), or where
/// else the project checks it. Throws nothing; "" for a rule the kit serves on target.
std::string unserved_reason(const std::string& rule, const std::string& target);

}  // namespace conformance
