// The simulated disk: what survives crash() (bytes and directory entries), numbered crash
// points, injected errors, bit rot, locks, and whole appends under threads.
#include "simfs/sim_file_system.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "broker/errors.h"

namespace broker::sim {
namespace {

using CrashOptions = SimFileSystem::CrashOptions;

std::string content(SimFileSystem& fs, const std::string& path) {
  return fs.read(path, 0, fs.size(path));
}

// A file in /d whose bytes and entry are durable.
void write_durable(SimFileSystem& fs, const std::string& path, const std::string& bytes) {
  fs.append(path, bytes);
  fs.sync(path);
  fs.sync_dir("/d");
}

class SimFileSystemTest : public testing::Test {
 protected:
  SimFileSystemTest() { fs_.create_directories("/d"); }
  SimFileSystem fs_;
};

TEST_F(SimFileSystemTest, UnsyncedAppendsVanishWithoutTornTail) {
  write_durable(fs_, "/d/f", "durable");
  fs_.append("/d/f", " and not");
  EXPECT_EQ(content(fs_, "/d/f"), "durable and not");  // reads see it at once
  fs_.crash({.seed = 1, .torn_tail = false});
  EXPECT_EQ(content(fs_, "/d/f"), "durable");
}

TEST_F(SimFileSystemTest, SyncedBytesSurviveEveryCrash) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    SimFileSystem fs;
    fs.create_directories("/d");
    write_durable(fs, "/d/f", "synced bytes");
    fs.append("/d/f", "unsynced");
    fs.crash({.seed = seed});
    const std::string got = content(fs, "/d/f");
    ASSERT_EQ(got.substr(0, 12), "synced bytes") << "seed " << seed;
    // And a second crash changes nothing: after a reboot everything is durable.
    fs.crash({.seed = seed + 1000});
    ASSERT_EQ(content(fs, "/d/f"), got) << "seed " << seed;
  }
}

TEST_F(SimFileSystemTest, TornTailKeepsAPrefixOfTheUnsyncedBytes) {
  const std::string synced = "SSSSSSSSSS";
  const std::string unsynced = "0123456789abcdef";
  int full = 0, empty = 0, partial = 0, garbage = 0;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    SimFileSystem fs;
    fs.create_directories("/d");
    write_durable(fs, "/d/f", synced);
    fs.append("/d/f", unsynced);
    fs.crash({.seed = seed});
    const std::string got = content(fs, "/d/f");
    ASSERT_GE(got.size(), synced.size()) << "seed " << seed;
    ASSERT_EQ(got.substr(0, synced.size()), synced) << "seed " << seed;
    const std::string tail = got.substr(synced.size());
    ASSERT_LE(tail.size(), unsynced.size()) << "seed " << seed;
    if (tail.empty()) {
      ++empty;
      continue;
    }
    // Every byte but the last is the written one; the last may be garbage.
    const std::size_t n = tail.size();
    ASSERT_EQ(tail.substr(0, n - 1), unsynced.substr(0, n - 1)) << "seed " << seed;
    if (tail[n - 1] != unsynced[n - 1]) {
      ++garbage;
    } else if (n == unsynced.size()) {
      ++full;
    } else {
      ++partial;
    }
  }
  EXPECT_GT(full, 0);
  EXPECT_GT(empty, 0);
  EXPECT_GT(partial, 0);
  EXPECT_GT(garbage, 0);
}

TEST_F(SimFileSystemTest, TornTailWithoutGarbageIsAnExactPrefix) {
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    SimFileSystem fs;
    fs.create_directories("/d");
    write_durable(fs, "/d/f", "S");
    fs.append("/d/f", "0123456789");
    fs.crash({.seed = seed, .garbage_tail = false});
    const std::string got = content(fs, "/d/f");
    ASSERT_EQ(got, std::string("S0123456789").substr(0, got.size())) << "seed " << seed;
  }
}

TEST_F(SimFileSystemTest, TheSameSeedGivesTheSameDisk) {
  auto run = [](std::uint64_t seed) {
    SimFileSystem fs;
    fs.create_directories("/d");
    for (int i = 0; i < 5; ++i) {
      const std::string path = "/d/f" + std::to_string(i);
      write_durable(fs, path, "base");
      fs.append(path, "some unsynced bytes of file " + std::to_string(i));
    }
    fs.crash({.seed = seed});
    return fs.describe();
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));  // five files torn at random: equal only by a fluke
}

