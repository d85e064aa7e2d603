// The target protocol's lines (conformance/target_protocol.h).
#include "conformance/target_protocol.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <variant>

#include "conformance/target.h"
#include "model/errors.h"
#include "model/names.h"

namespace conformance {

namespace {

using nlohmann::json;

constexpr const char* kHelloWord = "at-least-once-target";

// Byte b <-> code point U+00bb, in the UTF-8 a JSON text is written in.
std::string utf8_of_bytes(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

std::string bytes_of_utf8(const std::string& utf8, const char* field) {
  std::string out;
  out.reserve(utf8.size());
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if ((c == 0xC2 || c == 0xC3) && i + 1 < utf8.size()) {
      out.push_back(
          static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(utf8[++i]) & 0x3F)));
    } else {
      throw ProtocolError(std::string("field '") + field +
                          "' has a character above U+00FF (strings carry bytes as U+0000-U+00FF)");
    }
  }
  return out;
}

const json& field(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end()) throw ProtocolError(std::string("no field '") + name + "'");
  return *it;
}

std::string bytes(const json& j, const char* name) {
  const json& f = field(j, name);
  if (!f.is_string()) throw ProtocolError(std::string("field '") + name + "' is not a string");
  return bytes_of_utf8(f.get<std::string>(), name);
}

std::uint64_t unsigned_field(const json& j, const char* name) {
  const json& f = field(j, name);
  if (!f.is_number_unsigned() && !(f.is_number_integer() && f.get<std::int64_t>() >= 0)) {
    throw ProtocolError(std::string("field '") + name + "' is not a number >= 0");
  }
  return f.get<std::uint64_t>();
}

std::int64_t integer_field(const json& j, const char* name) {
  const json& f = field(j, name);
  if (!f.is_number_integer())
    throw ProtocolError(std::string("field '") + name + "' is not an integer");
  return f.get<std::int64_t>();
}

bool bool_field(const json& j, const char* name) {
  const json& f = field(j, name);
  if (!f.is_boolean())
    throw ProtocolError(std::string("field '") + name + "' is not true or false");
  return f.get<bool>();
}

template <typename T>
T optional_or(const json& j, const char* name, T fallback, T (*read)(const json&, const char*)) {
  return j.contains(name) ? read(j, name) : fallback;
}

json headers_json(const model::Headers& headers) {
  json out = json::object();
  for (const auto& [k, v] : headers) out[utf8_of_bytes(k)] = utf8_of_bytes(v);
  return out;
}

model::Headers headers_of(const json& j, const char* name) {
  model::Headers out;
  if (!j.contains(name)) return out;
  const json& f = j.at(name);
  if (!f.is_object()) throw ProtocolError(std::string("field '") + name + "' is not an object");
  for (const auto& [k, v] : f.items()) {
    if (!v.is_string())
      throw ProtocolError(std::string("a value of '") + name + "' is not a string");
    out[bytes_of_utf8(k, name)] = bytes_of_utf8(v.get<std::string>(), name);
  }
  return out;
}

model::ErrorCode error_named(const std::string& name) {
  if (const std::optional<model::ErrorCode> code = model::error_code_named(name)) return *code;
  throw ProtocolError("unknown error name '" + name + "'");
}

model::AckOutcome ack_named(const std::string& name) {
  if (const std::optional<model::AckOutcome> a = model::ack_outcome_named(name)) return *a;
  throw ProtocolError("unknown ack outcome '" + name + "'");
}

json parse_line(const std::string& line) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception& e) {
    throw ProtocolError(std::string("not JSON: ") + e.what());
  }
  if (!j.is_object()) throw ProtocolError("not a JSON object");
  return j;
}

// A settle by offset: ack, term (and the common fields of nack and extend).
template <typename T>
json settle_json(const char* name, const T& o) {
  if (o.which != oplang::Which::kOffset || o.generation != 0) {
    throw std::invalid_argument(std::string(name) +
                                " by the hand or a group receipt is not in the protocol");
  }
  return {{"op", name},
          {"topic", utf8_of_bytes(o.topic)},
          {"sub", utf8_of_bytes(o.sub)},
          {"offset", o.offset},
          {"member", utf8_of_bytes(o.member)}};
}

