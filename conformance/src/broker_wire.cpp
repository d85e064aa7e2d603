// The served broker's reply lines (conformance/broker_wire.h).
#include "conformance/broker_wire.h"

#include <charconv>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <variant>
#include <vector>

#include "conformance/target.h"
#include "model/names.h"

namespace conformance {

namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string hex(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

[[noreturn]] void bad(const std::string& line) {
  throw TargetFailure("not a reply of the served broker: " + line.substr(0, 200));
}

int nibble(char c, const std::string& line) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  bad(line);
}

template <typename T>
T number(std::string_view text, const std::string& line) {
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) bad(line);
  return v;
}

// OFFSET:ATTEMPT:DEADLINE:HEX
model::Received received(const std::string& word, const std::string& line) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t colon = word.find(':', start);
    if (colon == std::string::npos) bad(line);
    parts.emplace_back(word.data() + start, colon - start);
    start = colon + 1;
  }
  const std::string_view payload(word.data() + start, word.size() - start);
  if (payload.size() % 2 != 0) bad(line);
  model::Received m;
  m.offset = number<model::Offset>(parts[0], line);
  m.attempt = number<int>(parts[1], line);
  m.deadline = number<model::Millis>(parts[2], line);
  for (std::size_t i = 0; i < payload.size(); i += 2) {
    m.payload += static_cast<char>(nibble(payload[i], line) * 16 + nibble(payload[i + 1], line));
  }
  return m;
}

}  // namespace

std::string encode_reply(const oplang::Outcome& outcome) {
  if (!outcome.calls.empty()) throw std::invalid_argument("handler calls are not served");
  if (outcome.error) return std::string("error ") + model::to_string(*outcome.error);
  std::ostringstream out;
  if (std::holds_alternative<oplang::Done>(outcome.value)) {
    out << "done";
  } else if (const auto* o = std::get_if<oplang::OffsetResult>(&outcome.value)) {
    out << "offset " << o->offset;
  } else if (const auto* b = std::get_if<oplang::BoolResult>(&outcome.value)) {
    out << "bool " << (b->value ? 1 : 0);
  } else if (const auto* a = std::get_if<model::AckResult>(&outcome.value)) {
    out << "answer " << model::to_string(a->outcome);
  } else if (const auto* c = std::get_if<oplang::CountResult>(&outcome.value)) {
    out << "count " << c->count;
  } else if (const auto* r = std::get_if<std::vector<model::Received>>(&outcome.value)) {
    out << "received " << r->size();
    for (const model::Received& m : *r) {
      out << ' ' << m.offset << ':' << m.attempt << ':' << m.deadline << ':' << hex(m.payload);
    }
  } else {
    throw std::invalid_argument("the served broker's replies do not carry this value");
  }
  return out.str();
}

std::string encode_failure(const std::string& what) {
  std::string one = what;
  for (char& c : one) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return "fail " + one;
}

oplang::Outcome decode_reply(const std::string& line) {
  std::istringstream in(line);
  std::string kind;
  in >> kind;
  oplang::Outcome out;
  out.value = oplang::Done{};
  std::string word;
  if (kind == "fail") {
    throw TargetFailure("the served broker failed: " +
                        line.substr(std::min<std::size_t>(5, line.size())));
  } else if (kind == "error") {
    in >> word;
    out.error = model::error_code_named(word);
    if (!out.error) bad(line);
  } else if (kind == "done") {
  } else if (kind == "offset") {
    in >> word;
    out.value = oplang::OffsetResult{number<model::Offset>(word, line)};
  } else if (kind == "bool") {
    in >> word;
    if (word != "0" && word != "1") bad(line);
    out.value = oplang::BoolResult{word == "1"};
  } else if (kind == "answer") {
    in >> word;
    const std::optional<model::AckOutcome> outcome = model::ack_outcome_named(word);
    if (!outcome) bad(line);
    out.value = model::AckResult{*outcome};
  } else if (kind == "count") {
    in >> word;
    out.value = oplang::CountResult{number<std::uint64_t>(word, line)};
  } else if (kind == "received") {
    in >> word;
    const auto n = number<std::size_t>(word, line);
    std::vector<model::Received> got;
    for (std::size_t i = 0; i < n; ++i) {
      if (!(in >> word)) bad(line);
      got.push_back(received(word, line));
    }
    out.value = std::move(got);
  } else {
    bad(line);
  }
  if (in >> word) bad(line);
  return out;
}

}  // namespace conformance
