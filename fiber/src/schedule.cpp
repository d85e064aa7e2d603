// Schedule constructors and the text form.
#include "fiber/schedule.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace fiber {

Schedule Schedule::walk(std::vector<std::uint32_t> choices) {
  Schedule s;
  s.choices = std::move(choices);
  return s;
}

Schedule Schedule::random(std::uint64_t seed) {
  Schedule s;
  s.seed = seed == 0 ? 1 : seed;
  return s;
}

Schedule Schedule::pct(std::uint64_t seed, int d, std::uint32_t k) {
  Schedule s;
  s.strategy = Strategy::kPct;
  s.seed = seed;
  s.depth = d < 1 ? 1 : d;
  s.steps = k < 1 ? 1 : k;
  return s;
}

std::string to_string(const Schedule& s) {
  std::ostringstream out;
  const char* mem = s.weak ? "mem=weak:" : "";
  if (s.strategy == Strategy::kPct) {
    out << "pct:" << mem << "d=" << s.depth << ":k=" << s.steps << ":seed=" << s.seed;
    return out.str();
  }
  out << "walk:" << mem << "seed=" << s.seed << ":choices=";
  for (std::size_t i = 0; i < s.choices.size(); ++i) out << (i ? "," : "") << s.choices[i];
  return out.str();
}

namespace {

template <typename T>
bool parse_number(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool parse_choices(std::string_view text, std::vector<std::uint32_t>& out) {
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::uint32_t c = 0;
    if (!parse_number(text.substr(0, comma), c)) return false;
    out.push_back(c);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return true;
}

}  // namespace

std::optional<Schedule> parse_schedule(std::string_view text) {
  Schedule s;
  const std::size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  if (kind == "pct") {
    s.strategy = Strategy::kPct;
  } else if (kind != "walk") {
    return std::nullopt;
  }
  text = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  while (!text.empty()) {
    const std::size_t next = text.find(':');
    const std::string_view field = text.substr(0, next);
    const std::size_t eq = field.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = field.substr(0, eq);
    const std::string_view value = field.substr(eq + 1);
    bool good = false;
    if (key == "seed") good = parse_number(value, s.seed);
    if (key == "d") good = parse_number(value, s.depth) && s.depth >= 1;
    if (key == "k") good = parse_number(value, s.steps) && s.steps >= 1;
    if (key == "choices") good = parse_choices(value, s.choices);
    if (key == "mem") {
      good = value == "weak" || value == "sc";
      s.weak = value == "weak";
    }
    if (!good) return std::nullopt;
    if (next == std::string_view::npos) break;
    text.remove_prefix(next + 1);
  }
  return s;
}

std::optional<Schedule> schedule_from_env() {
  const char* text = std::getenv("FIBER_SCHEDULE");
  if (text == nullptr || *text == '\0') return std::nullopt;
  std::optional<Schedule> s = parse_schedule(text);
  if (!s) {
    std::fprintf(stderr, "FIBER_SCHEDULE is malformed: %s\n", text);
    std::abort();
  }
  return s;
}

}  // namespace fiber
