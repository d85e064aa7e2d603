// spec-trace [--diff] [--durable] SCRIPT|-: runs a text script on the model and on the broker,
// prints what each step returned and delivered, and marks the first difference. --diff prints only
// the steps that differ, then a summary line. `spec-trace --help` for the whole usage.
// Exit status: 0 identical, 1 a difference, 2 bad usage or an unreadable/malformed script.
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "harness/broker_runner.h"
#include "oplang/model_runner.h"
#include "oplang/text.h"

namespace {

constexpr int kSame = 0;
constexpr int kDifferent = 1;
constexpr int kBadInput = 2;

constexpr std::string_view kUsage = R"(usage: spec-trace [--diff] [--durable] SCRIPT
       spec-trace --help

Runs a script of the operation language (one op per line, `#` comments; see
model/include/oplang/text.h and examples/*.script) on the reference model and on
the real broker side by side, and compares what every step returned and which
handler calls it made.

Arguments:
  SCRIPT      the script file; `-` reads it from standard input

Options:
  --diff      print only the steps where model and broker differ (every one,
              not just the first), then one summary line
  --durable   run the broker with storage on a simulated disk (FsyncPolicy always);
              implied when the script has a `restart` or `crash` step
  -h, --help  print this help and exit
  --          end of options (a SCRIPT named like an option follows)

Normal output: each step as `[N] op` followed by its outcome; at the first
difference both outcomes (model, broker) are printed and the run stops. The last
line is `identical: N steps` when nothing differed.

Exit status:
  0  model and broker agree on every step
  1  they differ (or the broker let a non-broker exception escape)
  2  bad usage, or the script cannot be read or does not parse

Examples:
  spec-trace examples/seed004_trace.script
  spec-trace --diff examples/seed004_trace.script
  printf 'create_topic t\npublish t m\n' | spec-trace -
)";

// Indents every line after the first so multi-line outcomes stay under their step.
std::string indent(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out;
}

int usage_error(const std::string& message) {
  std::cerr << "spec-trace: " << message << " (try spec-trace --help)\n";
  return kBadInput;
}

// One side's outcome of a step, or the text of the exception that escaped it.
struct Side {
  std::optional<oplang::Outcome> outcome;
  std::string escaped;
};

template <typename Runner>
Side run_step(Runner& runner, const oplang::Op& op) {
  try {
    return {runner.step(op), {}};
  } catch (const std::exception& e) {
    return {std::nullopt, std::string("exception escaped: ") + e.what()};
  } catch (...) {
    return {std::nullopt, "exception escaped (not a std::exception)"};
  }
}

std::string show(const Side& side) {
  return side.outcome ? indent(oplang::print(*side.outcome)) : side.escaped;
}

}  // namespace

int main(int argc, char** argv) {
  bool diff_only = false;
  bool durable = false;
  std::optional<std::string> path;
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!options_done && (arg == "-h" || arg == "--help")) {
      std::cout << kUsage;
      return kSame;
    }
    if (!options_done && arg == "--diff") {
      diff_only = true;
    } else if (!options_done && arg == "--durable") {
      durable = true;
    } else if (!options_done && arg == "--") {
      options_done = true;
    } else if (!options_done && arg.size() > 1 && arg[0] == '-') {
      return usage_error("unknown option '" + arg + "'");
    } else if (path) {
      return usage_error("one SCRIPT only, got '" + *path + "' and '" + arg + "'");
    } else {
      path = arg;
    }
  }
  if (!path) return usage_error("missing SCRIPT (a file, or - for standard input)");

  const std::string name = *path == "-" ? "<stdin>" : *path;
  const std::optional<std::string> text = oplang::read_source(*path, std::cerr);
  if (!text) return kBadInput;
  oplang::Script script;
  try {
    script = oplang::parse(*text);
  } catch (const oplang::ParseError& e) {
    std::cerr << name << ":" << e.what() << "\n";
    return kBadInput;
  }

  oplang::ModelRunner model;
  std::unique_ptr<harness::BrokerRunner> runner =
      durable ? std::make_unique<harness::BrokerRunner>(harness::DurableSetup{})
              : harness::runner_for(script);  // durable too if the script restarts
  harness::BrokerRunner& broker = *runner;
  std::size_t differing = 0;
  std::size_t first = 0;
  std::size_t ran = 0;
  for (std::size_t i = 0; i < script.size(); ++i) {
    const Side m = run_step(model, script[i]);
    const Side b = run_step(broker, script[i]);
    ++ran;
    const bool same = m.outcome && b.outcome && *m.outcome == *b.outcome;
    if (!diff_only) {
      std::cout << "[" << i + 1 << "] " << oplang::print(script[i]) << "\n";
      if (same) {
        std::cout << "    " << show(m) << "\n";
        continue;
      }
      std::cout << "*** FIRST DIFFERENCE at step " << i + 1 << "\n"
                << "    model:  " << show(m) << "\n"
                << "    broker: " << show(b) << "\n";
      return kDifferent;
    }
    if (same) continue;
    if (differing++ == 0) first = i + 1;
    std::cout << "[" << i + 1 << "] " << oplang::print(script[i]) << "\n"
              << "    model:  " << show(m) << "\n"
              << "    broker: " << show(b) << "\n";
    // A side whose step threw is in an unknown state: comparing further steps means nothing.
    if (!m.outcome || !b.outcome) break;
  }
  if (differing == 0) {
    std::cout << "identical: " << script.size() << " steps\n";
    return kSame;
  }
  std::cout << "different: " << differing << " of " << ran << " steps (first at step " << first
            << ")";
  if (ran < script.size()) std::cout << "; stopped after step " << ran << " of " << script.size();
  std::cout << "\n";
  return kDifferent;
}
