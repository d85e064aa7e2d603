// RapidCheck generators for the operation language, aimed at the contract's corners:
// few names (so they collide), handlers that fail often, seeks at retention edges,
// deadlines hit exactly. Generators read a Hints value, never the model itself.
#pragma once

#include <rapidcheck.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "oplang/model_runner.h"
#include "oplang/ops.h"

namespace props {

/// What the generators know about the run so far: the reference model, stepped through
/// every op generated so far. Generators aim at what exists (known topics, pull
/// subscriptions, held messages, deadlines) most of the time, and at names that do not
/// exist the rest of the time, so typed errors stay covered.
struct Hints {
  oplang::ModelRunner runner;
  int payloads = 0;      // next payload number, so every payload is unique and readable
  std::string last_key;  // of the last keyed publish: reused often, so keys repeat (R31)
  /// The last subscribe seen per "topic/name" and "topic/group": a restarted broker's push
  /// subscriptions resume only with the same options (R20).
  std::map<std::string, oplang::Subscribe> subscribes;
  std::map<std::string, oplang::JoinGroupPush> push_joins;  // "topic/group" -> the last join
  /// Option swarm (state_machine.h): options every new topic or subscription of this
  /// sequence takes ("retention", "filter", "max_in_flight", "ordered", "backoff",
  /// "durable_attempts", "group", "idempotent"), so pairs of them meet often.
  std::set<std::string> always;
  /// Subscriptions paused and not resumed since (R26): most resumes aim at them.
  std::set<std::pair<std::string, std::string>> paused;

  /// Runs op on the hint model (whatever its outcome).
  void observe(const oplang::Op& op);
  [[nodiscard]] const model::Model& model() const { return runner.model(); }
  /// An offset near an edge of topic: oldest-1 .. oldest+1, end-1 .. end+1, or inside.
  model::Offset edge_offset(const std::string& topic) const;
};

/// Name pools: small on purpose, so names collide.
std::string gen_topic(const Hints& h);
/// A subscription name: mostly one that exists on topic, sometimes any pool name.
std::string gen_sub_name(const Hints& h, const std::string& topic);
/// A pull subscription name of topic when there is one.
std::string gen_pull_name(const Hints& h, const std::string& topic);
/// A name for a call that reads or moves a position (seek, stats, dead_letters), which
/// also accept a push group's name: mostly gen_sub_name, sometimes a group name.
std::string gen_position_name(const Hints& h, const std::string& topic);
/// Whether name comes from the group pool (no subscription name does).
bool is_group_name(const std::string& name);
std::string gen_member();
/// A topic for publish: mostly one that someone listens to (on a partition, R29).
std::string gen_publish_topic(const Hints& h);
/// A handler script that fails often and sometimes acts on the broker from inside.
model::Script gen_script(const Hints& h);

/// One generator per op kind; each returns an Op of that kind.
template <class T>
oplang::Op gen_op(const Hints& h);

}  // namespace props
