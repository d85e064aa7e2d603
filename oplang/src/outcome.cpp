// Printing outcomes.
#include "oplang/outcome.h"

#include <sstream>

#include "oplang/text.h"

namespace oplang {
namespace {

void print_value(std::ostream& os, const Done&) { os << "ok"; }
void print_value(std::ostream& os, const OffsetResult& r) {
  os << "offset " << r.offset;
  if (r.partition) os << " partition " << *r.partition;
}
void print_value(std::ostream& os, const PartitionsResult& r) { os << "partitions " << r.count; }
void print_value(std::ostream& os, const BoolResult& r) { os << (r.value ? "true" : "false"); }
// R11: an answer reads as before ("true", "false"), with the reason of a refusal.
void print_value(std::ostream& os, const model::AckResult& r) {
  if (r) {
    os << "true";
  } else {
    os << "false (" << model::to_string(r.outcome) << ")";
  }
}
void print_value(std::ostream& os, const CountResult& r) { os << "confirmed " << r.count; }

void print_value(std::ostream& os, const std::vector<model::Received>& list) {
  os << "received [";
  for (std::size_t i = 0; i < list.size(); ++i) {
    const model::Received& r = list[i];
    os << (i ? "; " : "");
    if (!r.topic.empty()) os << format_value(r.topic) << ':';  // R32: poll_group's partition
    os << r.offset << ' ' << format_value(r.payload) << " attempt=" << r.attempt
       << " deadline=" << r.deadline;
    if (r.generation != 0) os << " gen=" << r.generation;
  }
  os << ']';
}

void print_partitions(std::ostream& os, const std::vector<std::uint32_t>& partitions) {
  os << '[';
  for (std::size_t i = 0; i < partitions.size(); ++i) os << (i ? " " : "") << partitions[i];
  os << ']';
}

void print_value(std::ostream& os, const model::Membership& m) {
  os << "membership gen=" << m.generation << " partitions=";
  print_partitions(os, m.partitions);
}

void print_value(std::ostream& os, const model::GroupStats& g) {
  os << "group gen=" << g.generation << " members=[";
  for (std::size_t i = 0; i < g.members.size(); ++i) {
    os << (i ? " " : "") << format_value(g.members[i]);
  }
  os << ']';
  for (const model::PartitionStats& p : g.partitions) {
    os << "; " << format_value(p.topic) << " owner=" << format_value(p.owner) << " end=" << p.end
       << " committed=" << p.committed << " lag=" << p.lag.messages
       << " oldest_age=" << p.lag.oldest_age;
  }
}

void print_value(std::ostream& os, const std::vector<model::Expired>& list) {
  os << "expired [";
  for (std::size_t i = 0; i < list.size(); ++i) {
    const model::Expired& e = list[i];
    os << (i ? "; " : "") << format_value(e.topic) << '/' << format_value(e.subscription) << ' '
       << e.offset << " -> " << (e.dead_lettered ? "dead" : "redelivery");
  }
  os << ']';
}

void print_value(std::ostream& os, const model::Stats& s) {
  os << "stats committed=" << s.committed << " cursor=" << s.cursor << " backlog=" << s.backlog
     << " in_flight=" << s.in_flight << " delivered=" << s.delivered
     << " redelivered=" << s.redelivered << " confirmed=" << s.confirmed
     << " dead_lettered=" << s.dead_lettered << " skipped=" << s.skipped
     << " filtered=" << s.filtered;
  // Printed only when set, so traces from before R25/R26 read the same.
  if (s.redriven != 0) os << " redriven=" << s.redriven;
  if (s.purged != 0) os << " purged=" << s.purged;
  if (s.paused) os << " paused";
}

void print_value(std::ostream& os, const MovedResult& r) { os << "moved " << r.count; }

void print_value(std::ostream& os, const CutResult& r) {
  if (r.file.empty()) {
    os << "reopened, no segment to damage";
    return;
  }
  os << "reopened" << (r.corrupt ? " after CorruptLog, with repair" : "")
     << (r.noticed ? ", damage reported" : ", nothing reported");
  if (!r.topic.empty())
    os << "; " << format_value(r.topic) << " now keeps [" << r.oldest << ", " << r.end << ")";
  os << " (damaged " << format_value(r.file) << ", base " << r.damaged << ", newest " << r.newest
     << ")";
}

void print_value(std::ostream& os, const OffsetsResult& r) {
  os << "offsets [";
  for (std::size_t i = 0; i < r.offsets.size(); ++i) os << (i ? " " : "") << r.offsets[i];
  os << ']';
}

void print_value(std::ostream& os, const model::Lag& l) {
  os << "lag messages=" << l.messages << " oldest_age=" << l.oldest_age;
}

void print_value(std::ostream& os, const std::vector<model::DeadLetter>& list) {
  os << "dead_letters [";
  for (std::size_t i = 0; i < list.size(); ++i) {
    const model::DeadLetter& d = list[i];
    os << (i ? "; " : "") << format_value(d.topic) << '/' << format_value(d.subscription) << ' '
       << d.offset << ' ' << format_value(d.payload) << " attempts=" << d.attempts
       << " reason=" << format_value(d.reason) << " died_at=" << d.died_at;
  }
  os << ']';
}

void print_value(std::ostream& os, const NamesResult& r) {
  os << "names [";
  for (std::size_t i = 0; i < r.names.size(); ++i) os << (i ? " " : "") << format_value(r.names[i]);
  os << ']';
}

}  // namespace

std::optional<bool> accepted(const Value& value) {
  if (const auto* b = std::get_if<BoolResult>(&value)) return b->value;
  if (const auto* r = std::get_if<model::AckResult>(&value)) return static_cast<bool>(*r);
  return std::nullopt;
}

std::string print(const Outcome& outcome) {
  std::ostringstream os;
  if (outcome.error) {
    os << "error " << model::to_string(*outcome.error);
  } else {
    std::visit([&os](const auto& v) { print_value(os, v); }, outcome.value);
  }
  for (const model::HandlerCall& c : outcome.calls) {
    os << "\n  call " << format_value(c.topic) << '/' << format_value(c.subscription) << ' '
       << c.offset << ' ' << format_value(c.payload) << " attempt=" << c.attempt;
    if (!c.effect.empty()) os << " effect: " << c.effect;
  }
  return os.str();
}

}  // namespace oplang