template <typename T>
T settle_of(const json& j) {
  T o;
  o.topic = bytes(j, "topic");
  o.sub = bytes(j, "sub");
  o.offset = unsigned_field(j, "offset");
  o.member = bytes(j, "member");
  return o;
}

json op_json(const oplang::Op& op) {
  return std::visit(
      [](const auto& o) -> json {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, oplang::CreateTopic>) {
          if (o.retention_bytes != 0 || o.partitions != 1 || o.if_absent) {
            throw std::invalid_argument(
                "create_topic with bytes, partitions or if_absent is not in the protocol");
          }
          json j = {{"op", "create_topic"}, {"topic", utf8_of_bytes(o.name)}};
          if (o.retention_messages > 0) j["retention_messages"] = o.retention_messages;
          return j;
        } else if constexpr (std::is_same_v<T, oplang::DeleteTopic>) {
          return {{"op", "delete_topic"}, {"topic", utf8_of_bytes(o.name)}};
        } else if constexpr (std::is_same_v<T, oplang::Publish>) {
          if (!o.key.empty())
            throw std::invalid_argument("publish with a key is not in the protocol");
          return {{"op", "publish"},
                  {"topic", utf8_of_bytes(o.topic)},
                  {"payload", utf8_of_bytes(o.payload)},
                  {"headers", headers_json(o.headers)}};
        } else if constexpr (std::is_same_v<T, oplang::SubscribePull>) {
          if (!o.backoff.empty() || o.ordered_by_key || o.durable_attempts ||
              o.start.kind == model::Start::Kind::kOffset) {
            throw std::invalid_argument(
                "subscribe_pull with backoff, order by key, durable attempts or a start offset is "
                "not in the protocol");
          }
          json j = {
              {"op", "subscribe_pull"},
              {"topic", utf8_of_bytes(o.topic)},
              {"name", utf8_of_bytes(o.name)},
              {"filter", headers_json(o.filter)},
              {"ack_timeout", o.ack_timeout},
              {"max_deliveries", o.max_deliveries},
              {"start", o.start.kind == model::Start::Kind::kBeginning ? "beginning" : "end"}};
          if (o.max_in_flight > 0) j["max_in_flight"] = o.max_in_flight;
          return j;
        } else if constexpr (std::is_same_v<T, oplang::Unsubscribe>) {
          return {{"op", "unsubscribe"},
                  {"topic", utf8_of_bytes(o.topic)},
                  {"name", utf8_of_bytes(o.name)}};
        } else if constexpr (std::is_same_v<T, oplang::Poll>) {
          return {{"op", "poll"},
                  {"topic", utf8_of_bytes(o.topic)},
                  {"sub", utf8_of_bytes(o.sub)},
                  {"member", utf8_of_bytes(o.member)},
                  {"max", o.max}};
        } else if constexpr (std::is_same_v<T, oplang::Ack>) {
          return settle_json("ack", o);
        } else if constexpr (std::is_same_v<T, oplang::Term>) {
          return settle_json("term", o);
        } else if constexpr (std::is_same_v<T, oplang::Nack>) {
          json j = settle_json("nack", o);
          if (o.delay) j["delay"] = *o.delay;
          return j;
        } else if constexpr (std::is_same_v<T, oplang::Extend>) {
          json j = settle_json("extend", o);
          j["extension"] = o.extension;
          return j;
        } else if constexpr (std::is_same_v<T, oplang::Advance>) {
          return {{"op", "advance"}, {"ms", o.ms}};
        } else if constexpr (std::is_same_v<T, oplang::Expire>) {
          return {{"op", "expire"}};
        } else if constexpr (std::is_same_v<T, oplang::GetDeadLetters>) {
          return {{"op", "dead_letters"},
                  {"topic", utf8_of_bytes(o.topic)},
                  {"name", utf8_of_bytes(o.name)}};
        } else if constexpr (std::is_same_v<T, oplang::Seek>) {
          return {{"op", "seek"},
                  {"topic", utf8_of_bytes(o.topic)},
                  {"name", utf8_of_bytes(o.name)},
                  {"offset", o.offset}};
        } else if constexpr (std::is_same_v<T, oplang::SeekToTime>) {
          return {{"op", "seek_to_time"},
                  {"topic", utf8_of_bytes(o.topic)},
                  {"name", utf8_of_bytes(o.name)},
                  {"time", o.time}};
        } else if constexpr (std::is_same_v<T, oplang::GetLag>) {
          return {
              {"op", "lag"}, {"topic", utf8_of_bytes(o.topic)}, {"name", utf8_of_bytes(o.name)}};
        } else if constexpr (std::is_same_v<T, oplang::GetStats>) {
          return {
              {"op", "stats"}, {"topic", utf8_of_bytes(o.topic)}, {"name", utf8_of_bytes(o.name)}};
        } else {
          throw std::invalid_argument("not in the target protocol");
        }
      },
      op);
}

