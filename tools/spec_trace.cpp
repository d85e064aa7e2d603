// spec-trace [--diff] [--durable] SCRIPT|-: runs a text script on the model and on the broker,
// prints what each step returned and delivered, and marks the first difference. --diff prints only
// the steps that differ, then a summary line; --model-only prints the model's trace alone (the
// spec site's playground shows the same, oplang/trace.h). `spec-trace --help` for the usage.
// Exit status: 0 identical, 1 a difference, 2 bad usage or an unreadable/malformed script.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "harness/broker_runner.h"
#include "harness/model_states.h"
#include "oplang/model_runner.h"
#include "oplang/text.h"
#include "oplang/trace.h"

namespace {

constexpr int kSame = 0;
constexpr int kDifferent = 1;
constexpr int kBadInput = 2;

constexpr std::string_view kUsage = R"(usage: spec-trace [--diff] [--durable] SCRIPT
       spec-trace --model-only SCRIPT
       spec-trace --help

Runs a script of the operation language (one op per line, `#` comments; see
oplang/include/oplang/text.h and examples/*.script) on the reference model and on
the real broker side by side, and compares what every step returned and which
handler calls it made.

Arguments:
  SCRIPT      the script file; `-` reads it from standard input

Options:
  --diff      print only the steps where model and broker differ (every one,
              not just the first), then one summary line
  --durable   run the broker with storage on a simulated disk (FsyncPolicy always);
              implied when the script has a `restart` or `crash` step
  --model-only
              run the model alone and print its trace, each step as below, then
              `model: N steps` (what the spec site's playground shows)
  -h, --help  print this help and exit
  --          end of options (a SCRIPT named like an option follows)

Normal output: each step as `[N] op` followed by its outcome; at the first
difference both outcomes (model, broker) are printed and the run stops. The last
line is `identical: N steps` when nothing differed.

Exit status:
  0  model and broker agree on every step (--model-only: the model ran it)
  1  they differ (or the broker let a non-broker exception escape)
  2  bad usage, or the script cannot be read or does not parse

Examples:
  spec-trace examples/seed004_trace.script
  spec-trace --diff examples/seed004_trace.script
  printf 'create_topic t\npublish t m\n' | spec-trace -
)";

int usage_error(const std::string& message) {
  std::cerr << "spec-trace: " << message << " (try spec-trace --help)\n";
  return kBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  bool diff_only = false;
  bool durable = false;
  bool model_only = false;
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
    } else if (!options_done && arg == "--model-only") {
      model_only = true;
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
  if (model_only && (diff_only || durable)) {
    return usage_error("--model-only runs no broker: it takes neither --diff nor --durable");
  }

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

  if (model_only) {
    std::cout << oplang::model_trace(script);
    return kSame;
  }

  harness::ModelStates model;  // R33: a call that met a disk fault is undecided
  std::unique_ptr<harness::BrokerRunner> runner =
      durable ? std::make_unique<harness::BrokerRunner>(harness::DurableSetup{})
              : harness::runner_for(script);  // durable too if the script restarts
  harness::BrokerRunner& broker = *runner;
  std::size_t differing = 0;
  std::size_t first = 0;
  std::size_t ran = 0;
  for (std::size_t i = 0; i < script.size(); ++i) {
    const oplang::StepResult b = oplang::run_step(broker, script[i]);
    oplang::StepResult m;
    bool same = false;
    std::string why;  // a rule that refused the broker's outcome (R21's cuts)
    if (b.outcome) {
      try {
        const harness::ModelStates::Verdict v = model.step(script[i], *b.outcome);
        same = v.agrees;
        why = v.why;
        // An undecided call shows the broker's outcome: the model allows it (R33).
        m.outcome = v.undecided ? *b.outcome : v.expected;
      } catch (const std::exception& e) {
        m.escaped = std::string("exception escaped: ") + e.what();
      }
    } else {
      m = oplang::run_step(model.front(), script[i]);
    }
    ++ran;
    if (!diff_only) {
      std::cout << oplang::step_heading(i + 1, script[i]) << "\n";
      if (same) {
        std::cout << "    " << oplang::show(m) << "\n";
        continue;
      }
      std::cout << "*** FIRST DIFFERENCE at step " << i + 1 << "\n"
                << "    model:  " << oplang::show(m) << "\n"
                << "    broker: " << oplang::show(b) << "\n";
      if (!why.empty()) std::cout << "    why:    " << why << "\n";
      return kDifferent;
    }
    if (same) continue;
    if (differing++ == 0) first = i + 1;
    std::cout << oplang::step_heading(i + 1, script[i]) << "\n"
              << "    model:  " << oplang::show(m) << "\n"
              << "    broker: " << oplang::show(b) << "\n";
    if (!why.empty()) std::cout << "    why:    " << why << "\n";
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
