// The rules the kit does not serve, and why (conformance/unserved.h).
#include "conformance/unserved.h"

namespace conformance {

namespace {

// One row per rule: what it covers, and why it is not checked on each engine.
struct Row {
  UnservedRule rule;
  const char* inproc;
  const char* jetstream;
  const char* redis;
};

const Row kRows[] = {
    {{"R8", "synchronous drain (push)"},
     "served (handlers that only answer, no group: push_without_effects), but no script of this "
     "run drained; effects and groups: the property suites (BrokerMatchesModel.*)",
     "served (a push consumer per subscription: push_without_effects), but no script of this "
     "run drained",
     "served (the adapter's drain over consumer-group reads: push_without_effects), but no "
     "script of this run drained"},
    {{"R10", "push groups: round robin"},
     "push is outside the kit's subset; the property suites check it (Groups.*)",
     "not yet: a deliver group (a queue subscription on the deliver subject) gives each "
     "delivery to a member the server picks, where R10 takes turns; no switch for it yet",
     "no counterpart: a group's consumers read what they ask for, no round robin"},
    {{"R13", "stats: committed, counters"},
     "row H adds up the counters of every parallel history",
     "no counterpart: consumer info counts pending and redelivered messages, not R13's "
     "counters; row H leaves counters out",
     "not yet: XINFO GROUPS has the pending count and last id only; row H leaves counters out"},
    {{"R15", "threaded dispatchers"},
     "push only: the fiber suites check it",
     "no counterpart in pull consumers",
     "no counterpart"},
    {{"R16", "shutdown"}, "the fiber suites check it", "no counterpart", "no counterpart"},
    {{"R17", "automatic expiry"},
     "the fiber suites check it (FiberTimedPull.*)",
     "served in its place: the server expires on its own clock (engine_expires)",
     "no counterpart: Redis keeps no deadline (no_server_deadline)"},
    {{"R18", "durable topics"},
     "--faults: the durable broker killed and restarted",
     "--faults: nats-server killed and restarted (file storage)",
     "--faults: redis-server killed and restarted (appendonly)"},
    {{"R19", "what is saved, and when"}, "--faults", "--faults", "--faults"},
    {{"R20", "restart"}, "--faults", "--faults", "--faults"},
    {{"R21", "recovery and its errors"},
     "crash-point suites (simfs)",
     "no counterpart the kit can reach",
     "no counterpart the kit can reach"},
    {{"R22", "flow control: max_in_flight"}, "", "", "no counterpart"},
    {{"R24", "retry later: nack delay, back-off"},
     "",
     "",
     "no counterpart: XAUTOCLAIM's min-idle is one value per call"},
    {{"R25", "redrive and purge"},
     "outside the kit's subset; the property suites check it",
     "no counterpart: dead letters are advisories, nothing to redrive",
     "no counterpart: Redis keeps no dead letters; the dead-letter stream is the adapter's, so "
     "a redrive of it would judge the adapter, not the engine"},
    {{"R26", "pause and resume"},
     "outside the kit's subset; the property suites check it",
     "no counterpart in nats-server 2.9 (consumer pause came in 2.11)",
     "no counterpart"},
    {{"R29", "partitions"},
     "outside the kit's subset; the property suites check it",
     "no counterpart: a stream's subjects are not partitions",
     "no counterpart"},
    {{"R30", "partition assignment"},
     "outside the kit's subset",
     "no counterpart",
     "no counterpart"},
    {{"R31", "order per key"},
     "outside the kit's subset; the property suites check it",
     "no counterpart in 2.9 pull consumers",
     "no counterpart"},
    {{"R32", "consumer groups"},
     "outside the kit's subset; the property suites check it",
     "no counterpart",
     "no counterpart: Redis consumer groups are R11's pull subscriptions"},
    {{"R33", "a failed write or sync"},
     "the crash-point and disk-fault suites (simfs), and --faults --fault disk-error",
     "--faults --fault disk-error (a failing disk, then kill -9 and restart), and the raw "
     "probes JetStreamDiskError.*",
     "--faults --fault disk-error (a failing disk, then kill -9 and restart), and the raw "
     "probes RedisDiskError.*"},
    {{"R34", "durable attempts"},
     "--faults: attempts-went-back (the run's subscription asks for durable attempts)",
     "--faults: attempts-went-back (the delivery counts of the consumer's state, written at "
     "most every 100 ms: a kill -9 may undo the latest)",
     "--faults: attempts-went-back (the pending list's delivery counts, appendonly)"},
};

}  // namespace

const std::vector<UnservedRule>& unserved_rules() {
  static const std::vector<UnservedRule> rules = [] {
    std::vector<UnservedRule> out;
    for (const Row& r : kRows) out.push_back(r.rule);
    return out;
  }();
  return rules;
}

namespace {

// A program speaking the target protocol (exec_target.h): what protocol 1 leaves out.
std::string exec_reason(const std::string& rule, const std::string& target) {
  if (rule == "R8" || rule == "R10" || rule == "R15" || rule == "R16") {
    return "not in the target protocol (version 1): push handlers run in the kit's process";
  }
  if (rule == "R13") return "row H adds up the counters where the target's hello serves stats";
  if (rule == "R17") return "no row of its own: a target expires on its clock or at `expire`";
  if (rule == "R18" || rule == "R19" || rule == "R20" || rule == "R34") {
    if (target == "rabbitmq") return "not yet: no --faults run on rabbitmq-server";
    return "--faults does not run on exec targets: the kit does not own the engine's processes";
  }
  if (rule == "R21" || rule == "R33") return "no counterpart the kit can reach";
  if (rule == "R22" || rule == "R24") return "";
  return "not in the target protocol (version 1)";
}

}  // namespace

std::string unserved_reason(const std::string& rule, const std::string& target) {
  for (const Row& r : kRows) {
    if (rule != r.rule.rule) continue;
    if (target == "exec" || target == "rabbitmq") return exec_reason(rule, target);
    if (rule != r.rule.rule) continue;
    if (target == "jetstream") return r.jetstream;
    if (target == "redis") return r.redis;
    return r.inproc;
  }
  return "";
}

}  // namespace conformance
