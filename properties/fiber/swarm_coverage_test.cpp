// Evidence on swarm testing (generators.h) in the fiber properties: the same number of
// generated programs, run under random schedules, uniform and swarm, and the share of each
// that reaches the corners needing long runs of one kind (a pull message offered a third
// time, a dead letter, a push handler failing its last attempt, a back-off). Swarm must
// reach every corner, at least half as often as uniform (a corner that needs one kind is
// reached less often: the kind is in about half the subsets, which is why the properties
// run half their cases each way), and clearly more often (a fifth more, 3 standard errors
// apart) on the push dead letter. Measured 2026-12-05 with 2,000 cases each: push dead
// letter 24.1% uniform against 30.9% swarm, back-off 39.4% against 42.9%; on pull corners
// the two are level (dead letter 1.4% against 1.6%). Until that day swarm looked clearly
// better on more corners, but only because RapidCheck's inRange gave small masks, and one
// message per publisher, at small sizes (uniform.h).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fiber/schedule.h"
#include "generators.h"
#include "program_runner.h"

namespace fiberprop {
namespace {

using Corners = std::map<std::string, std::function<bool(const std::string& history)>>;

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

// A push handler call on attempt 3 (the last, max=3) that failed: a dead letter.
bool push_dead_letter(const std::string& history) {
  std::size_t at = 0;
  while ((at = history.find("#3 at t=", at)) != std::string::npos) {
    const std::size_t eol = history.find('\n', at);
    const std::string line = history.substr(at, eol - at);
    if (has(line, "-> false") || has(line, "-> throws")) return true;
    at = eol;
  }
  return false;
}

// Two failing handler calls in a row of one subscription: a back-off.
bool push_back_off(const std::string& history) {
  std::map<std::string, int> row;
  for (const std::string& line : lines_of(history)) {
    const std::size_t at = line.find(" handler ");
    if (at == std::string::npos) continue;
    const std::string before = line.substr(0, at);
    const std::string who = before.substr(before.find_last_of(' ') + 1);  // the subscription
    const bool failed = has(line, "-> false") || has(line, "-> throws");
    int& n = row[who];
    n = failed ? n + 1 : 0;
    if (n >= 2) return true;
  }
  return false;
}

// An expire called by a worker (not the final drain) that returned something: a deadline
// passed while a message was held (needs sleeps, then an expire).
bool worker_expired(const std::string& history) {
  std::size_t at = 0;
  while ((at = history.find("expire -> [t", at)) != std::string::npos) {
    const std::size_t bol = history.rfind('\n', at);
    const std::string head = history.substr(bol == std::string::npos ? 0 : bol, at - bol);
    if (!has(head, "(final)")) return true;
    ++at;
  }
  return false;
}

// The most messages one worker held at once: what its polls got, less its accepted acks and
// nacks (the final drain's member is left out).
int most_held(const std::string& history) {
  std::map<std::string, int> hand;
  int most = 0;
  for (const std::string& line : lines_of(history)) {
    if (has(line, "(final)")) continue;
    std::size_t w = line.find(" w");
    if (w == std::string::npos) continue;
    const std::string who = line.substr(w + 1, line.find(' ', w + 1) - w - 1);
    int& n = hand[who];
    if (has(line, " poll")) {
      const std::size_t arrow = line.find("-> [");
      if (arrow != std::string::npos)
        for (char ch : line.substr(arrow)) n += ch == '#';
    } else if ((has(line, " ack ") || has(line, " nack ")) && has(line, "-> true")) {
      --n;
    }
    most = std::max(most, n);
  }
  return most;
}

template <typename Make>
std::map<std::string, int> tally(const Corners& corners, int cases, Make make) {
  std::map<std::string, int> reached;
  for (int i = 1; i <= cases; ++i) {
    const oplang::Program program = make(static_cast<std::uint64_t>(i), i % 100);
    const ProgramRun run = run_program(program, fiber::Schedule::random(i));
    EXPECT_TRUE(run.ok()) << failure_report(run, program);
    for (const auto& [name, reaches] : corners) reached[name] += reaches(run.history) ? 1 : 0;
  }
  return reached;
}

void compare(const char* what, const Corners& corners, const std::map<std::string, int>& uniform,
             const std::map<std::string, int>& swarm, int cases, int min_better) {
  int better = 0;
  for (const auto& [name, _] : corners) {
    const int u = uniform.at(name), s = swarm.at(name);
    std::printf("%s: %-26s uniform %5.1f%%  swarm %5.1f%%\n", what, name.c_str(), 100.0 * u / cases,
                100.0 * s / cases);
    // Clearly: at least a fifth more, and above by 3 standard errors of the difference of
    // the two shares (a fixed margin of a quarter plus 2 flipped on 3 cases in 2,000 when
    // a change moved the schedules: back-off 37.0% against 46.2%, 6 standard errors apart).
    const double pu = static_cast<double>(u) / cases, ps = static_cast<double>(s) / cases;
    const double se = std::sqrt((pu * (1 - pu) + ps * (1 - ps)) / cases);
    if (s * 5 >= u * 6 && ps - pu > 3 * se) ++better;
    // A corner that needs one kind is reached in fewer swarm cases (the kind is in about
    // half the subsets); it must still be reached, at least half as often.
    EXPECT_GT(s, 0) << name << ": swarm cases never reach it";
    EXPECT_GE(s * 2, u) << name << ": swarm cases reach it under half as often as uniform";
  }
  EXPECT_GE(better, min_better) << what << ": swarm should reach " << min_better
                                << " corners clearly more often";
}

constexpr int kCases = 2000;

// Runs kCases programs from `gen(swarm)` both ways (same seeds and sizes) and compares.
template <typename GenOf>
void uniform_against_swarm(const char* what, const Corners& corners, GenOf gen, int min_better) {
  auto make = [&](bool swarm) {
    return [&, swarm](std::uint64_t seed, int size) {
      return gen(swarm)(rc::Random(seed), size).value().program();
    };
  };
  const auto uniform = tally(corners, kCases, make(false));
  const auto swarm = tally(corners, kCases, make(true));
  compare(what, corners, uniform, swarm, kCases, min_better);
}

TEST(FiberSwarm, PullSwarmCasesReachEveryLongRunCornerAtLeastHalfAsOften) {
  const Corners corners = {
      {"third offer of a message", [](const std::string& h) { return has(h, "#3@"); }},
      {"dead letter", [](const std::string& h) { return has(h, "+dead"); }},
      {"a worker's expire took a message back", worker_expired},
      {"a worker held 4 messages at once", [](const std::string& h) { return most_held(h) >= 4; }},
      {"poll_wait that waited", [](const std::string& h) { return has(h, "timeout=20 -> []"); }}};
  uniform_against_swarm("pull", corners, gen_pull_script, 0);
}

TEST(FiberSwarm, PushSwarmCasesReachLongRunCornersMoreOften) {
  const Corners corners = {{"dead letter (3rd attempt failed)", push_dead_letter},
                           {"back-off (2 failures in a row)", push_back_off},
                           {"handler unsubscribed itself",
                            [](const std::string& h) { return has(h, ": unsubscribe"); }}};
  uniform_against_swarm("push", corners, gen_push_script, 1);
}

}  // namespace
}  // namespace fiberprop
