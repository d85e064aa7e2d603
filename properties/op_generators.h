// RapidCheck generators for the operation language, aimed at the contract's corners:
// few names (so they collide), handlers that fail often, seeks at retention edges,
// deadlines hit exactly. Generators read a Hints value, never the model itself.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "oplang/ops.h"

namespace props {

/// What the generators know about the run so far. Only a hint: a stale hint yields an op
/// that fails with a typed error, which the properties check like any other outcome.
struct Hints {
  struct TopicHint {
    model::Offset end = 0;            // messages published so far
    std::size_t retention = 0;        // retention_messages, 0 = unbounded
    std::vector<model::Millis> timeouts;  // ack timeouts of pull subscriptions
  };
  std::map<std::string, TopicHint> topics;
  model::Millis now = 0;
  int payloads = 0;  // next payload number, so every payload is unique and readable

  /// Updates the hints after op ran (whatever its outcome).
  void observe(const oplang::Op& op);
  /// An offset near an edge of topic: oldest-1 .. oldest+1, end-1 .. end+1, or inside.
  model::Offset edge_offset(const std::string& topic) const;
};

/// Name pools: small on purpose, so names collide.
std::string gen_topic(const Hints& h);
std::string gen_sub_name();
std::string gen_member();
/// A handler script that fails often and sometimes acts on the broker from inside.
model::Script gen_script(const Hints& h);

/// One generator per op kind; each returns an Op of that kind.
template <class T>
oplang::Op gen_op(const Hints& h);

}  // namespace props
