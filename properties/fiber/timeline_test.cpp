// A concurrent run as a timeline page (fiber-replay --html): a row per fiber, a bar per
// call in logical ticks, nothing red in a run that passes.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fiberprop
