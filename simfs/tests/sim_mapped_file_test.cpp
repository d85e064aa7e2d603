// The simulated disk's mapped files (MappedFile): a store is read at once and survives
// a process's death; a power cut keeps what sync made durable and, of each 4 KiB page the
// stores since dirtied, the page as it was after some number of them (none, all, or any
// count between), never a mix of bytes no moment held.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "broker/errors.h"
#include "simfs/sim_file_system.h"

namespace broker::sim {
namespace {

constexpr std::uint64_t kPage = 4096;

std::string content(SimFileSystem& fs, const std::string& path) {
  return fs.read(path, 0, fs.size(path));
}

// One call on the mapped file, as generated.
struct Call {
  enum class Kind { kExtend, kStore, kSync };
  Kind kind = Kind::kStore;
  std::uint64_t at = 0;  // extend: bytes to add; store: position as a share of the size
  std::string bytes;     // store
};

// Stores anywhere in the file (page ends and spans included), with bytes that are often
// zeros; extends of a few pages; syncs now and then.
rc::Gen<Call> gen_call() {
  return rc::gen::oneOf(
      rc::gen::map(rc::gen::inRange<std::uint64_t>(1, 3 * kPage),
                   [](std::uint64_t n) {
                     return Call{Call::Kind::kExtend, n, {}};
                   }),
      rc::gen::map(rc::gen::pair(rc::gen::inRange<std::uint64_t>(0, 1u << 16),
                                 rc::gen::container<std::string>(rc::gen::oneOf(
                                     rc::gen::just('\0'), rc::gen::arbitrary<char>()))),
                   [](const auto& p) {
                     return Call{Call::Kind::kStore, p.first, p.second};
                   }),
      rc::gen::map(rc::gen::arbitrary<int>(), [](int) {
        return Call{Call::Kind::kSync, 0, {}};
      }));
}

// A process kill is no power cut: whatever was stored is there for the next reader.
TEST(SimMappedFile, AStoreIsReadAtOnceAndSurvivesAKill) {
  SimFileSystem fs;
  fs.create_directories("/d");
  auto file = fs.map("/d/f");
  file->extend(10);
  file->store(2, "abc");
  EXPECT_EQ(content(fs, "/d/f"), std::string("\0\0abc\0\0\0\0\0", 10));
  fs.die();
  file->store(0, "zz");  // a dead process's store reaches nothing
  EXPECT_EQ(content(fs, "/d/f"), std::string("\0\0abc\0\0\0\0\0", 10));
}

// A dead process's map of a file nobody made (its directory was never made either) returns
// normally, like every call of a dead process, and what it stores reaches nothing. The
// recovery fuzzer found a crash at the first point throwing here.
TEST(SimMappedFile, ADeadProcessMapsWhatItNeverMadeAndStoresNothing) {
  SimFileSystem fs;
  fs.die();
  auto file = fs.map("/never/made");
  file->extend(8);
  file->store(0, "x");
  file->sync();
  EXPECT_FALSE(fs.exists("/never/made"));
}

// A store past the end is the caller's bug (a real one would be SIGBUS): refused loudly.
TEST(SimMappedFile, AStorePastTheEndIsRefused) {
  SimFileSystem fs;
  fs.create_directories("/d");
  auto file = fs.map("/d/f");
  file->extend(4);
  EXPECT_THROW(file->store(2, "abc"), std::logic_error);
}

// A full disk refuses an extension whole; a store never fails, so it cannot be armed.
TEST(SimMappedFile, AFullDiskRefusesAnExtensionAndAStoreCannotFail) {
  SimFileSystem fs;
  fs.create_directories("/d");
  auto file = fs.map("/d/f");
  fs.fail_next(SimFileSystem::Call::kExtend, 1, std::errc::no_space_on_device);
  EXPECT_THROW(file->extend(100), IoError);
  EXPECT_EQ(file->size(), 0u);
  EXPECT_THROW(fs.fail_next(SimFileSystem::Call::kStore, 1, std::errc::io_error),
               std::invalid_argument);
}

// Every call is a crash point, and the point numbers count stores apart.
TEST(SimMappedFile, ExtendStoreSyncAndTruncateAreCrashPoints) {
  SimFileSystem fs;
  fs.create_directories("/d");
  auto file = fs.map("/d/f");  // creating it: one point
  const std::uint64_t before = fs.points();
  file->extend(8);
  file->store(0, "x");
  file->sync();
  file->truncate(4);
  EXPECT_EQ(fs.points() - before, 4u);
  EXPECT_EQ(fs.store_points(), 1u);
}

// The power-cut rule, over generated calls: everything synced survives; past the durable
// size nothing does (torn tails off); each page below it is its last synced version with
// some prefix of its later stores applied, in their order.
RC_GTEST_PROP(SimMappedFile, APowerCutKeepsEachDirtyPageAsItWasAfterSomeOfItsStores, ()) {
  const auto calls = *rc::gen::container<std::vector<Call>>(gen_call());
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  SimFileSystem fs;
  fs.create_directories("/d");
  auto file = fs.map("/d/f");
  fs.sync_dir("/d");
  std::string durable;                                        // the file as of the last sync
  std::vector<std::pair<std::uint64_t, std::string>> stores;  // since then, in order
  for (const Call& c : calls) {
    switch (c.kind) {
      case Call::Kind::kExtend:
        file->extend(file->size() + c.at);
        break;
      case Call::Kind::kStore: {
        if (file->size() == 0) break;
        const std::uint64_t at = c.at % file->size();
        const std::string bytes = c.bytes.substr(0, file->size() - at);
        file->store(at, bytes);
        stores.emplace_back(at, bytes);
        break;
      }
      case Call::Kind::kSync:
        file->sync();
        durable = content(fs, "/d/f");
        stores.clear();
    }
  }
  SimFileSystem::CrashOptions options;
  options.seed = seed;
  options.torn_tail = false;
  file.reset();
  fs.crash(options);
  const std::string after = content(fs, "/d/f");
  RC_ASSERT(after.size() == durable.size());
  for (std::uint64_t page = 0; page * kPage < after.size(); ++page) {
    const std::uint64_t lo = page * kPage;
    const std::uint64_t hi = std::min<std::uint64_t>(lo + kPage, after.size());
    // Replay the page's stores one by one from its synced version; the result must be
    // one of the versions met on the way.
    std::string version = durable.substr(lo, hi - lo);
    bool met = version == after.substr(lo, hi - lo);
    for (const auto& [at, bytes] : stores) {
      const std::uint64_t from = std::max(at, lo);
      const std::uint64_t to = std::min<std::uint64_t>(at + bytes.size(), hi);
      if (from >= to) continue;
      version.replace(from - lo, to - from, bytes.substr(from - at, to - from));
      met = met || version == after.substr(lo, hi - lo);
    }
    RC_ASSERT(met);
  }
}

// The seed decides which pages went back: over seeds, a page's versions between none and
// all of its stores all turn up (so the property above is not met by one version only).
TEST(SimMappedFile, OverSeedsEveryVersionOfADirtyPageTurnsUp) {
  std::map<std::string, int> seen;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    SimFileSystem fs;
    fs.create_directories("/d");
    auto file = fs.map("/d/f");
    fs.sync_dir("/d");
    file->extend(8);
    file->sync();
    for (int i = 0; i < 3; ++i) file->store(static_cast<std::uint64_t>(i), "x");
    SimFileSystem::CrashOptions options;
    options.seed = seed;
    file.reset();
    fs.crash(options);
    ++seen[content(fs, "/d/f").substr(0, 3)];
  }
  EXPECT_EQ(seen.size(), 4u);  // none, x, xx, xxx
  EXPECT_GT(seen[std::string(3, '\0')], 0);
  EXPECT_GT(seen["xxx"], 0);
}

// A failed sync marks the dirty pages clean: the stores are gone, to reads too (unless
// the kernel is kind), as for appended bytes.
TEST(SimMappedFile, AFailedSyncDropsTheStoresUnlessTheKernelIsKind) {
  for (const bool keeps : {false, true}) {
    SimFileSystem fs;
    fs.create_directories("/d");
    fs.set_failed_sync_keeps(keeps);
    auto file = fs.map("/d/f");
    file->extend(4);
    file->sync();
    file->store(0, "ab");
    fs.fail_next(SimFileSystem::Call::kSync, 1, std::errc::io_error);
    EXPECT_THROW(file->sync(), IoError);
    EXPECT_EQ(content(fs, "/d/f"), keeps ? std::string("ab\0\0", 4) : std::string(4, '\0'));
  }
}

}  // namespace
}  // namespace broker::sim
