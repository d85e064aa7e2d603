// The text form of scripts: one op per line, `#` starts a comment.
//
//   create_topic orders [messages=N] [bytes=B]
//   delete_topic orders
//   publish orders "order-1" [NAME=VALUE ...] [key:VALUE]
//   subscribe TOPIC NAME [filter=[NAME=VALUE,...]] [max=N] [start=end|begin|N] [group=G]
//             [script=[STEP,...]]
//   subscribe_pull TOPIC NAME [filter=[...]] [timeout=MS] [max=N] [start=...]
//   unsubscribe TOPIC NAME          seek TOPIC NAME OFFSET          drain
//   poll TOPIC SUB MEMBER [max=N]   ack|nack TOPIC SUB OFFSET MEMBER
//   extend TOPIC SUB OFFSET MEMBER MS                               expire
//   advance MS                      stats TOPIC NAME                dead_letters TOPIC NAME
//
// STEP = VERDICT | EFFECT | EFFECT+VERDICT, VERDICT = confirm|reject|throw|throw42,
// EFFECT = unsubscribe | unsubscribe(TOPIC,NAME) | publish(TOPIC,PAYLOAD)
//        | seek(TOPIC,NAME,OFFSET) | drain.
// A value is a bare word of [A-Za-z0-9_.-] or a "quoted string" with \" \\ \n \t \r \xHH.
// print() writes every value that is not a plain word quoted, and only non-default options.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "oplang/ops.h"

namespace oplang {

/// A malformed script: where (1-based line and column) and what was expected there.
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
/// A whole script, one op per line.
std::string print(const Script& script);
/// Parses a script; throws ParseError on the first malformed line. Never crashes.
Script parse(std::string_view text);

}  // namespace oplang