oplang::Op op_of(const json& j) {
  const std::string name = bytes(j, "op");
  if (name == "create_topic") {
    oplang::CreateTopic o;
    o.name = bytes(j, "topic");
    o.retention_messages = optional_or<std::uint64_t>(j, "retention_messages", 0, unsigned_field);
    return o;
  }
  if (name == "delete_topic") return oplang::DeleteTopic{bytes(j, "topic")};
  if (name == "publish") {
    oplang::Publish o;
    o.topic = bytes(j, "topic");
    o.payload = bytes(j, "payload");
    o.headers = headers_of(j, "headers");
    return o;
  }
  if (name == "subscribe_pull") {
    oplang::SubscribePull o;
    o.topic = bytes(j, "topic");
    o.name = bytes(j, "name");
    o.filter = headers_of(j, "filter");
    o.ack_timeout = integer_field(j, "ack_timeout");
    o.max_deliveries = static_cast<int>(integer_field(j, "max_deliveries"));
    const std::string start = bytes(j, "start");
    if (start != "beginning" && start != "end") {
      throw ProtocolError("field 'start' is beginning or end, not " + start);
    }
    o.start.kind = start == "beginning" ? model::Start::Kind::kBeginning : model::Start::Kind::kEnd;
    o.max_in_flight = optional_or<std::uint64_t>(j, "max_in_flight", 0, unsigned_field);
    return o;
  }
  if (name == "unsubscribe") return oplang::Unsubscribe{bytes(j, "topic"), bytes(j, "name")};
  if (name == "poll") {
    return oplang::Poll{bytes(j, "topic"), bytes(j, "sub"), bytes(j, "member"),
                        unsigned_field(j, "max")};
  }
  if (name == "ack") return settle_of<oplang::Ack>(j);
  if (name == "term") return settle_of<oplang::Term>(j);
  if (name == "nack") {
    oplang::Nack o = settle_of<oplang::Nack>(j);
    if (j.contains("delay")) o.delay = integer_field(j, "delay");
    return o;
  }
  if (name == "extend") {
    oplang::Extend o = settle_of<oplang::Extend>(j);
    o.extension = integer_field(j, "extension");
    return o;
  }
  if (name == "advance") return oplang::Advance{integer_field(j, "ms")};
  if (name == "expire") return oplang::Expire{};
  if (name == "dead_letters") return oplang::GetDeadLetters{bytes(j, "topic"), bytes(j, "name")};
  if (name == "seek")
    return oplang::Seek{bytes(j, "topic"), bytes(j, "name"), unsigned_field(j, "offset")};
  if (name == "seek_to_time") {
    return oplang::SeekToTime{bytes(j, "topic"), bytes(j, "name"), integer_field(j, "time")};
  }
  if (name == "lag") return oplang::GetLag{bytes(j, "topic"), bytes(j, "name")};
  if (name == "stats") return oplang::GetStats{bytes(j, "topic"), bytes(j, "name")};
  throw ProtocolError("unknown op '" + name + "'");
}

json stats_json(const model::Stats& s) {
  return {{"committed", s.committed}, {"cursor", s.cursor},
          {"backlog", s.backlog},     {"in_flight", s.in_flight},
          {"delivered", s.delivered}, {"redelivered", s.redelivered},
          {"confirmed", s.confirmed}, {"dead_lettered", s.dead_lettered},
          {"skipped", s.skipped},     {"filtered", s.filtered}};
}

