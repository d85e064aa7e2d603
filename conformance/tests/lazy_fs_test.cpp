// The lazy file system: its unsynced writes against a model of a file and its disk copy,
// in memory and through a real FUSE mount; a power cut keeps exactly what was synced; the
// mount goes when its owner dies.
#include "conformance/lazy_fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "conformance/target.h"
#include "conformance/unsynced_writes.h"

namespace conformance {
namespace {

// The contract, as plainly as it can be said: a file as a reader sees it, and the file as
// the disk holds it. A write changes the first; a sync copies it to the second; a truncate
// reaches both; a power cut puts the disk's copy back.
struct FileModel {
  std::string seen, disk;
  void write(std::uint64_t offset, const std::string& bytes) {
    if (bytes.empty()) return;  // writing nothing does not grow a file
    if (seen.size() < offset + bytes.size()) seen.resize(offset + bytes.size(), '\0');
    seen.replace(offset, bytes.size(), bytes);
  }
  void truncate(std::uint64_t size) {
    seen.resize(size, '\0');
    disk.resize(size, '\0');
  }
  void sync() { disk = seen; }
  void power_cut() { seen = disk; }
};

// Bytes of every value (not just ASCII), short or long.
rc::Gen<std::string> gen_bytes() {
  return rc::gen::map(
      rc::gen::container<std::vector<unsigned char>>(rc::gen::arbitrary<unsigned char>()),
      [](const std::vector<unsigned char>& v) { return std::string(v.begin(), v.end()); });
}

struct Write {
  std::uint64_t offset;
  std::string bytes;
};
struct Truncate {
  std::uint64_t size;
};
struct Sync {};
struct PowerCut {};
using FileOp = std::variant<Write, Truncate, Sync, PowerCut>;

// Counterexamples print as steps: "write 12 [3 bytes]", "truncate 40", "sync", "power cut".
void showValue(const FileOp& op, std::ostream& os) {
  if (const auto* w = std::get_if<Write>(&op)) {
    os << "write " << w->offset << " [" << w->bytes.size() << " bytes]";
  } else if (const auto* t = std::get_if<Truncate>(&op)) {
    os << "truncate " << t->size;
  } else {
    os << (std::holds_alternative<Sync>(op) ? "sync" : "power cut");
  }
}

rc::Gen<FileOp> gen_file_op() {
  return rc::gen::weightedOneOf<FileOp>(
      {{6, rc::gen::construct<FileOp>(
               rc::gen::construct<Write>(rc::gen::inRange<std::uint64_t>(0, 300), gen_bytes()))},
       {1, rc::gen::construct<FileOp>(
               rc::gen::construct<Truncate>(rc::gen::inRange<std::uint64_t>(0, 400)))},
       {2, rc::gen::construct<FileOp>(rc::gen::just(Sync{}))},
       {1, rc::gen::construct<FileOp>(rc::gen::just(PowerCut{}))}});
}

TEST(UnsyncedWrites, AReaderSeesEveryWriteAndAPowerCutKeepsWhatWasSynced) {
  const bool ok = rc::check([] {
    const auto ops = *rc::gen::container<std::vector<FileOp>>(gen_file_op());
    FileModel model;
    UnsyncedWrites writes;
    std::string disk;  // the disk file the unsynced writes lie over
    auto read_disk = [&](std::uint64_t offset, std::size_t size, char* out) {
      const std::size_t n = offset >= disk.size() ? 0 : std::min(size, disk.size() - offset);
      disk.copy(out, n, offset);
      return n;
    };
    for (const FileOp& op : ops) {
      if (const auto* w = std::get_if<Write>(&op)) {
        writes.write(w->offset, w->bytes);
        model.write(w->offset, w->bytes);
      } else if (const auto* t = std::get_if<Truncate>(&op)) {
        writes.truncate(t->size);
        disk.resize(t->size, '\0');
        model.truncate(t->size);
      } else if (std::holds_alternative<Sync>(op)) {
        writes.flush([&](std::uint64_t offset, const std::string& bytes) {
          if (disk.size() < offset + bytes.size()) disk.resize(offset + bytes.size(), '\0');
          disk.replace(offset, bytes.size(), bytes);
        });
        model.sync();
      } else {
        writes.drop();
        model.power_cut();
      }
      RC_ASSERT(writes.size_over(disk.size()) == model.seen.size());
      RC_ASSERT(writes.read(0, model.seen.size() + 10, disk.size(), read_disk) == model.seen);
      const auto from = *rc::gen::inRange<std::size_t>(0, model.seen.size() + 2);
      const auto size = *rc::gen::inRange<std::size_t>(0, 64);
      RC_ASSERT(writes.read(from, size, disk.size(), read_disk) ==
                (from >= model.seen.size() ? std::string() : model.seen.substr(from, size)));
      RC_ASSERT(disk == model.disk);
    }
  });
  EXPECT_TRUE(ok);
}

// One step on a real mount: file `file` of three.
struct MountOp {
  // kFail: the disk starts failing every write and fsync (EIO for offset % 3 == 1, ENOSPC
  // for 0) or only its fsyncs (EIO, for 2), or heals if it was failing.
  // kSyncReadOnly: an fsync through a descriptor opened read-only (as a recovery reading a
  // file syncs it), which syncs what every descriptor wrote. kSyncDir: an fsync of the
  // files' directory (names are never lazy: it changes nothing, but a failing disk fails it).
  enum class Kind {
    kWrite,
    kAppend,
    kSync,
    kTruncate,
    kReopen,
    kWriteBack,
    kFail,
    kSyncReadOnly,
    kSyncDir
  } kind;
  int file;
  std::uint64_t offset;
  std::string bytes;
};

void showValue(const MountOp& op, std::ostream& os) {
  static const char* const kNames[] = {"pwrite",
                                       "append",
                                       "fsync",
                                       "ftruncate",
                                       "reopen",
                                       "write back (every file)",
                                       "fail or heal (every file)",
                                       "fsync read-only",
                                       "fsync the directory"};
  os << kNames[static_cast<int>(op.kind)] << " f" << op.file;
  if (op.kind == MountOp::Kind::kWrite || op.kind == MountOp::Kind::kTruncate)
    os << " " << op.offset;
  if (op.kind == MountOp::Kind::kWrite || op.kind == MountOp::Kind::kAppend) {
    os << " [" << op.bytes.size() << " bytes]";
  }
}

rc::Gen<MountOp> gen_mount_op() {
  return rc::gen::build<MountOp>(
      rc::gen::set(&MountOp::kind,
                   rc::gen::weightedElement<MountOp::Kind>({{5, MountOp::Kind::kWrite},
                                                            {3, MountOp::Kind::kAppend},
                                                            {2, MountOp::Kind::kSync},
                                                            {1, MountOp::Kind::kTruncate},
                                                            {1, MountOp::Kind::kReopen},
                                                            {1, MountOp::Kind::kWriteBack},
                                                            {1, MountOp::Kind::kFail},
                                                            {1, MountOp::Kind::kSyncReadOnly},
                                                            {1, MountOp::Kind::kSyncDir}})),
      rc::gen::set(&MountOp::file, rc::gen::inRange(0, 3)),
      rc::gen::set(&MountOp::offset, rc::gen::inRange<std::uint64_t>(0, 5000)),
      rc::gen::set(&MountOp::bytes, gen_bytes()));
}

std::string read_whole(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return "<cannot open>";
  std::string out;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

// Generated steps on three files of a real mount against a model of each file: every read
// sees every write, a failing disk refuses every write and fsync and changes nothing (or only
// the fsyncs, the writes staying unsynced), and a power cut keeps what was synced.
TEST(LazyFsMount, AFileReadsWhatWasWrittenAndAPowerCutKeepsWhatWasSynced) {
  if (const std::string why = lazy_fs_unavailable(); !why.empty()) GTEST_SKIP() << why;
  LazyFs fs;
  int round = 0;
  const bool ok = rc::check([&] {
    const auto ops = *rc::gen::container<std::vector<MountOp>>(gen_mount_op());
    const std::string dir = fs.path() + "/case" + std::to_string(round++);
    RC_ASSERT(::mkdir(dir.c_str(), 0755) == 0);
    std::vector<FileModel> models(3);
    std::vector<std::string> paths;
    std::vector<int> fds, appenders;
    for (int i = 0; i < 3; ++i) {
      paths.push_back(dir + "/f" + std::to_string(i));
      fds.push_back(::open(paths.back().c_str(), O_RDWR | O_CREAT, 0644));
      appenders.push_back(::open(paths.back().c_str(), O_WRONLY | O_APPEND));
      RC_ASSERT(fds.back() >= 0 && appenders.back() >= 0);
    }
    int failing = 0;          // the errno every write and fsync fails with now, 0 when well
    bool syncs_only = false;  // only fsyncs fail (with EIO); writes are taken, unsynced
    // A call the failing disk refused: -1 with its errno, and the file as it was.
    auto refused = [&](ssize_t rc) { return rc == -1 && errno == failing; };
    for (const MountOp& op : ops) {
      const auto i = static_cast<std::size_t>(op.file);
      FileModel& m = models[i];
      switch (op.kind) {
        case MountOp::Kind::kWrite: {
          const ssize_t rc =
              ::pwrite(fds[i], op.bytes.data(), op.bytes.size(), static_cast<off_t>(op.offset));
          if (failing != 0 && !syncs_only && !op.bytes.empty()) {
            RC_ASSERT(refused(rc));
            break;
          }
          RC_ASSERT(rc == static_cast<ssize_t>(op.bytes.size()));
          m.write(op.offset, op.bytes);
          break;
        }
        case MountOp::Kind::kAppend: {
          const ssize_t rc = ::write(appenders[i], op.bytes.data(), op.bytes.size());
          if (failing != 0 && !syncs_only && !op.bytes.empty()) {
            RC_ASSERT(refused(rc));
            break;
          }
          RC_ASSERT(rc == static_cast<ssize_t>(op.bytes.size()));
          m.write(m.seen.size(), op.bytes);
          break;
        }
        case MountOp::Kind::kSync:
          if (failing != 0) {
            RC_ASSERT(refused(::fsync(fds[i])));
            break;
          }
          RC_ASSERT(::fsync(fds[i]) == 0);
          m.sync();
          break;
        case MountOp::Kind::kSyncReadOnly: {
          const int ro = ::open(paths[i].c_str(), O_RDONLY);
          RC_ASSERT(ro >= 0);
          const int rc = ::fsync(ro);
          const int err = errno;
          ::close(ro);
          if (failing != 0) {
            RC_ASSERT(rc == -1 && err == failing);
            break;
          }
          RC_ASSERT(rc == 0);
          m.sync();
          break;
        }
        case MountOp::Kind::kSyncDir: {
          const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
          RC_ASSERT(d >= 0);
          const int rc = ::fsync(d);
          const int err = errno;
          ::close(d);
          const bool as_the_disk_is = failing != 0 ? rc == -1 && err == failing : rc == 0;
          RC_ASSERT(as_the_disk_is);
          break;
        }
        case MountOp::Kind::kFail:
          syncs_only = failing == 0 && op.offset % 3 == 2;
          failing = failing != 0 ? 0 : op.offset % 3 == 0 ? ENOSPC : EIO;
          if (failing == 0) {
            fs.heal();
          } else if (syncs_only) {
            fs.fail_syncs();
          } else {
            fs.fail(failing);
          }
          break;
        case MountOp::Kind::kTruncate:
          RC_ASSERT(::ftruncate(fds[i], static_cast<off_t>(op.offset)) == 0);
          m.truncate(op.offset);
          break;
        case MountOp::Kind::kWriteBack:
          fs.write_back();
          for (FileModel& each : models) each.sync();
          break;
        case MountOp::Kind::kReopen:
          ::close(fds[i]);
          fds[i] = ::open(paths[i].c_str(), O_RDWR);
          RC_ASSERT(fds[i] >= 0);
          break;
      }
      RC_ASSERT(read_whole(paths[i]) == m.seen);
    }
    for (std::size_t i = 0; i < 3; ++i) {
      ::close(fds[i]);
      ::close(appenders[i]);
    }
    fs.heal();
    fs.drop_unsynced();
    for (std::size_t i = 0; i < 3; ++i) {
      models[i].power_cut();
      RC_ASSERT(read_whole(paths[i]) == models[i].seen);
    }
  });
  EXPECT_TRUE(ok);
  const LazyFsCounters c = fs.counters();
  EXPECT_GT(c.drops, 0U);
  EXPECT_GT(c.dropped_bytes, 0U) << "no run lost a byte: the power cut was never tried";
  EXPECT_GT(c.failed, 0U) << "no run failed a call: the failing disk was never tried";
  EXPECT_EQ(c.pending_bytes, 0U);
}

// Whether path is a mount point of its own.
bool is_mount_point(const std::string& path) {
  struct stat self {
  }, parent{};
  if (::stat(path.c_str(), &self) != 0) return errno == ENOTCONN;
  return ::stat((path + "/..").c_str(), &parent) == 0 && self.st_dev != parent.st_dev;
}

TEST(LazyFsMount, TheMountAndItsDirectoryGoWithTheFixture) {
  if (const std::string why = lazy_fs_unavailable(); !why.empty()) GTEST_SKIP() << why;
  std::string mount;
  {
    LazyFs fs;
    mount = fs.path();
    ASSERT_TRUE(is_mount_point(mount));
  }
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(mount).parent_path()));
}

TEST(LazyFsMount, TheMountAndItsDirectoryGoWhenItsOwnerIsKilled) {
  if (const std::string why = lazy_fs_unavailable(); !why.empty()) GTEST_SKIP() << why;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    LazyFs fs;  // never destroyed: the owner dies by SIGKILL
    const std::string path = fs.path() + "\n";
    (void)!::write(pipe_fds[1], path.data(), path.size());
    ::raise(SIGKILL);
  }
  ::close(pipe_fds[1]);
  std::string mount;
  char c = 0;
  while (::read(pipe_fds[0], &c, 1) == 1 && c != '\n') mount += c;
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_FALSE(mount.empty()) << "the child could not mount";
  const std::string dir = std::filesystem::path(mount).parent_path();
  // The watchdog looks once a second; bounded wait on the state itself.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((std::filesystem::exists(dir) || is_mount_point(mount)) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(is_mount_point(mount)) << mount << " is still mounted";
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir << " is still there";
}

}  // namespace
}  // namespace conformance
