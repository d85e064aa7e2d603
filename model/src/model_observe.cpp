// Observation: stats and dead letters (R13).
#include "model/model.h"

namespace model {

// R13: cursor, backlog = redelivery + matching messages from the cursor, held, counters.
Stats Model::stats(const std::string& topic, const std::string& name) {
  Topic& t = topic_or_throw(topic);
  Sub& s = sub_or_throw(t, name);
  catch_up(t, s);
  Stats out = s.counters;
  out.next_offset = s.cursor;
  out.backlog = s.redelivery.size();
  for (auto it = t.log.lower_bound(s.cursor); it != t.log.end(); ++it) {
    if (matches(s.filter, it->second)) out.backlog += 1;
  }
  out.in_flight = s.in_flight.size();
  return out;
}

// R7: dead letters in the order they died (a member reports its group, R10).
std::vector<DeadLetter> Model::dead_letters(const std::string& topic, const std::string& name) {
  Topic& t = topic_or_throw(topic);
  Sub& s = sub_or_throw(t, name);
  catch_up(t, s);
  return s.dead;
}

}  // namespace model