model::Stats stats_of(const json& j) {
  if (!j.is_object()) throw ProtocolError("field 'stats' is not an object");
  model::Stats s;
  s.committed = unsigned_field(j, "committed");
  s.cursor = unsigned_field(j, "cursor");
  s.backlog = unsigned_field(j, "backlog");
  s.in_flight = unsigned_field(j, "in_flight");
  s.delivered = unsigned_field(j, "delivered");
  s.redelivered = unsigned_field(j, "redelivered");
  s.confirmed = unsigned_field(j, "confirmed");
  s.dead_lettered = unsigned_field(j, "dead_lettered");
  s.skipped = unsigned_field(j, "skipped");
  s.filtered = unsigned_field(j, "filtered");
  return s;
}

const json& array_field(const json& j, const char* name) {
  const json& f = field(j, name);
  if (!f.is_array()) throw ProtocolError(std::string("field '") + name + "' is not an array");
  return f;
}

// The value of a reply object, by its one key.
oplang::Value value_of(const json& j) {
  if (j.contains("done")) return oplang::Done{};
  if (j.contains("offset")) return oplang::OffsetResult{unsigned_field(j, "offset"), std::nullopt};
  if (j.contains("bool")) return oplang::BoolResult{bool_field(j, "bool")};
  if (j.contains("ack")) return model::AckResult{ack_named(bytes(j, "ack"))};
  if (j.contains("received")) {
    std::vector<model::Received> out;
    for (const json& r : array_field(j, "received")) {
      model::Received m;
      m.offset = unsigned_field(r, "offset");
      m.payload = bytes(r, "payload");
      m.attempt = static_cast<int>(integer_field(r, "attempt"));
      m.deadline = integer_field(r, "deadline");
      out.push_back(std::move(m));
    }
    return out;
  }
  if (j.contains("expired")) {
    std::vector<model::Expired> out;
    for (const json& e : array_field(j, "expired")) {
      out.push_back({bytes(e, "topic"), bytes(e, "sub"), unsigned_field(e, "offset"),
                     bool_field(e, "dead_lettered")});
    }
    return out;
  }
  if (j.contains("dead_letters")) {
    std::vector<model::DeadLetter> out;
    for (const json& d : array_field(j, "dead_letters")) {
      model::DeadLetter l;
      l.topic = bytes(d, "topic");
      l.subscription = bytes(d, "sub");
      l.offset = unsigned_field(d, "offset");
      l.payload = bytes(d, "payload");
      l.attempts = static_cast<int>(integer_field(d, "attempts"));
      l.reason = bytes(d, "reason");
      l.died_at = integer_field(d, "died_at");
      l.headers = headers_of(d, "headers");
      out.push_back(std::move(l));
    }
    return out;
  }
  if (j.contains("lag")) {
    const json& l = field(j, "lag");
    return model::Lag{unsigned_field(l, "messages"), integer_field(l, "oldest_age")};
  }
  if (j.contains("stats")) return stats_of(field(j, "stats"));
  throw ProtocolError(
      "a reply has one of done, offset, bool, ack, received, expired, "
      "dead_letters, lag, stats, error or fail");
}

