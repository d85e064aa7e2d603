// A concurrent run as a timeline page (fiber-replay --html): a row per fiber, a bar per
// call in logical ticks, nothing red in a run that passes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "conformance/timeline_page.h"
#include "oplang/text.h"
#include "program_runner.h"

namespace fiberprop {
namespace {

TEST(FiberTimeline, APassingRunHasARowPerFiberABarPerCallAndNoAnomaly) {
  std::ifstream in(std::string(PROJECT_SOURCE_DIR) +
                   "/examples/concurrent/seed004_three_workers.program");
  std::stringstream text;
  text << in.rdbuf();
  const ProgramRun run =
      run_programs(oplang::parse_programs(text.str()), fiber::Schedule::walk({}));
  ASSERT_TRUE(run.ok()) << run.failures;
  std::set<std::string> rows;
  std::size_t lines = 0;
  for (const conformance::TimedStep& s : run.timeline) {
    rows.insert(s.row);
    EXPECT_FALSE(s.anomaly) << s.call;
    EXPECT_LE(s.start_ms, s.end_ms) << s.call;
  }
  for (const char c : run.history) lines += c == '\n' ? 1 : 0;
  EXPECT_EQ(run.timeline.size(), lines) << "one bar per history line";
  for (const char* fiber : {"setup", "w1", "w2", "w3"}) EXPECT_TRUE(rows.count(fiber)) << fiber;
  const std::string html = conformance::timeline_html("seed 004", run.timeline);
  EXPECT_NE(html.find("data-row=\"w3\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"anomaly\""), std::string::npos);
}

// A failure report carries its picture: failure_report writes the page and names it.
TEST(FiberTimeline, AFailureReportNamesItsTimelinePage) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("fiber-timelines-" + std::to_string(::getpid()));
  ::setenv("FIBER_TIMELINE_DIR", dir.c_str(), 1);
  const oplang::Program program = oplang::parse_program(
      "broker sync\ncreate_topic t\nsubscribe_pull t p timeout=10 max=0 start=begin\n"
      "fiber w1\n  publish t m0\n  poll t p w1\n");
  ProgramRun run = run_program(program, fiber::Schedule::walk({}));
  ASSERT_TRUE(run.ok()) << run.failures;
  ASSERT_FALSE(run.timeline.empty());
  // As a checker would report it (the broker is right; the report is what is tested).
  run.failures = "lost: offset 0 was never confirmed\n";
  run.timeline.back().anomaly = true;
  const std::string report = failure_report(run, program);
  ::unsetenv("FIBER_TIMELINE_DIR");
  const std::size_t at = report.find("timeline: ");
  ASSERT_NE(at, std::string::npos) << report;
  const std::string page = report.substr(at + 10, report.find('\n', at) - at - 10);
  std::ifstream in(page);
  std::stringstream html;
  html << in.rdbuf();
  EXPECT_NE(html.str().find("id=\"anomaly\""), std::string::npos) << page;
  EXPECT_NE(html.str().find("lost: offset 0"), std::string::npos) << page;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fiberprop