TEST_F(SimFileSystemTest, CreatedFileWithoutSyncDirVanishes) {
  fs_.append("/d/f", "bytes");
  fs_.sync("/d/f");  // the bytes are durable, the name is not
  fs_.crash({});
  EXPECT_FALSE(fs_.exists("/d/f"));
  EXPECT_EQ(fs_.list("/d"), std::vector<std::string>{});
}

TEST_F(SimFileSystemTest, CreatedFileSurvivesAfterSyncDir) {
  fs_.append("/d/f", "bytes");
  fs_.sync("/d/f");
  fs_.sync_dir("/d");
  fs_.crash({});
  EXPECT_EQ(content(fs_, "/d/f"), "bytes");
}

TEST_F(SimFileSystemTest, KeepingUnsyncedEntriesKeepsCreatedFiles) {
  fs_.append("/d/f", "bytes");
  fs_.crash({.torn_tail = false, .lose_unsynced_entries = false});
  ASSERT_TRUE(fs_.exists("/d/f"));
  EXPECT_EQ(content(fs_, "/d/f"), "");  // the name kept, the unsynced bytes not
}

TEST_F(SimFileSystemTest, RenameWithoutSyncDirReverts) {
  write_durable(fs_, "/d/current", "old");
  write_durable(fs_, "/d/next", "new");
  fs_.rename("/d/next", "/d/current");
  EXPECT_EQ(content(fs_, "/d/current"), "new");
  EXPECT_FALSE(fs_.exists("/d/next"));
  fs_.crash({});
  EXPECT_EQ(content(fs_, "/d/current"), "old");
  EXPECT_EQ(content(fs_, "/d/next"), "new");
}

TEST_F(SimFileSystemTest, RenameWithSyncDirSticks) {
  write_durable(fs_, "/d/current", "old");
  write_durable(fs_, "/d/next", "new");
  fs_.rename("/d/next", "/d/current");
  fs_.sync_dir("/d");
  fs_.crash({});
  EXPECT_EQ(content(fs_, "/d/current"), "new");
  EXPECT_FALSE(fs_.exists("/d/next"));
}

TEST_F(SimFileSystemTest, SyncDirMakesOnlyThatDirectoryDurable) {
  fs_.create_directories("/e");
  fs_.append("/d/f", "x");
  fs_.append("/e/g", "y");
  fs_.sync_dir("/e");
  fs_.crash({});
  EXPECT_FALSE(fs_.exists("/d/f"));
  EXPECT_TRUE(fs_.exists("/e/g"));
}

TEST_F(SimFileSystemTest, RemoveWithoutSyncDirReverts) {
  write_durable(fs_, "/d/f", "bytes");
  fs_.remove("/d/f");
  EXPECT_FALSE(fs_.exists("/d/f"));
  fs_.crash({});
  EXPECT_EQ(content(fs_, "/d/f"), "bytes");
  fs_.remove("/d/f");
  fs_.sync_dir("/d");
  fs_.crash({});
  EXPECT_FALSE(fs_.exists("/d/f"));
}

TEST_F(SimFileSystemTest, TruncateBelowTheSyncedLengthLowersIt) {
  write_durable(fs_, "/d/f", "abcdef");
  fs_.truncate("/d/f", 2);
  fs_.append("/d/f", "XY");
  fs_.crash({.torn_tail = false});
  EXPECT_EQ(content(fs_, "/d/f"), "ab");
}

TEST_F(SimFileSystemTest, EveryMutatingCallIsOneCrashPoint) {
  EXPECT_EQ(fs_.points(), 0u);
  fs_.append("/d/f", "abc");
  fs_.sync("/d/f");
  fs_.sync_dir("/d");
  fs_.rename("/d/f", "/d/g");
  fs_.truncate("/d/g", 1);
  fs_.remove("/d/g");
  EXPECT_EQ(fs_.points(), 6u);
  EXPECT_THROW(fs_.size("/d/g"), IoError);  // reads and controls pass no point
  fs_.create_directories("/e");
  fs_.list("/d");
  fs_.exists("/d");
  EXPECT_EQ(fs_.points(), 6u);
  EXPECT_THROW(fs_.sync("/d/missing"), IoError);  // a call that throws still counts
  EXPECT_EQ(fs_.points(), 7u);
}

