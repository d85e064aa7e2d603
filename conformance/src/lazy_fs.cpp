// The lazy file system fixture (conformance/lazy_fs.h).
#include "conformance/lazy_fs.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "conformance/target.h"

namespace conformance {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kMountTimeout = std::chrono::seconds(10);
constexpr auto kStopTimeout = std::chrono::seconds(5);

// lazy_fs: $LAZY_FS_BIN, else beside the running program, else the one this build made.
std::string lazy_fs_binary() {
  if (const char* env = std::getenv("LAZY_FS_BIN")) {
    return ::access(env, X_OK) == 0 ? std::string(env) : std::string();
  }
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto candidate = self.parent_path() / "lazy_fs";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
#ifdef LAZY_FS_BUILT
  if (::access(LAZY_FS_BUILT, X_OK) == 0) return LAZY_FS_BUILT;
#endif
  return {};
}

// Whether path is a mount point now (its device differs from its parent's).
bool mounted(const std::string& path) {
  struct stat self {
  }, parent{};
  if (::stat(path.c_str(), &self) != 0) return true;  // ENOTCONN: a dead FUSE mount is one
  if (::stat((path + "/..").c_str(), &parent) != 0) return false;
  return self.st_dev != parent.st_dev;
}

}  // namespace

std::string lazy_fs_unavailable() {
  if (::access("/dev/fuse", R_OK | W_OK) != 0) {
    return "no /dev/fuse on this machine (lost unsynced writes need FUSE)";
  }
  if (::geteuid() != 0) return "not root (the lazy file system mounts with mount(2))";
  if (lazy_fs_binary().empty()) {
    return "lazy_fs not found (looked at $LAZY_FS_BIN, beside this program and in the build): "
           "build it with `cmake --build --preset default --target lazy_fs`";
  }
  return {};
}

LazyFs::LazyFs() {
  if (const std::string why = lazy_fs_unavailable(); !why.empty()) throw TargetFailure(why);
  dir_ = make_temp_dir("lazyfs");
  mount_ = dir_ + "/mnt";
  std::filesystem::create_directories(dir_ + "/backing");
  std::filesystem::create_directories(mount_);
  const std::string binary = lazy_fs_binary();
  if (const int err =
          process_.spawn({binary, dir_ + "/backing", mount_}, dir_ + "/stdout.log", dir_, mount_);
      err != 0) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw TargetFailure("cannot run " + binary + ": " + std::strerror(err));
  }
  const auto deadline = Clock::now() + kMountTimeout;
  struct stat st {};
  while (::stat((mount_ + "/.lazyfs").c_str(), &st) != 0) {
    if (!process_.alive() || Clock::now() >= deadline) {
      std::deque<std::string> last;
      tail_of(dir_ + "/stdout.log", 1, last);
      const std::string msg = "lazy_fs (" + binary + ") did not mount at " + mount_ +
                              (last.empty() ? std::string() : "; its log ends: " + last.back());
      unmount();
      throw TargetFailure(msg);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

LazyFs::~LazyFs() { unmount(); }

void LazyFs::unmount() {
  process_.stop(kStopTimeout);  // SIGTERM: fuse_main unmounts as it returns
  if (mounted(mount_)) ::umount2(mount_.c_str(), MNT_DETACH);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::uint64_t LazyFs::drop_unsynced() {
  const std::uint64_t before = counters().dropped_bytes;
  {
    std::ofstream control(mount_ + "/.lazyfs");
    control << "drop" << std::flush;
    if (!control) throw TargetFailure("lazy_fs at " + mount_ + " refused the drop");
  }
  return counters().dropped_bytes - before;
}

void LazyFs::write_back() {
  std::ofstream control(mount_ + "/.lazyfs");
  control << "writeback" << std::flush;
  if (!control) throw TargetFailure("lazy_fs at " + mount_ + " refused the write-back");
}

void LazyFs::fail(int error) {
  if (error != EIO && error != ENOSPC) {
    throw std::invalid_argument("lazy_fs fails with EIO or ENOSPC, not " + std::to_string(error));
  }
  std::ofstream control(mount_ + "/.lazyfs");
  control << (error == EIO ? "fail EIO" : "fail ENOSPC") << std::flush;
  if (!control) throw TargetFailure("lazy_fs at " + mount_ + " refused to fail");
}

void LazyFs::fail_syncs() {
  std::ofstream control(mount_ + "/.lazyfs");
  control << "fail-sync EIO" << std::flush;
  if (!control) throw TargetFailure("lazy_fs at " + mount_ + " refused to fail its syncs");
}

void LazyFs::heal() {
  std::ofstream control(mount_ + "/.lazyfs");
  control << "heal" << std::flush;
  if (!control) throw TargetFailure("lazy_fs at " + mount_ + " refused to heal");
}

LazyFsCounters LazyFs::counters() const {
  std::ifstream control(mount_ + "/.lazyfs");
  if (!control) throw TargetFailure("lazy_fs at " + mount_ + " does not answer");
  LazyFsCounters c;
  std::string name;
  std::uint64_t value = 0;
  while (control >> name >> value) {
    if (name == "fsyncs")
      c.fsyncs = value;
    else if (name == "writes")
      c.writes = value;
    else if (name == "pending_bytes")
      c.pending_bytes = value;
    else if (name == "pending_files")
      c.pending_files = value;
    else if (name == "drops")
      c.drops = value;
    else if (name == "dropped_bytes")
      c.dropped_bytes = value;
    else if (name == "failed")
      c.failed = value;
  }
  return c;
}

}  // namespace conformance
