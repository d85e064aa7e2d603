// The spec site's playground: the reference model, the operation language's parser and
// printer and the trace printer (oplang/trace.h), compiled to WebAssembly by scripts/spec-site.
// The page (site/static/playground.js) calls playground_run() through Emscripten's ccall; the
// same model_trace() is what `spec-trace --model-only` prints, so both show the same bytes.
// playground_state() gives the state after a step (oplang/state_view.h) as JSON, which the
// page draws. Only the model runs here: no broker, no threads.
#include <emscripten/emscripten.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <string>
#include <string_view>

#include "oplang/state_view.h"
#include "oplang/text.h"
#include "oplang/trace.h"

namespace {

// Limits stated on the page and enforced by the page too: a script past them is refused
// before it is parsed, so an enormous paste cannot freeze the tab.
constexpr std::size_t kMaxBytes = 64 * 1024;
constexpr std::size_t kMaxLines = 2000;

enum Status { kOk = 0, kParseError = 1, kTooLarge = 2, kNoState = 3 };

// The last run's answer; the page reads it right after playground_run() returns.
std::string output;
int status = kOk;
int error_line = 0;
int error_column = 0;

// Parses text into script, or leaves the refusal or the parse error in output, status and
// error_line/column and returns false.
bool parse_checked(std::string_view script_text, oplang::Script& script) {
  error_line = error_column = 0;
  // Lines as an editor counts them: a last line without a newline counts too.
  const std::size_t lines =
      static_cast<std::size_t>(std::count(script_text.begin(), script_text.end(), '\n')) +
      (!script_text.empty() && script_text.back() != '\n' ? 1 : 0);
  if (script_text.size() > kMaxBytes || lines > kMaxLines) {
    status = kTooLarge;
    output = "script too large: " + std::to_string(script_text.size()) + " bytes, " +
             std::to_string(lines) + " lines (the playground takes at most " +
             std::to_string(kMaxBytes / 1024) + " KiB and " + std::to_string(kMaxLines) + " lines)";
    return false;
  }
  try {
    script = oplang::parse(script_text);
    status = kOk;
    return true;
  } catch (const oplang::ParseError& e) {
    status = kParseError;
    error_line = static_cast<int>(e.line());
    error_column = static_cast<int>(e.column());
    output = std::string("script:") + e.what();  // as spec-trace prints it, `script` for the file
    return false;
  }
}

}  // namespace

extern "C" {

/// Runs a script's text on a fresh model; returns its trace, or the error (then
/// playground_status() says which and playground_error_line/column() where).
EMSCRIPTEN_KEEPALIVE const char* playground_run(const char* text) {
  oplang::Script script;
  if (parse_checked(text, script)) output = oplang::model_trace(script);
  return output.c_str();
}

/// Runs a script's first `step` ops (all of them if it has fewer) on a fresh model, as
/// playground_run() does, and returns the state the model is left in as one JSON object
/// (oplang::to_json); or the error, as playground_run() returns it, or why the model could not
/// be read (status 3).
EMSCRIPTEN_KEEPALIVE const char* playground_state(const char* text, int step) {
  oplang::Script script;
  if (!parse_checked(text, script)) return output.c_str();
  try {
    const auto steps = static_cast<std::size_t>(std::max(step, 0));
    output = oplang::to_json(oplang::state_after(script, steps));
  } catch (const std::exception& e) {
    status = kNoState;  // an observer refused (state_view.h reads the model's public API)
    output = e.what();
  }
  return output.c_str();
}

/// 0: the trace (or state); 1: a parse error; 2: the script is over the limits; 3: no state.
EMSCRIPTEN_KEEPALIVE int playground_status() { return status; }
/// The parse error's line (1-based), 0 if none.
EMSCRIPTEN_KEEPALIVE int playground_error_line() { return error_line; }
/// The parse error's column (1-based), 0 if none.
EMSCRIPTEN_KEEPALIVE int playground_error_column() { return error_column; }
/// The limits, so the page states and checks the same numbers.
EMSCRIPTEN_KEEPALIVE int playground_max_bytes() { return static_cast<int>(kMaxBytes); }
/// See playground_max_bytes().
EMSCRIPTEN_KEEPALIVE int playground_max_lines() { return static_cast<int>(kMaxLines); }
}