TEST_F(SimFileSystemTest, CrashAtStopsAtExactlyThatPoint) {
  write_durable(fs_, "/d/f", "a");  // points 0, 1, 2
  fs_.crash_at(4);
  fs_.append("/d/f", "b");  // 3
  EXPECT_FALSE(fs_.crashed());
  EXPECT_EQ(fs_.points(), 4u);
  fs_.append("/d/f", "c");  // 4: dies, the bytes reach the page cache only
  EXPECT_TRUE(fs_.crashed());
  EXPECT_EQ(fs_.points(), 5u);
  fs_.append("/d/f", "d");  // dead: not applied, no point
  fs_.sync("/d/f");
  EXPECT_EQ(fs_.points(), 5u);
  EXPECT_EQ(content(fs_, "/d/f"), "abc");
  fs_.crash({.torn_tail = false});
  EXPECT_FALSE(fs_.crashed());
  EXPECT_EQ(content(fs_, "/d/f"), "a");
  fs_.append("/d/f", "e");  // alive again; counting goes on
  EXPECT_EQ(fs_.points(), 6u);
  EXPECT_EQ(content(fs_, "/d/f"), "ae");
}

TEST_F(SimFileSystemTest, CrashAtAnAppendMayKeepAllOrNoneOfIt) {
  bool kept_all = false, kept_none = false;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    SimFileSystem fs;
    fs.create_directories("/d");
    write_durable(fs, "/d/f", "base");
    fs.crash_at(fs.points());
    fs.append("/d/f", "tail");
    ASSERT_TRUE(fs.crashed());
    fs.crash({.seed = seed, .garbage_tail = false});
    const std::string got = content(fs, "/d/f");
    ASSERT_EQ(got, std::string("basetail").substr(0, got.size())) << "seed " << seed;
    ASSERT_GE(got.size(), 4u) << "seed " << seed;
    kept_all |= got == "basetail";
    kept_none |= got == "base";
  }
  EXPECT_TRUE(kept_all);
  EXPECT_TRUE(kept_none);
}

TEST_F(SimFileSystemTest, CrashAtAnotherCallDoesNotPerformIt) {
  write_durable(fs_, "/d/f", "a");
  fs_.append("/d/f", "b");
  fs_.crash_at(fs_.points());
  fs_.sync("/d/f");  // dies instead of syncing
  EXPECT_TRUE(fs_.crashed());
  fs_.crash({.torn_tail = false});
  EXPECT_EQ(content(fs_, "/d/f"), "a");

  fs_.crash_at(fs_.points());
  fs_.rename("/d/f", "/d/g");
  EXPECT_TRUE(fs_.crashed());
  EXPECT_TRUE(fs_.exists("/d/f"));
  EXPECT_FALSE(fs_.exists("/d/g"));
}

TEST_F(SimFileSystemTest, DeadProcessCallsDoNothingAndNeverThrow) {
  write_durable(fs_, "/d/f", "abc");
  fs_.crash_at(fs_.points());
  fs_.remove("/d/f");
  ASSERT_TRUE(fs_.crashed());
  EXPECT_NO_THROW(fs_.rename("/d/missing", "/d/g"));
  EXPECT_NO_THROW(fs_.truncate("/d/f", 100));
  EXPECT_NO_THROW(fs_.sync_dir("/no/such/dir"));
  EXPECT_NO_THROW(fs_.append("/no/such/dir/f", "x"));
  fs_.create_directories("/e");
  fs_.truncate("/d/f", 1);
  EXPECT_EQ(content(fs_, "/d/f"), "abc");
  EXPECT_FALSE(fs_.exists("/e"));
}

// die(): the process dies between two calls, so even the next append leaves nothing, torn
// or whole, whatever a cut keeps of unsynced bytes.
TEST_F(SimFileSystemTest, AProcessThatDiedBetweenCallsWritesNothingMore) {
  write_durable(fs_, "/d/f", "abc");
  fs_.append("/d/f", "de");
  fs_.die();
  ASSERT_TRUE(fs_.crashed());
  fs_.append("/d/f", "xyz");
  fs_.sync("/d/f");
  EXPECT_EQ(content(fs_, "/d/f"), "abcde");
  SimFileSystem::CrashOptions keep_all;
  keep_all.torn_tail = false;
  fs_.crash(keep_all);
  EXPECT_FALSE(fs_.crashed());
  EXPECT_EQ(content(fs_, "/d/f"), "abc");
}