json value_json(const oplang::Value& value) {
  return std::visit(
      [](const auto& v) -> json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, oplang::Done>) {
          return {{"done", true}};
        } else if constexpr (std::is_same_v<T, oplang::OffsetResult>) {
          return {{"offset", v.offset}};
        } else if constexpr (std::is_same_v<T, oplang::BoolResult>) {
          return {{"bool", v.value}};
        } else if constexpr (std::is_same_v<T, model::AckResult>) {
          return {{"ack", model::to_string(v.outcome)}};
        } else if constexpr (std::is_same_v<T, std::vector<model::Received>>) {
          json out = json::array();
          for (const model::Received& m : v) {
            out.push_back({{"offset", m.offset},
                           {"payload", utf8_of_bytes(m.payload)},
                           {"attempt", m.attempt},
                           {"deadline", m.deadline}});
          }
          return {{"received", out}};
        } else if constexpr (std::is_same_v<T, std::vector<model::Expired>>) {
          json out = json::array();
          for (const model::Expired& e : v) {
            out.push_back({{"topic", utf8_of_bytes(e.topic)},
                           {"sub", utf8_of_bytes(e.subscription)},
                           {"offset", e.offset},
                           {"dead_lettered", e.dead_lettered}});
          }
          return {{"expired", out}};
        } else if constexpr (std::is_same_v<T, std::vector<model::DeadLetter>>) {
          json out = json::array();
          for (const model::DeadLetter& d : v) {
            out.push_back({{"topic", utf8_of_bytes(d.topic)},
                           {"sub", utf8_of_bytes(d.subscription)},
                           {"offset", d.offset},
                           {"payload", utf8_of_bytes(d.payload)},
                           {"attempts", d.attempts},
                           {"reason", utf8_of_bytes(d.reason)},
                           {"died_at", d.died_at},
                           {"headers", headers_json(d.headers)}});
          }
          return {{"dead_letters", out}};
        } else if constexpr (std::is_same_v<T, model::Lag>) {
          return {{"lag", {{"messages", v.messages}, {"oldest_age", v.oldest_age}}}};
        } else if constexpr (std::is_same_v<T, model::Stats>) {
          return {{"stats", stats_json(v)}};
        } else {
          throw std::invalid_argument("a value the target protocol does not carry");
        }
      },
      value);
}

}  // namespace

const std::vector<std::string>& protocol_features() {
  static const std::vector<std::string> features = {
      "retention_by_messages", "max_in_flight", "nack_delay", "seek",
      "seek_to_time",          "lag",           "stats"};
  return features;
}

bool hello_serves(const Hello& hello, const oplang::Op& op) {
  if (in_subset(op)) return true;
  auto has = [&](const char* feature) {
    return std::find(hello.serves.begin(), hello.serves.end(), feature) != hello.serves.end();
  };
  return (has("retention_by_messages") && retention_by_messages(op)) ||
         (has("max_in_flight") && pull_with_max_in_flight(op)) ||
         (has("nack_delay") && nack_with_delay(op)) ||
         (has("seek") && std::holds_alternative<oplang::Seek>(op)) ||
         (has("seek_to_time") && std::holds_alternative<oplang::SeekToTime>(op)) ||
         (has("lag") && std::holds_alternative<oplang::GetLag>(op)) ||
         (has("stats") && std::holds_alternative<oplang::GetStats>(op));
}

std::string encode_hello(const Hello& hello) {
  json serves = json::array();
  for (const std::string& s : hello.serves) serves.push_back(utf8_of_bytes(s));
  return json{{"hello", kHelloWord},
              {"version", hello.version},
              {"name", utf8_of_bytes(hello.name)},
              {"serves", serves},
              {"workers", hello.workers},
              {"unit_ms", hello.unit_ms},
              {"filter_is_the_adapters", hello.filter_is_the_adapters}}
      .dump();
}

Hello decode_hello(const std::string& line) {
  const json j = parse_line(line);
  if (!j.contains("hello") || !j.at("hello").is_string() || j.at("hello") != kHelloWord) {
    throw ProtocolError(std::string("the first line is not a hello (\"hello\":\"") + kHelloWord +
                        "\")");
  }
  Hello h;
  h.version = static_cast<int>(integer_field(j, "version"));
  if (h.version != kProtocolVersion) {
    throw ProtocolError("protocol version " + std::to_string(h.version) + ": this kit speaks " +
                        std::to_string(kProtocolVersion));
  }
  h.name = bytes(j, "name");
  if (h.name.empty()) throw ProtocolError("field 'name' is empty");
  for (const json& s : array_field(j, "serves")) {
    if (!s.is_string()) throw ProtocolError("field 'serves' lists a value that is not a string");
    const std::string feature = s.get<std::string>();
    const auto& known = protocol_features();
    if (std::find(known.begin(), known.end(), feature) == known.end()) {
      throw ProtocolError("field 'serves' names an unknown feature '" + feature + "'");
    }
    h.serves.push_back(feature);
  }
  h.workers = j.contains("workers") && bool_field(j, "workers");
  h.unit_ms = j.contains("unit_ms") ? integer_field(j, "unit_ms") : 0;
  if (h.unit_ms < 0) throw ProtocolError("field 'unit_ms' is negative");
  h.filter_is_the_adapters =
      j.contains("filter_is_the_adapters") && bool_field(j, "filter_is_the_adapters");
  return h;
}

