// The target protocol (SPEC "Conformance", docs/target-protocol.md): any program that reads
// requests on stdin and writes replies on stdout, one JSON object per line, is an engine the
// kit can judge (exec_target.h runs it). Version 1.
//
//   target -> kit, first:  {"hello":"at-least-once-target","version":1,"name":"rabbitmq",
//                           "serves":["max_in_flight",...],"workers":true,"unit_ms":20,
//                           "filter_is_the_adapters":false}
//   kit -> target:         {"id":7,"worker":0,"op":"poll","topic":"t","sub":"s",
//                           "member":"w1","max":2}
//   target -> kit:         {"id":7,"received":[{"offset":0,"payload":"a","attempt":1,
//                           "deadline":30000}],"ahead_ms":0}
//
// Every string is a byte string: byte b is the code point U+00bb (ISO-8859-1 read as
// Unicode; Python's bytes.decode('latin-1')), so payloads and names of any bytes travel
// unchanged and ASCII reads as itself. A reply has exactly one of: done, offset, bool, ack
// (an AckOutcome's name), received, expired, dead_letters, lag, stats, error (an ErrorCode's
// name: the call was refused and changed nothing) or fail (the engine could not run the op:
// the run stops, never a violation).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/types.h"
#include "oplang/ops.h"
#include "oplang/outcome.h"

namespace conformance {

inline constexpr int kProtocolVersion = 1;

/// A line that is not what the protocol says (bad JSON, a missing or mistyped field, an op
/// or value the protocol does not carry). Its what() names the field.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a target states in its first line.
struct Hello {
  int version = kProtocolVersion;
  std::string name;  // reports' name
  /// What it serves beyond the common subset (target.h): retention_by_messages,
  /// max_in_flight, nack_delay, seek, seek_to_time, lag, stats.
  std::vector<std::string> serves;
  bool workers = false;       // requests may name workers 1, 2, ... (other clients, at once)
  model::Millis unit_ms = 0;  // real ms per model ms (advance sleeps); 0: the model's clock
  bool filter_is_the_adapters = false;  // Target::filter_is_the_adapters
  bool operator==(const Hello&) const = default;
};

/// The feature names a hello may list.
const std::vector<std::string>& protocol_features();

/// Whether a target that said hello serves op: the common subset and its features.
bool hello_serves(const Hello& hello, const oplang::Op& op);

/// One request: the op a worker (0: the target itself) runs.
struct Request {
  std::uint64_t id = 0;
  std::uint32_t worker = 0;
  oplang::Op op;
};

/// One reply: the outcome of request `id`, or the engine's failure.
struct Reply {
  std::uint64_t id = 0;
  std::optional<oplang::Outcome> outcome;  // none: failed
  std::string failure;                     // why, when failed
  model::Millis ahead_ms = 0;              // Target::lag() as the target measured it
};

/// The lines (without newline). Encoders throw std::invalid_argument for an op or value the
/// protocol does not carry; decoders throw ProtocolError.
std::string encode_hello(const Hello& hello);
Hello decode_hello(const std::string& line);
std::string encode_request(const Request& request);
Request decode_request(const std::string& line);
std::string encode_protocol_reply(const Reply& reply);
Reply decode_protocol_reply(const std::string& line);

/// Whether `value` is an answer the protocol lets `op` give (a publish answers an offset,
/// a seek_to_time the offset it moved to, an ack an AckOutcome or a bool, ...): a reply of another
/// kind is the engine's failure.
bool answers(const oplang::Op& op, const oplang::Value& value);

/// Splits a byte stream into lines: what a reader of the protocol keeps between reads.
class LineSplitter {
 public:
  /// Appends `chunk` and returns every line it completed, in order, without newlines.
  std::vector<std::string> feed(const std::string& chunk);
  /// Bytes after the last newline (an unfinished line).
  [[nodiscard]] const std::string& pending() const { return pending_; }

 private:
  std::string pending_;
};

}  // namespace conformance