TEST_F(SimFileSystemTest, ArmingAPassedPointIsRefused) {
  fs_.append("/d/f", "a");
  EXPECT_THROW(fs_.crash_at(0), std::invalid_argument);
  EXPECT_THROW(fs_.fail_at(0, "No space left on device"), std::invalid_argument);
  EXPECT_NO_THROW(fs_.crash_at(1));
}

TEST_F(SimFileSystemTest, FailAtThrowsIoErrorAndChangesNothing) {
  fs_.append("/d/f", "a");
  fs_.fail_at(1, "No space left on device");
  try {
    fs_.append("/d/f", "b");
    FAIL() << "the armed failure did not fire";
  } catch (const IoError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIoError);
    EXPECT_EQ(std::string(e.what()), "append /d/f: No space left on device");
  }
  EXPECT_EQ(content(fs_, "/d/f"), "a");
  EXPECT_EQ(fs_.points(), 2u);
  fs_.append("/d/f", "c");  // fires once
  EXPECT_EQ(content(fs_, "/d/f"), "ac");

  fs_.fail_at(fs_.points(), "Input/output error");
  EXPECT_THROW(fs_.rename("/d/f", "/d/g"), IoError);
  EXPECT_TRUE(fs_.exists("/d/f"));
  EXPECT_FALSE(fs_.exists("/d/g"));
  EXPECT_FALSE(fs_.crashed());
}

TEST_F(SimFileSystemTest, FailNextCountsOnlyCallsOfItsKind) {
  fs_.fail_next(SimFileSystem::Call::kSync, 2, std::errc::io_error);
  fs_.append("/d/f", "a");  // an open: not a sync
  fs_.sync("/d/f");         // the first sync
  fs_.append("/d/f", "b");  // an append: not a sync
  EXPECT_EQ(fs_.failures_fired(), 0u);
  try {
    fs_.sync("/d/f");
    FAIL() << "the second sync did not fail";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "sync /d/f: Input/output error");
  }
  EXPECT_EQ(fs_.failures_fired(), 1u);
  fs_.sync("/d/f");  // fires once
  EXPECT_THROW(fs_.fail_next(SimFileSystem::Call::kSync, 0, std::errc::io_error),
               std::invalid_argument);
}

TEST_F(SimFileSystemTest, EveryKindOfCallCanFail) {
  using Call = SimFileSystem::Call;
  write_durable(fs_, "/d/f", "abc");
  const auto fails = [&](Call call, auto&& run) {
    fs_.fail_next(call, 1, std::errc::io_error);
    EXPECT_THROW(run(), IoError);
  };
  fails(Call::kOpen, [&] { fs_.append("/d/new", "x"); });
  EXPECT_FALSE(fs_.exists("/d/new"));
  fails(Call::kAppend, [&] { fs_.append("/d/f", "x"); });
  fails(Call::kSyncDir, [&] { fs_.sync_dir("/d"); });
  fails(Call::kRename, [&] { fs_.rename("/d/f", "/d/g"); });
  fails(Call::kRemove, [&] { fs_.remove("/d/f"); });
  fails(Call::kTruncate, [&] { fs_.truncate("/d/f", 1); });
  EXPECT_EQ(content(fs_, "/d/f"), "abc");  // none of them changed anything
  EXPECT_FALSE(fs_.exists("/d/g"));
  fs_.disarm_failures();
  fs_.fail_next(Call::kSync, 1, std::errc::io_error);
  fs_.disarm_failures();
  EXPECT_NO_THROW(fs_.sync("/d/f"));
}

