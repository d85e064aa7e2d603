// The text form of scripts: one op per line, `#` starts a comment.
//
//   create_topic orders [messages=N] [bytes=B] [partitions=N] [partitioner=murmur2|java]
//   delete_topic orders
//   publish orders "order-1" [NAME=VALUE ...] [key:VALUE]
//   publish_via orders "order-1" [NAME=VALUE ...] [key:VALUE]   # through a broker::Publisher
//   publish_to orders PARTITION "order-1" [NAME=VALUE ...] [key:VALUE]    # R29
//   partitions orders
//   subscribe TOPIC NAME [filter=[NAME=VALUE,...]] [max=N] [start=end|begin|N] [group=G]
//             [idempotent] [backoff=[MS,...]] [script=[STEP,...]]  # broker::idempotent()
//   subscribe_pull TOPIC NAME [filter=[...]] [timeout=MS] [max=N] [start=...] [inflight=N]
//                  [backoff=[MS,...]] [ordered]                       # ordered: R31
//   nack TOPIC SUB OFFSET MEMBER [delay=MS]
//   unsubscribe TOPIC NAME          seek TOPIC NAME OFFSET          drain
//   poll TOPIC SUB MEMBER [max=N]   ack|nack|term TOPIC SUB OFFSET MEMBER
//   poll_wait TOPIC SUB MEMBER [max=N] [timeout=MS]
//   extend TOPIC SUB OFFSET MEMBER MS                               expire
//   advance MS                      stats TOPIC NAME                dead_letters TOPIC NAME
//   yield [N]                       subscriptions TOPIC             topics
//   wait_idle [timeout=MS]          wait_delivered [timeout=MS]
//   end_offset TOPIC                oldest_offset TOPIC
//   restart                         crash [seed=N] [truncate|corrupt]  # durable only (R20, R21)
//   redrive TOPIC NAME              redrive_to TOPIC NAME TOPIC     purge_dead_letters TOPIC NAME
//   pause TOPIC NAME                resume TOPIC NAME               lag TOPIC NAME
//   offset_for_time TOPIC MS        seek_to_time TOPIC NAME MS      # R25-R28
//
// STEP = VERDICT | EFFECT | EFFECT+VERDICT, VERDICT = confirm|reject|throw|throw42|term,
// EFFECT = unsubscribe | unsubscribe(TOPIC,NAME) | publish(TOPIC,PAYLOAD)
//        | seek(TOPIC,NAME,OFFSET) | drain | stall(MS).
// A value is a bare word of [A-Za-z0-9_.-] or a "quoted string" with \" \\ \n \t \r \xHH.
// print() writes every value that is not a plain word quoted, and only non-default options.
//
// Concurrent programs (oplang/program.h): a `broker` line first, then the setup ops, then
// `fiber NAME` blocks whose ops are indented (by spaces or tabs; print() uses two spaces):
//
//   broker pool threads=2 timeout=50 backoff=5    # sync | lane | pool, non-default knobs
//   create_topic t                                # setup: runs first, in order
//   subscribe t s0 max=3 start=begin script=[reject,stall(20)+confirm,throw]
//   subscribe_pull t p timeout=30 max=3 start=begin
//   fiber pub0                                    # then the fibers, concurrently
//     publish t m0
//   fiber w0
//     poll t p w0 max=2
//     ack t p oldest w0       # OFFSET may be `oldest` or `all`: the member's hand (ops.h)
//     advance 20              # in a fiber: this fiber sleeps 20 ms of virtual time
//     expire
//   fiber unsub
//     yield 3                 # three scheduling points
//     unsubscribe t s0
//
// threads= and timeout= are the pool's, backoff= lane's and pool's. `durable
// [publish_sync=P] [commit_sync=P]` ends a broker line (P: always, none, every(MS)): the
// broker is on a simulated disk and `crash [seed=N]` in a fiber cuts its power there, once
// (properties/fiber/durability.h). Fiber names are values;
// an op line that is not indented after the first fiber is an error (the setup is over).
// `oldest` and `all` are for programs only: parse() of a sequential script rejects them
// with a ParseError (a sequential script names offsets).
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "oplang/ops.h"
#include "oplang/program.h"

namespace oplang {

/// A malformed script or program: where (1-based line and column) and what was expected there.
class ParseError : public std::runtime_error {
 public:
  ParseError(std::size_t line, std::size_t column, const std::string& expected);
  [[nodiscard]] std::size_t line() const { return line_; }
  [[nodiscard]] std::size_t column() const { return column_; }
  [[nodiscard]] const std::string& expected() const { return expected_; }

 private:
  std::size_t line_;
  std::size_t column_;
  std::string expected_;
};

/// A value as the text form writes it: a bare word if it is one, else a quoted string.
std::string format_value(std::string_view value);
/// One line of text, without a newline; parse(print(op)) == op.
std::string print(const Op& op);
/// The text names of a fault's call ("open", "append", "sync", "sync_dir", "rename",
/// "remove", "truncate") and error ("eio", "enospc").
const char* name_of(IoCall call);
const char* name_of(DiskError error);
/// One handler step as a script lists it: "reject", "stall(20)", "publish(t,m)+throw".
std::string print(const Step& step);
/// A whole script, one op per line.
std::string print(const Script& script);
/// Parses a script; throws ParseError on the first malformed line. Never crashes.
Script parse(std::string_view text);

/// A whole program: the broker line, the setup ops, then each fiber and its ops indented.
std::string print(const Program& program);
/// Parses a program; throws ParseError on the first malformed line. Never crashes.
Program parse_program(std::string_view text);
/// Several programs, each starting at its own `broker` line (one process, one broker each,
/// run side by side by fiber-replay); line numbers in errors count from the top of `text`.
std::vector<Program> parse_programs(std::string_view text);
/// Programs one after another (parse_programs(print(ps)) == ps).
std::string print(const std::vector<Program>& programs);

/// The text of a script or program file, or of standard input when path is "-"; none after
/// writing one line to `errors` that says why it cannot be read (a directory, cannot open,
/// cannot read). The tools' one way to read their input.
std::optional<std::string> read_source(const std::string& path, std::ostream& errors);

}  // namespace oplang
