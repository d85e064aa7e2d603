#include "saved_state.h"

#include <algorithm>

#include "broker/partitioner.h"
#include "codec.h"
#include "segment_log.h"

namespace broker::storage {

namespace {

/// Topic ids stay far from 2^64, so next_id never wraps (a broker would need 2^62 topics).
constexpr std::uint64_t kMaxId = std::uint64_t{1} << 62;

enum Type : std::uint8_t {
  kTopicCreated = 1,
  kTopicDeleted = 2,
  kSubscribed = 3,
  kUnsubscribed = 4,
  kCommit = 5,
  kNextId = 6,
  kCommitRewritingDead = 7,  // a commit whose dead letters replace the saved ones (R25)
};

void put_headers(Encoder& e, const Headers& h) {
  e.u32(static_cast<std::uint32_t>(h.size()));
  for (const auto& [k, v] : h) {
    e.str(k);
    e.str(v);
  }
}

Headers get_headers(Decoder& d) {
  Headers h;
  const std::uint32_t n = d.u32();
  for (std::uint32_t i = 0; i < n && !d.failed(); ++i) {
    std::string k = d.str();
    h[std::move(k)] = d.str();
  }
  return h;
}

/// Map: a std::map (a saved subscription) or a std::pmr::map (a live one's, R19).
template <class Map>
void put_attempts(Encoder& e, const Map& attempts) {
  e.u32(static_cast<std::uint32_t>(attempts.size()));
  for (const auto& [o, n] : attempts) {
    e.u64(o);
    e.u32(static_cast<std::uint32_t>(n));
  }
}

void put_dead(Encoder& e, const std::vector<DeadLetter>& dead) {
  e.u32(static_cast<std::uint32_t>(dead.size()));
  for (const DeadLetter& d : dead) {
    e.str(encode_message(*d.message));
    e.u32(static_cast<std::uint32_t>(d.attempts));
    e.str(d.reason);
    e.i64(d.died_at.time_since_epoch().count());
  }
}

bool get_dead(Decoder& d, const std::string& topic, const std::string& sub,
              std::vector<DeadLetter>& out) {
  const std::uint32_t n = d.u32();
  for (std::uint32_t i = 0; i < n && !d.failed(); ++i) {
    MessagePtr m = decode_message(d.str());
    if (!m) return false;
    DeadLetter dl{topic, sub, std::move(m), static_cast<int>(d.u32()), d.str(), Time{}};
    dl.died_at = Time{Millis{d.i64()}};
    if (dl.attempts < 1 || dl.attempts > (1 << 30)) return false;
    out.push_back(std::move(dl));
  }
  return !d.failed();
}

/// Attempt counts an offer could have reached: 1 and more, far from overflowing.
bool attempts_ok(const std::map<Offset, int>& attempts) {
  for (const auto& [offset, n] : attempts) {
    if (n < 1 || n > (1 << 30)) return false;
  }
  return true;
}

}  // namespace

SavedSubscription* SavedTopic::find(const std::string& sub) {
  for (auto& s : subscriptions) {
    if (s.name == sub) return &s;
  }
  return nullptr;
}

SavedTopic* SavedState::find(const std::string& topic) {
  for (auto& t : topics) {
    if (t.name == topic) return &t;
  }
  return nullptr;
}

std::string encode_topic_created(const std::string& name, std::uint64_t id,
                                 const TopicOptions& options) {
  Encoder e;
  e.u8(kTopicCreated);
  e.str(name);
  e.u64(id);
  e.u64(options.retention_messages);
  e.u64(options.retention_bytes);
  // R29's partitions trail the record, written only for a partitioned topic: a journal
  // without them stays what a build before them wrote (and reads).
  if (options.partitions > 1) {
    e.u32(options.partitions);
    e.u8(static_cast<std::uint8_t>(options.partitioner));
  }
  return e.take();
}

std::string encode_topic_deleted(const std::string& name) {
  Encoder e;
  e.u8(kTopicDeleted);
  e.str(name);
  return e.take();
}

std::string encode_subscribed(const std::string& topic, const SavedSubscription& s) {
  Encoder e;
  e.u8(kSubscribed);
  e.str(topic);
  e.str(s.name);
  e.u8(s.pull ? 1 : 0);
  e.u8(s.group ? 1 : 0);
  put_headers(e, s.header_filter);
  e.u32(static_cast<std::uint32_t>(s.max_deliveries));
  e.i64(s.ack_timeout.count());
  e.u8(static_cast<std::uint8_t>(s.start.kind));
  e.u64(s.start.offset);
  e.u64(s.position);
  put_attempts(e, s.attempts);
  put_dead(e, s.dead);
  // R22's bound, R24's back-off and a flags byte (R31's order: 1, R34's durable attempts:
  // 2) trail the record, written only when one is set: a journal of subscriptions without
  // them stays what a build before them wrote (and reads); the flags byte only when a flag
  // is set, for the same reason.
  const std::uint8_t flags = (s.ordered_by_key ? 1 : 0) | (s.durable_attempts ? 2 : 0);
  if (s.max_in_flight != 0 || !s.backoff.empty() || flags != 0) {
    e.u32(static_cast<std::uint32_t>(s.max_in_flight));
    e.u32(static_cast<std::uint32_t>(s.backoff.size()));
    for (Millis wait : s.backoff) e.i64(wait.count());
    if (flags != 0) e.u8(flags);
  }
  return e.take();
}

std::string encode_unsubscribed(const std::string& topic, const std::string& name) {
  Encoder e;
  e.u8(kUnsubscribed);
  e.str(topic);
  e.str(name);
  return e.take();
}

std::string encode_commit(const std::string& topic, const std::string& name, Offset position,
                          const std::pmr::map<Offset, int>& attempts,
                          const std::vector<DeadLetter>& dead, bool dead_rewritten) {
  Encoder e;
  e.u8(dead_rewritten ? kCommitRewritingDead : kCommit);
  e.str(topic);
  e.str(name);
  e.u64(position);
  put_attempts(e, attempts);
  put_dead(e, dead);
  return e.take();
}

bool apply_record(std::string_view body, SavedState& state) {
  Decoder d(body);
  const std::uint8_t type = d.u8();
  switch (type) {
    case kTopicCreated: {
      SavedTopic t;
      t.name = d.str();
      t.id = d.u64();
      t.options.retention_messages = d.u64();
      t.options.retention_bytes = d.u64();
      std::uint8_t partitioner = 0;
      if (!d.done()) {
        t.options.partitions = d.u32();
        partitioner = d.u8();
        t.options.partitioner = static_cast<Partitioner>(partitioner);
      }
      const std::uint32_t n = t.options.partitions;
      if (!d.done() || t.name.empty() || state.find(t.name) || t.id < state.next_id ||
          t.id >= kMaxId - kMaxPartitions - 1 || n == 0 || n > kMaxPartitions || partitioner > 1) {
        return false;
      }
      std::vector<SavedTopic> made{t};
      for (std::uint32_t p = 0; n > 1 && p < n; ++p) {
        SavedTopic part;
        part.name = partition_name(t.name, p);
        part.id = t.id + 1 + p;
        part.options = t.options;
        part.options.partitions = 1;
        part.parent = t.name;
        if (state.find(part.name)) return false;
        made.push_back(std::move(part));
      }
      state.next_id = made.back().id + 1;
      state.topics.insert(state.topics.end(), made.begin(), made.end());
      return true;
    }
    case kTopicDeleted: {
      const std::string name = d.str();
      if (!d.done()) return false;
      auto it = std::find_if(state.topics.begin(), state.topics.end(),
                             [&](const SavedTopic& t) { return t.name == name; });
      if (it == state.topics.end() || !it->parent.empty()) return false;
      state.topics.erase(it);
      std::erase_if(state.topics, [&](const SavedTopic& t) { return t.parent == name; });
      return true;
    }
    case kSubscribed: {
      SavedTopic* t = state.find(d.str());
      SavedSubscription s;
      s.name = d.str();
      s.pull = d.u8() != 0;
      s.group = d.u8() != 0;
      s.header_filter = get_headers(d);
      s.max_deliveries = static_cast<int>(d.u32());
      s.ack_timeout = Millis{d.i64()};
      const std::uint8_t start_kind = d.u8();
      s.start.kind = static_cast<StartPosition::Kind>(start_kind);
      s.start.offset = d.u64();
      s.position = d.u64();
      const std::uint32_t n = d.u32();
      for (std::uint32_t i = 0; i < n && !d.failed(); ++i) {
        const Offset o = d.u64();
        s.attempts[o] = static_cast<int>(d.u32());
      }
      // Only what subscribe itself accepts (R14), so a crafted journal cannot build a state
      // no call could have made.
      const bool options_ok = s.max_deliveries >= 0 &&
                              (s.pull ? s.ack_timeout.count() > 0 && s.ack_timeout <= kMaxDuration
                                      : s.ack_timeout.count() == 0);
      const bool dead_ok = t && get_dead(d, t->name, s.name, s.dead);
      std::uint8_t flags = 0;      // absent: neither ordered nor durable attempts
      if (dead_ok && !d.done()) {  // absent: no bound, no back-off
        s.max_in_flight = d.u32();
        const std::uint32_t steps = d.u32();
        for (std::uint32_t i = 0; i < steps && i <= kMaxBackoffSteps && !d.failed(); ++i) {
          s.backoff.push_back(Millis{d.i64()});
        }
        if (!d.done()) {
          flags = d.u8();
          if (flags == 0) flags = 4;  // never written: refused below
          s.ordered_by_key = (flags & 1) != 0;
          s.durable_attempts = (flags & 2) != 0;
        }
      }
      const bool waits_ok = std::all_of(s.backoff.begin(), s.backoff.end(), [](Millis w) {
        return w.count() >= 0 && w <= kMaxDuration;
      });
      const bool bound_ok = s.max_in_flight <= kMaxInFlight &&
                            s.backoff.size() <= kMaxBackoffSteps && waits_ok &&
                            (s.pull || s.max_in_flight == 0);
      if (!t || start_kind > 2 || !options_ok || !bound_ok || !attempts_ok(s.attempts) ||
          flags > 3 || (s.ordered_by_key && !s.pull) || !dead_ok || !d.done() || s.name.empty() ||
          t->find(s.name) || t->options.partitions > 1) {  // R29: routes only
        return false;
      }
      t->subscriptions.push_back(std::move(s));
      return true;
    }
    case kUnsubscribed: {
      SavedTopic* t = state.find(d.str());
      const std::string name = d.str();
      if (!t || !d.done()) return false;
      auto it = std::find_if(t->subscriptions.begin(), t->subscriptions.end(),
                             [&](const SavedSubscription& s) { return s.name == name; });
      if (it == t->subscriptions.end()) return false;
      t->subscriptions.erase(it);
      return true;
    }
    case kCommit:
    case kCommitRewritingDead: {
      SavedTopic* t = state.find(d.str());
      SavedSubscription* s = t ? t->find(d.str()) : nullptr;
      if (!s) return false;
      const Offset position = d.u64();
      std::map<Offset, int> attempts;
      const std::uint32_t n = d.u32();
      for (std::uint32_t i = 0; i < n && !d.failed(); ++i) {
        const Offset o = d.u64();
        attempts[o] = static_cast<int>(d.u32());
      }
      std::vector<DeadLetter> dead;
      if (!attempts_ok(attempts) || !get_dead(d, t->name, s->name, dead) || !d.done()) {
        return false;
      }
      s->position = position;
      s->attempts = std::move(attempts);
      if (type == kCommitRewritingDead) s->dead.clear();
      for (auto& dl : dead) s->dead.push_back(std::move(dl));
      return true;
    }
    case kNextId: {
      const std::uint64_t next = d.u64();
      if (!d.done() || next < state.next_id || next > kMaxId) return false;
      state.next_id = next;
      return true;
    }
    default:
      return false;
  }
}

std::vector<std::string> snapshot(const SavedState& state) {
  std::vector<std::string> out;
  for (const SavedTopic& t : state.topics) {
    // A partition comes back with its partitioned topic's record, which comes first.
    if (t.parent.empty()) out.push_back(encode_topic_created(t.name, t.id, t.options));
    for (const SavedSubscription& s : t.subscriptions) out.push_back(encode_subscribed(t.name, s));
  }
  // Keeps next_id: a deleted topic's directory name is never given again.
  Encoder e;
  e.u8(kNextId);
  e.u64(state.next_id);
  out.push_back(e.take());
  return out;
}

}  // namespace broker::storage