// fsyncgate: Linux may mark the pages of a failed fdatasync clean, so their bytes are gone
// and a later sync reports success without them.
TEST_F(SimFileSystemTest, AFailedSyncDropsTheUnsyncedBytesUnlessTheKernelIsKind) {
  write_durable(fs_, "/d/f", "kept");
  fs_.append("/d/f", " lost");
  fs_.fail_next(SimFileSystem::Call::kSync, 1, std::errc::io_error);
  EXPECT_THROW(fs_.sync("/d/f"), IoError);
  EXPECT_EQ(content(fs_, "/d/f"), "kept");
  fs_.sync("/d/f");  // succeeds, and makes nothing more durable
  fs_.crash({.seed = 3});
  EXPECT_EQ(content(fs_, "/d/f"), "kept");

  fs_.set_failed_sync_keeps(true);
  fs_.append("/d/f", " again");
  fs_.fail_next(SimFileSystem::Call::kSync, 1, std::errc::io_error);
  EXPECT_THROW(fs_.sync("/d/f"), IoError);
  EXPECT_EQ(content(fs_, "/d/f"), "kept again");
  fs_.sync("/d/f");
  fs_.crash({.seed = 3});
  EXPECT_EQ(content(fs_, "/d/f"), "kept again");
}

TEST_F(SimFileSystemTest, AFullDiskWritesHalfAnAppendThenFails) {
  fs_.append("/d/f", "ab");
  fs_.fail_next(SimFileSystem::Call::kAppend, 1, std::errc::no_space_on_device);
  try {
    fs_.append("/d/f", "123456");
    FAIL() << "the append did not fail";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "append /d/f: No space left on device");
  }
  EXPECT_EQ(content(fs_, "/d/f"), "ab123");
  fs_.fail_next(SimFileSystem::Call::kAppend, 1, std::errc::io_error);
  EXPECT_THROW(fs_.append("/d/f", "789"), IoError);
  EXPECT_EQ(content(fs_, "/d/f"), "ab123");  // EIO writes nothing
}

TEST_F(SimFileSystemTest, DamageAtRestChangesWhatSurvivesToo) {
  write_durable(fs_, "/d/f", "abcdefgh");
  write_durable(fs_, "/d/g", "gone");
  fs_.zero_range("/d/f", 2, 3);
  EXPECT_EQ(content(fs_, "/d/f"), std::string("ab\0\0\0fgh", 8));
  fs_.zero_range("/d/f", 7, 100);  // clipped at the end
  fs_.cut("/d/f", 6);
  EXPECT_THROW(fs_.cut("/d/f", 7), IoError);
  fs_.lose("/d/g");
  EXPECT_THROW(fs_.lose("/d/g"), IoError);
  EXPECT_EQ(fs_.files(), std::vector<std::string>{"/d/f"});
  fs_.crash({.seed = 5});
  EXPECT_EQ(content(fs_, "/d/f"), std::string("ab\0\0\0f", 6));
  EXPECT_FALSE(fs_.exists("/d/g"));
}

TEST_F(SimFileSystemTest, FlipBitChangesExactlyOneBit) {
  const std::string before("\x00\x11\x22\x33\x44\x55\x66\x77", 8);
  write_durable(fs_, "/d/f", before);
  fs_.flip_bit("/d/f", 3, 5);
  const std::string after = content(fs_, "/d/f");
  ASSERT_EQ(after.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    const int diff = static_cast<unsigned char>(after[i] ^ before[i]);
    EXPECT_EQ(diff, i == 3 ? 0x20 : 0) << "byte " << i;
  }
  fs_.crash({});  // bit rot is on the disk, not in a cache
  EXPECT_EQ(content(fs_, "/d/f"), after);
}

TEST_F(SimFileSystemTest, FlipBitOutOfRangeThrowsIoError) {
  fs_.append("/d/f", "ab");
  EXPECT_THROW(fs_.flip_bit("/d/f", 2, 0), IoError);
  EXPECT_THROW(fs_.flip_bit("/d/f", 0, 8), IoError);
  EXPECT_THROW(fs_.flip_bit("/d/f", 0, -1), IoError);
  EXPECT_THROW(fs_.flip_bit("/d/missing", 0, 0), IoError);
  EXPECT_EQ(content(fs_, "/d/f"), "ab");
}

TEST_F(SimFileSystemTest, TryLockExcludesASecondHolderUntilReleased) {
  auto first = fs_.try_lock("/d/LOCK");
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(fs_.exists("/d/LOCK"));
  EXPECT_EQ(fs_.try_lock("/d/LOCK"), nullptr);
  EXPECT_NE(fs_.try_lock("/d/OTHER"), nullptr);
  first.reset();
  EXPECT_NE(fs_.try_lock("/d/LOCK"), nullptr);
}

