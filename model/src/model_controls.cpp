// Consumer controls: redrive and purge (R25), pause (R26), lag (R27), seek by time (R28).
#include <algorithm>

#include "model/model.h"

namespace model {

// R25: a dead letter leaves when its message is still kept; it is returned (attempts back at
// 0, no wait) unless it is already waiting (at or after the cursor, or returned) or held,
// which happens after a seek back. One whose message retention dropped stays: only
// redrive_to can move it.
std::size_t Model::redrive(const std::string& topic, const std::string& name) {
  Topic& t = topic_or_throw(topic);
  Sub& s = position_or_throw(t, name);
  catch_up(t, s);
  std::vector<DeadLetter> stay;
  std::size_t moved = 0;
  for (const DeadLetter& d : s.dead) {
    if (!t.log.contains(d.offset)) {
      stay.push_back(d);
      continue;
    }
    moved += 1;
    if (d.offset >= s.cursor || s.redelivery.contains(d.offset) || s.in_flight.contains(d.offset)) {
      continue;
    }
    s.attempts.erase(d.offset);
    s.redelivery.insert(d.offset);
    s.returned[d.offset] = Sub::Returned{"", ++s.events, false, Sub::kNoWait, Sub::kNoWait};
  }
  s.dead = std::move(stay);
  s.counters.redriven += moved;
  save(s, true);
  return moved;
}

// R25: the dead letters become new messages of to_topic (which may be the same topic).
std::vector<Offset> Model::redrive_to(const std::string& topic, const std::string& name,
                                      const std::string& to_topic) {
  Topic& t = topic_or_throw(topic);
  Sub& s = position_or_throw(t, name);
  any_topic_or_throw(to_topic);
  catch_up(t, s);
  const std::vector<DeadLetter> dead = std::move(s.dead);
  s.dead.clear();
  s.counters.redriven += dead.size();
  save(s, true);
  std::vector<Offset> out;
  for (const DeadLetter& d : dead) out.push_back(publish(to_topic, d.payload, d.headers, d.key));
  return out;
}

void Model::redrive_to_interrupted(const std::string& topic, const std::string& name,
                                   const std::string& to_topic, std::size_t published) {
  Topic& t = topic_or_throw(topic);
  Sub& s = position_or_throw(t, name);
  any_topic_or_throw(to_topic);
  catch_up(t, s);
  const std::vector<DeadLetter> dead = s.dead;  // they stay
  for (std::size_t i = 0; i < published && i < dead.size(); ++i) {
    publish(to_topic, dead[i].payload, dead[i].headers, dead[i].key);
  }
}

// R25: the dead letters are gone; purged counts them.
std::size_t Model::purge_dead_letters(const std::string& topic, const std::string& name) {
  Topic& t = topic_or_throw(topic);
  Sub& s = position_or_throw(t, name);
  catch_up(t, s);
  const std::size_t n = s.dead.size();
  s.dead.clear();
  s.counters.purged += n;
  save(s, true);
  return n;
}

// R26: only the flag; held messages stay held and may still be answered or expire.
bool Model::pause(const std::string& topic, const std::string& name) {
  Sub& s = position_or_throw(topic_or_throw(topic), name);
  const bool changed = !s.paused;
  s.paused = true;
  return changed;
}

bool Model::resume(const std::string& topic, const std::string& name) {
  Sub& s = position_or_throw(topic_or_throw(topic), name);
  const bool changed = s.paused;
  s.paused = false;
  return changed;
}

// R27: the lowest offset that is returned, held, or the first match at or after the cursor.
std::optional<Offset> Model::lowest_waiting(const Topic& t, const Sub& s) {
  std::optional<Offset> lowest;
  auto take = [&lowest](Offset o) { lowest = lowest ? std::min(*lowest, o) : o; };
  if (!s.redelivery.empty()) take(*s.redelivery.begin());
  if (!s.in_flight.empty()) take(s.in_flight.begin()->first);
  for (auto it = t.log.lower_bound(s.cursor); it != t.log.end(); ++it) {
    if (matches(s.filter, it->second)) {
      take(it->first);
      break;
    }
  }
  return lowest;
}

// R27: lag = backlog + in flight (R13); its age is that of the lowest such message.
Lag Model::lag(const std::string& topic, const std::string& name, Millis now) {
  if (const std::uint32_t n = any_topic_or_throw(topic).partitions; n > 1) {  // R29: totals
    Lag total{0, 0};
    for (std::uint32_t p = 0; p < n; ++p) {
      const Lag l = lag(partition_name(topic, p), name, now);
      total.messages += l.messages;
      total.oldest_age = std::max(total.oldest_age, l.oldest_age);
    }
    return total;
  }
  Topic& t = topic_or_throw(topic);
  Sub& s = position_or_throw(t, name);
  const Stats st = stats(topic, name);  // catches up first
  Lag out{st.backlog + st.in_flight + s.trimmed_unread + s.trimmed_returned, 0};
  if (const std::optional<Offset> o = lowest_waiting(t, s)) {
    auto held = s.in_flight.find(*o);
    const Millis published =
        held != s.in_flight.end() ? held->second.message.publish_time : t.log.at(*o).publish_time;
    out.oldest_age = std::max<Millis>(0, now - published);
  }
  return out;
}

// R28: publish times never decrease along the log, but the first match is found by looking,
// not by assuming that.
Offset Model::offset_for_time(const std::string& topic, Millis time) const {
  if (time > now_) throw Error(ErrorCode::kInvalidArgument);
  const Topic& t = topic_or_throw(topic);
  for (const auto& [offset, m] : t.log) {
    if (m.publish_time >= time) return offset;
  }
  return t.end;
}

Offset Model::seek_to_time(const std::string& topic, const std::string& name, Millis time) {
  if (time > now_) throw Error(ErrorCode::kInvalidArgument);
  Topic& t = topic_or_throw(topic);
  Sub& s = position_or_throw(t, name);
  catch_up(t, s);
  const Offset offset = offset_for_time(topic, time);
  move_cursor(s, offset);
  return offset;
}

}  // namespace model
