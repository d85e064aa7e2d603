// The picture of a violation: one row per worker, one bar per call, the violating call
// highlighted; and the page renders in a real browser (headless Chromium, Debian's
// `chromium`), checked from the DOM it builds.
#include "conformance/timeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>

#include "lying_target.h"
#include "oplang/text.h"

namespace conformance {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// A shrunk violation of the lying engine and its timed run.
std::vector<TimedStep> violation_steps() {
  const std::optional<LyingViolation> found = find_lying_violation();
  if (!found) return {};
  LyingTarget timed;
  return timed_run(timed, found->small, strict_profile());
}

TEST(Timeline, HasARowPerWorkerABarPerCallAndMarksTheFirstWrongCall) {
  const std::vector<TimedStep> steps = violation_steps();
  ASSERT_FALSE(steps.empty());
  std::size_t anomalies = 0;
  for (const TimedStep& s : steps) anomalies += s.anomaly ? 1 : 0;
  ASSERT_EQ(anomalies, 1u);
  const std::string html = timeline_html("lying engine", steps);
  EXPECT_EQ(count(html, "<rect class=\"bar"), steps.size());
  EXPECT_EQ(count(html, "id=\"anomaly\""), 1u);
  EXPECT_EQ(count(html, "data-row=\"client\""), 1u);
  for (const TimedStep& s : steps) {
    EXPECT_NE(html.find("data-row=\"" + s.row + "\""), std::string::npos) << s.row;
  }
  EXPECT_EQ(html.find("<script"), std::string::npos) << "self-contained and static";
}

/// Runs command, returns its standard output (empty if it could not run).
std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;)
    out.append(buf.data(), n);
  ::pclose(pipe);
  return out;
}

TEST(Timeline, RendersInHeadlessChromiumWithItsRowsAndTheHighlightedCall) {
  const char* browser = std::getenv("CHROMIUM_BIN");
  const std::string chromium = browser != nullptr ? browser : "chromium";
  ASSERT_FALSE(run("command -v " + chromium).empty())
      << chromium << " not found: apt-get install -y chromium (scripts/test installs it)";
  const std::vector<TimedStep> steps = violation_steps();
  ASSERT_FALSE(steps.empty());
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("timeline-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path page = dir / "violation.html";
  std::ofstream(page) << timeline_html("lying engine", steps);
  // Root needs --no-sandbox; a profile directory of its own keeps runs apart. The DOM is
  // what the browser built from the page, not the file's text.
  const std::string dom =
      run("timeout 60 " + chromium + " --headless --no-sandbox --disable-gpu --user-data-dir=" +
          (dir / "profile").string() + " --dump-dom file://" + page.string() + " 2>/dev/null");
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(dom.empty()) << "chromium printed no DOM";
  std::set<std::string> rows;
  for (const TimedStep& s : steps) rows.insert(s.row);
  EXPECT_EQ(count(dom, "class=\"row\""), rows.size()) << dom.substr(0, 2000);
  EXPECT_EQ(count(dom, "id=\"anomaly\""), 1u);
  EXPECT_EQ(count(dom, "<rect "), steps.size());
  EXPECT_NE(dom.find("<tr class=\"anomaly\">"), std::string::npos);
}

}  // namespace
}  // namespace conformance
