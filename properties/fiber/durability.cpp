// The cut model of durable programs (durability.h).
#include "durability.h"

#include <algorithm>

namespace fiberprop {
namespace {

using broker::Offset;
using Kind = oplang::SyncPolicy::Kind;

// Whether something done at `ret` (tick) / `ret_ms` (virtual time) is durable at the cut.
bool durable_at_cut(const oplang::SyncPolicy& p, std::uint64_t ret, std::int64_t ret_ms,
                    const Cut& cut) {
  switch (p.kind) {
    case Kind::kAlways:
      return ret < cut.invoke;
    case Kind::kEvery:
      return ret < cut.invoke && ret_ms + p.every < cut.ms;
    case Kind::kNone:
      return false;
  }
  return false;
}

// The first offset not in `done`.
Offset first_gap(const std::set<Offset>& done) {
  Offset o = 0;
  while (done.count(o) > 0) ++o;
  return o;
}

}  // namespace

CutVerdict check_cut(const std::string& topic, const DurableTopic& t, const Cut& cut,
                     const oplang::SyncPolicy& publish_sync,
                     const oplang::SyncPolicy& commit_sync) {
  CutVerdict verdict;
  std::string& out = verdict.failures;
  const std::string at =
      "cut at " + std::to_string(cut.ms) + " ms (tick " + std::to_string(cut.invoke) + ")";
  for (const auto& [offset, p] : t.published) {
    if (offset < t.end) continue;
    if (p.ret < cut.invoke) ++verdict.publishes_taken_back;
    if (durable_at_cut(publish_sync, p.ret, p.ret_ms, cut)) {
      out += "lost-synced-publish: " + topic + " offset " + std::to_string(offset) +
             " returned at " + std::to_string(p.ret_ms) + " ms (tick " + std::to_string(p.ret) +
             ") and is gone after the " + at + " (log end " + std::to_string(t.end) + ")\n";
    } else if (publish_sync.kind == Kind::kAlways && t.read_before_cut.count(offset) > 0) {
      out += "lost-read-publish: " + topic + " offset " + std::to_string(offset) +
             " was handed out before the " + at + " and is gone after it\n";
    }
  }
  for (Offset o = 0; o < t.end; ++o) {
    auto sent = t.published.find(o);
    auto kept = t.kept.find(o);
    if (sent == t.published.end()) {
      out += "ghost-record: " + topic + " offset " + std::to_string(o) +
             " is in the reopened log and was never published\n";
    } else if (kept == t.kept.end()) {
      out += "lost-synced-publish: " + topic + " offset " + std::to_string(o) +
             " is below the reopened log's end " + std::to_string(t.end) + " but not read back\n";
    } else if (kept->second != sent->second.content) {
      out += "wrong-content: " + topic + " offset " + std::to_string(o) + " was published as " +
             sent->second.content + " and read back as " + kept->second + "\n";
    }
  }
  for (const auto& [sub, confirms] : t.confirms) {
    auto pos = t.positions.find(sub);
    if (pos == t.positions.end()) continue;
    std::set<Offset> durable, before_cut, returned;
    for (const DurableConfirm& c : confirms) {
      if (c.invoke < cut.ret) before_cut.insert(c.offset);
      if (c.ret < cut.invoke) returned.insert(c.offset);
      if (durable_at_cut(commit_sync, c.ret, c.ret_ms, cut)) durable.insert(c.offset);
    }
    const Offset lower = std::min(first_gap(durable), t.end);
    const Offset upper = first_gap(before_cut);
    const Offset confirmed = std::min(first_gap(returned), t.end);
    if (pos->second < confirmed) verdict.position_taken_back += confirmed - pos->second;
    const std::string name = topic + "/" + sub;
    if (pos->second < lower) {
      out += "lost-synced-commit: " + name + " reopened at position " +
             std::to_string(pos->second) + ", but offsets below " + std::to_string(lower) +
             " were confirmed by acks durable before the " + at + "\n";
    }
    if (pos->second > upper) {
      out += "commit-ahead: " + name + " reopened at position " + std::to_string(pos->second) +
             ", but offset " + std::to_string(upper) + " was not confirmed before the " + at + "\n";
    }
  }
  return verdict;
}

}  // namespace fiberprop
