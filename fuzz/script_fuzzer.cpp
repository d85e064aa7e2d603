// The text form's parser on garbage: it either parses or throws ParseError (with a line
// and column inside the input), never crashes; and whatever parses prints back to a
// script that parses to the same ops (parse(print(x)) == x).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "oplang/text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  oplang::Script script;
  try {
    script = oplang::parse(text);
  } catch (const oplang::ParseError& e) {
    if (e.line() == 0 || e.column() == 0 || e.expected().empty()) {
      std::fprintf(stderr, "script_fuzzer: ParseError without a position: %s\n", e.what());
      std::abort();
    }
    return 0;
  }
  const std::string printed = oplang::print(script);
  oplang::Script again;
  try {
    again = oplang::parse(printed);
  } catch (const oplang::ParseError& e) {
    std::fprintf(stderr, "script_fuzzer: printed script does not parse: %s\n%s\n", e.what(),
                 printed.c_str());
    std::abort();
  }
  if (!(again == script)) {
    std::fprintf(stderr, "script_fuzzer: parse(print(x)) != x\n%s\n", printed.c_str());
    std::abort();
  }
  return 0;
}