std::string encode_request(const Request& request) {
  json j = op_json(request.op);
  j["id"] = request.id;
  j["worker"] = request.worker;
  return j.dump();
}

Request decode_request(const std::string& line) {
  const json j = parse_line(line);
  Request r;
  r.id = unsigned_field(j, "id");
  r.worker = static_cast<std::uint32_t>(unsigned_field(j, "worker"));
  r.op = op_of(j);
  return r;
}

std::string encode_protocol_reply(const Reply& reply) {
  json j;
  if (!reply.outcome) {
    j = {{"fail", utf8_of_bytes(reply.failure)}};
  } else if (reply.outcome->error) {
    j = {{"error", model::to_string(*reply.outcome->error)}};
  } else {
    if (!reply.outcome->calls.empty()) {
      throw std::invalid_argument("handler calls are not in the target protocol");
    }
    j = value_json(reply.outcome->value);
  }
  j["id"] = reply.id;
  if (reply.ahead_ms != 0) j["ahead_ms"] = reply.ahead_ms;
  return j.dump();
}

Reply decode_protocol_reply(const std::string& line) {
  const json j = parse_line(line);
  Reply r;
  r.id = unsigned_field(j, "id");
  r.ahead_ms = j.contains("ahead_ms") ? integer_field(j, "ahead_ms") : 0;
  if (j.contains("fail")) {
    r.failure = bytes(j, "fail");
    return r;
  }
  oplang::Outcome out;
  if (j.contains("error")) {
    out.error = error_named(bytes(j, "error"));
  } else {
    out.value = value_of(j);
  }
  r.outcome = std::move(out);
  return r;
}

bool answers(const oplang::Op& op, const oplang::Value& value) {
  return std::visit(
      [&](const auto& o) -> bool {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, oplang::Publish> || std::is_same_v<T, oplang::SeekToTime>) {
          return std::holds_alternative<oplang::OffsetResult>(value);
        } else if constexpr (std::is_same_v<T, oplang::Unsubscribe>) {
          return std::holds_alternative<oplang::BoolResult>(value);
        } else if constexpr (std::is_same_v<T, oplang::Ack> || std::is_same_v<T, oplang::Nack> ||
                             std::is_same_v<T, oplang::Term> || std::is_same_v<T, oplang::Extend>) {
          return std::holds_alternative<model::AckResult>(value) ||
                 std::holds_alternative<oplang::BoolResult>(value);
        } else if constexpr (std::is_same_v<T, oplang::Poll>) {
          return std::holds_alternative<std::vector<model::Received>>(value);
        } else if constexpr (std::is_same_v<T, oplang::Expire>) {
          return std::holds_alternative<std::vector<model::Expired>>(value);
        } else if constexpr (std::is_same_v<T, oplang::GetDeadLetters>) {
          return std::holds_alternative<std::vector<model::DeadLetter>>(value);
        } else if constexpr (std::is_same_v<T, oplang::GetLag>) {
          return std::holds_alternative<model::Lag>(value);
        } else if constexpr (std::is_same_v<T, oplang::GetStats>) {
          return std::holds_alternative<model::Stats>(value);
        } else {
          return std::holds_alternative<oplang::Done>(value);
        }
      },
      op);
}

std::vector<std::string> LineSplitter::feed(const std::string& chunk) {
  pending_ += chunk;
  std::vector<std::string> lines;
  std::size_t from = 0;
  for (std::size_t nl; (nl = pending_.find('\n', from)) != std::string::npos; from = nl + 1) {
    lines.push_back(pending_.substr(from, nl - from));
  }
  pending_.erase(0, from);
  return lines;
}

}  // namespace conformance
