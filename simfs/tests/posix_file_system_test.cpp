// The POSIX file system against a real temporary directory: round trips, typed errors,
// flock exclusion (in this process and from a child), and whole appends under threads.
#include <gtest/gtest.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "broker/errors.h"
#include "broker/file_system.h"

namespace broker {
namespace {

// A fresh directory under /tmp, removed with everything in it on every way out of a test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/simfs_test.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;  // a destructor must not throw; a leftover is harmless
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class PosixFileSystemTest : public testing::Test {
 protected:
  // Files go through fs_->remove first: the shared file system caches append descriptors
  // by path, and a later mkdtemp could hand out the same directory name again.
  void TearDown() override {
    std::vector<std::string> files;
    std::error_code ignored;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path(), ignored)) {
      if (entry.is_regular_file(ignored)) files.push_back(entry.path().string());
    }
    for (const auto& file : files) fs_->remove(file);
  }

  std::shared_ptr<FileSystem> fs_ = posix_file_system();
  TempDir dir_;
};

TEST_F(PosixFileSystemTest, AppendedBytesReadBackInOrder) {
  const std::string f = dir_ / "log";
  fs_->append(f, "hello ");
  fs_->append(f, "world");
  EXPECT_EQ(fs_->size(f), 11u);
  EXPECT_EQ(fs_->read(f, 0, 11), "hello world");
  EXPECT_EQ(fs_->read(f, 6, 100), "world");  // fewer at the end
  EXPECT_EQ(fs_->read(f, 11, 5), "");
  EXPECT_EQ(fs_->read(f, 50, 5), "");
}

// A mapped file: extended by zeros, a store is read at once through read(), the mapping
// follows the file across extensions far past the first (it moves), and a reopen maps
// what is there.
TEST_F(PosixFileSystemTest, AMappedFileReadsItsStoresAtOnceAndGrows) {
  const std::string f = dir_ / "seg";
  {
    auto file = fs_->map(f);
    EXPECT_EQ(file->size(), 0u);
    file->extend(100);
    EXPECT_EQ(fs_->read(f, 0, 200), std::string(100, '\0'));
    file->store(10, "abc");
    EXPECT_EQ(fs_->read(f, 9, 5), std::string("\0abc\0", 5));
    file->extend(50);  // never shrinks
    EXPECT_EQ(file->size(), 100u);
    for (std::uint64_t size = 1u << 12; size <= (1u << 22); size <<= 1) {
      file->extend(size);
      file->store(size - 3, "end");
    }
    file->sync();
    EXPECT_EQ(fs_->read(f, 10, 3), "abc");
    EXPECT_EQ(fs_->read(f, (1u << 22) - 3, 3), "end");
    file->truncate(13);
    EXPECT_EQ(fs_->size(f), 13u);
  }
  auto again = fs_->map(f);
  EXPECT_EQ(again->size(), 13u);
  again->extend(20);
  again->store(13, "xyz");
  EXPECT_EQ(fs_->read(f, 10, 10), std::string("abcxyz\0\0\0\0", 10));
}

TEST_F(PosixFileSystemTest, ListGivesSortedNamesWithoutDots) {
  fs_->create_directories(dir_ / "d/sub/deeper");
  fs_->append(dir_ / "d/b", "x");
  fs_->append(dir_ / "d/a", "x");
  EXPECT_EQ(fs_->list(dir_ / "d"), (std::vector<std::string>{"a", "b", "sub"}));
  EXPECT_EQ(fs_->list(dir_ / "missing"), std::vector<std::string>{});
}

TEST_F(PosixFileSystemTest, CreateDirectoriesIsIdempotentAndRefusesAFileInTheWay) {
  fs_->create_directories(dir_ / "x/y");
  fs_->create_directories(dir_ / "x/y");
  EXPECT_TRUE(fs_->exists(dir_ / "x/y"));
  fs_->append(dir_ / "f", "x");
  EXPECT_THROW(fs_->create_directories(dir_ / "f/g"), IoError);
}

TEST_F(PosixFileSystemTest, ExistsSeesFilesAndDirectoriesOnly) {
  EXPECT_TRUE(fs_->exists(dir_.path()));
  EXPECT_FALSE(fs_->exists(dir_ / "f"));
  fs_->append(dir_ / "f", "");
  EXPECT_TRUE(fs_->exists(dir_ / "f"));
  EXPECT_FALSE(fs_->exists(dir_ / "f/under-a-file"));
}