TEST_F(SimFileSystemTest, CrashReleasesEveryLock) {
  auto dead = fs_.try_lock("/d/LOCK");
  ASSERT_NE(dead, nullptr);
  fs_.crash({});
  auto reborn = fs_.try_lock("/d/LOCK");
  ASSERT_NE(reborn, nullptr);
  dead.reset();  // the dead process's lock must not free the new holder's
  EXPECT_EQ(fs_.try_lock("/d/LOCK"), nullptr);
}

TEST_F(SimFileSystemTest, ALockMayOutliveTheFileSystem) {
  auto fs = std::make_unique<SimFileSystem>();
  auto lock = fs->try_lock("/LOCK");
  ASSERT_NE(lock, nullptr);
  fs.reset();
  lock.reset();  // must not touch freed memory (the sanitizer builds check)
}

TEST_F(SimFileSystemTest, MissingFilesBehaveAsOnPosix) {
  try {
    fs_.read("/d/missing", 0, 1);
    FAIL() << "read of a missing file returned";
  } catch (const IoError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIoError);
    EXPECT_EQ(std::string(e.what()), "read /d/missing: No such file or directory");
  }
  EXPECT_THROW(fs_.size("/d/missing"), IoError);
  EXPECT_NO_THROW(fs_.remove("/d/missing"));
  EXPECT_THROW(fs_.rename("/d/missing", "/d/g"), IoError);
  EXPECT_THROW(fs_.append("/nodir/f", "x"), IoError);
  EXPECT_THROW(fs_.sync_dir("/nodir"), IoError);
  fs_.append("/d/f", "ab");
  EXPECT_THROW(fs_.truncate("/d/f", 3), IoError);  // only cuts
  EXPECT_THROW(fs_.append("/d/f/g", "x"), IoError);
  EXPECT_THROW(fs_.create_directories("/d/f/g"), IoError);
  EXPECT_EQ(fs_.read("/d/f", 5, 1), "");
}

TEST_F(SimFileSystemTest, ListGivesSortedNamesOfFilesAndDirectories) {
  fs_.create_directories("/d/sub/deeper");
  fs_.append("/d/b", "x");
  fs_.append("/d//a", "x");  // paths are normalized
  fs_.append("/d/sub/inner", "x");
  EXPECT_EQ(fs_.list("/d/"), (std::vector<std::string>{"a", "b", "sub"}));
  EXPECT_EQ(fs_.list("/missing"), std::vector<std::string>{});
  EXPECT_TRUE(fs_.exists("/d/./a"));
  EXPECT_TRUE(fs_.exists("/d/sub"));
}

TEST_F(SimFileSystemTest, DescribeNamesEveryFileAndWhatACrashWouldDoToIt) {
  write_durable(fs_, "/d/kept", "abc");
  write_durable(fs_, "/d/gone", "y");
  fs_.remove("/d/gone");
  fs_.append("/d/kept", "de");
  fs_.append("/d/new", "x");
  EXPECT_EQ(fs_.describe(),
            "/d/gone size=1 synced=1 entry=removed, not durable\n"
            "/d/kept size=5 synced=3 entry=durable\n"
            "/d/new size=1 synced=0 entry=not durable\n");
}

TEST_F(SimFileSystemTest, ConcurrentAppendsKeepEveryRecordIntact) {
  constexpr int kThreads = 4;
  constexpr int kRecords = 500;
  constexpr std::size_t kSize = 64;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kRecords; ++i) {
        // A thread letter then a sequence number, padded with the letter.
        std::string record = std::string(1, static_cast<char>('a' + t)) + std::to_string(i);
        record.resize(kSize, static_cast<char>('a' + t));
        fs_.append("/d/f", record);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const std::string all = content(fs_, "/d/f");
  ASSERT_EQ(all.size(), kThreads * kRecords * kSize);
  std::vector<int> next(kThreads, 0);
  for (std::size_t at = 0; at < all.size(); at += kSize) {
    const int t = all[at] - 'a';
    ASSERT_TRUE(t >= 0 && t < kThreads) << "at " << at;
    std::string expected = std::string(1, all[at]) + std::to_string(next[t]++);
    expected.resize(kSize, all[at]);
    ASSERT_EQ(all.substr(at, kSize), expected) << "at " << at;
  }
  EXPECT_EQ(next, std::vector<int>(kThreads, kRecords));
}

}  // namespace
}  // namespace broker::sim