TEST_F(PosixFileSystemTest, RenameReplacesTargetAndLaterAppendsFollowTheName) {
  const std::string a = dir_ / "a";
  const std::string b = dir_ / "b";
  fs_->append(a, "new");
  fs_->append(b, "old");
  fs_->rename(a, b);
  EXPECT_FALSE(fs_->exists(a));
  EXPECT_EQ(fs_->read(b, 0, 100), "new");
  // A cached descriptor of the old `b` (or of `a`) would send these bytes astray.
  fs_->append(b, "+");
  fs_->append(a, "fresh");
  EXPECT_EQ(fs_->read(b, 0, 100), "new+");
  EXPECT_EQ(fs_->read(a, 0, 100), "fresh");
  EXPECT_THROW(fs_->rename(dir_ / "missing", b), IoError);
}

TEST_F(PosixFileSystemTest, RemoveDeletesAndIgnoresMissing) {
  const std::string f = dir_ / "f";
  fs_->append(f, "abc");
  fs_->remove(f);
  EXPECT_FALSE(fs_->exists(f));
  EXPECT_NO_THROW(fs_->remove(f));
  fs_->append(f, "z");  // a new file, not the unlinked one behind a cached descriptor
  EXPECT_EQ(fs_->read(f, 0, 10), "z");
}

TEST_F(PosixFileSystemTest, TruncateCutsAndAppendsContinueAtTheNewEnd) {
  const std::string f = dir_ / "f";
  fs_->append(f, "abcdef");
  fs_->truncate(f, 2);
  EXPECT_EQ(fs_->size(f), 2u);
  fs_->append(f, "Z");
  EXPECT_EQ(fs_->read(f, 0, 10), "abZ");
  EXPECT_THROW(fs_->truncate(f, 10), IoError);  // only cuts
  EXPECT_EQ(fs_->size(f), 3u);
}

TEST_F(PosixFileSystemTest, MissingFileThrowsIoErrorNamingIt) {
  const std::string f = dir_ / "nope";
  try {
    fs_->read(f, 0, 1);
    FAIL() << "read of a missing file returned";
  } catch (const IoError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIoError);
    EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fs_->size(f), IoError);
  EXPECT_THROW(fs_->sync(f), IoError);
  EXPECT_THROW(fs_->truncate(f, 0), IoError);
  EXPECT_THROW(fs_->append(dir_ / "no-dir/f", "x"), IoError);
  EXPECT_THROW(fs_->sync_dir(dir_ / "no-dir"), IoError);
}

TEST_F(PosixFileSystemTest, SyncAndSyncDirSucceed) {
  const std::string f = dir_ / "f";
  fs_->append(f, "x");
  EXPECT_NO_THROW(fs_->sync(f));  // through the cached append descriptor
  fs_->rename(f, dir_ / "g");
  EXPECT_NO_THROW(fs_->sync(dir_ / "g"));  // through a descriptor opened for it
  EXPECT_NO_THROW(fs_->sync_dir(dir_.path()));
}

TEST_F(PosixFileSystemTest, TryLockExcludesASecondHolderUntilReleased) {
  const std::string f = dir_ / "LOCK";
  auto first = fs_->try_lock(f);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(fs_->exists(f));
  EXPECT_EQ(fs_->try_lock(f), nullptr);
  first.reset();
  EXPECT_NE(fs_->try_lock(f), nullptr);
}

// Exit codes of the child below.
constexpr int kChildGotLock = 10;
constexpr int kChildExcluded = 11;
constexpr int kChildError = 12;

// What a try_lock of path in a forked child returns (flock is per open file, so the lock
// the child inherits through fork is the parent's and does not help it).
int try_lock_in_child(const std::string& path) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int result = kChildError;
    try {
      result = posix_file_system()->try_lock(path) ? kChildGotLock : kChildExcluded;
    } catch (...) {
    }
    ::_exit(result);  // no atexit handlers or GoogleTest teardown in the child
  }
  if (pid < 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST_F(PosixFileSystemTest, TryLockExcludesAnotherProcess) {
  const std::string f = dir_ / "LOCK";
  auto held = fs_->try_lock(f);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(try_lock_in_child(f), kChildExcluded);
  held.reset();
  EXPECT_EQ(try_lock_in_child(f), kChildGotLock);
}

TEST_F(PosixFileSystemTest, ConcurrentAppendsKeepEachRecordWhole) {
  const std::string f = dir_ / "f";
  constexpr int kThreads = 4;
  constexpr int kRecords = 200;
  constexpr std::size_t kRecordSize = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRecords; ++i) fs_->append(f, std::string(kRecordSize, 'a' + t));
    });
  }
  for (auto& thread : threads) thread.join();
  const std::string all = fs_->read(f, 0, kThreads * kRecords * kRecordSize + 1);
  ASSERT_EQ(all.size(), kThreads * kRecords * kRecordSize);
  for (std::size_t at = 0; at < all.size(); at += kRecordSize) {
    ASSERT_EQ(all.substr(at, kRecordSize), std::string(kRecordSize, all[at])) << "at " << at;
  }
}

}  // namespace
}  // namespace broker
