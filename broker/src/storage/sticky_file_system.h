// A store's file system that stays failed after its first failed write (SPEC R33).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "broker/file_system.h"
#include "sync/sync.h"

namespace broker::storage {

/// Wraps the file system a Store writes through. The first mutating call (append, sync,
/// sync_dir, rename, remove, truncate, create_directories, and a mapped file's extend, sync
/// and truncate) that throws IoError makes it
/// failed: that call's error goes on to its caller, and from then on every mutating call
/// throws IoError naming that first failure, without reaching the file system. A failed
/// sync is never tried again: the kernel may have dropped the bytes it failed to write and
/// report the next sync as a success (fsyncgate). Reads pass through. Thread-safe: mu_ is a
/// leaf, held only to set or copy the first failure.
class StickyFileSystem final : public FileSystem {
 public:
  explicit StickyFileSystem(std::shared_ptr<FileSystem> fs) : fs_(std::move(fs)) {}

  /// Whether a mutating call has failed (one acquire load: cheap on every call's path).
  [[nodiscard]] bool failed() const { return failed_.load(std::memory_order_acquire); }
  /// The first failure ("sync /store/t0/...seg: Input/output error"), if any.
  [[nodiscard]] std::optional<std::string> failure() const EXCLUDES(mu_);
  /// Throws IoError naming the first failure if there was one.
  void check() const EXCLUDES(mu_);

  void create_directories(const std::string& dir) override;
  std::vector<std::string> list(const std::string& dir) override { return fs_->list(dir); }
  bool exists(const std::string& path) override { return fs_->exists(path); }
  std::uint64_t size(const std::string& path) override { return fs_->size(path); }
  std::string read(const std::string& path, std::uint64_t position, std::size_t length) override {
    return fs_->read(path, position, length);
  }
  void append(const std::string& path, std::string_view bytes) override;
  void sync(const std::string& path) override;
  void sync_dir(const std::string& dir) override;
  void rename(const std::string& from, const std::string& to) override;
  void remove(const std::string& path) override;
  void truncate(const std::string& path, std::uint64_t size) override;
  /// The mapped file's stores are refused too once the file system has failed.
  std::unique_ptr<MappedFile> map(const std::string& path) override;
  std::unique_ptr<FileLock> try_lock(const std::string& path) override {
    return fs_->try_lock(path);
  }

 private:
  class Mapped;
  /// Runs one mutating call of the wrapped file system, or refuses it; records its failure.
  template <class Call>
  void guarded(Call&& call) EXCLUDES(mu_);

  const std::shared_ptr<FileSystem> fs_;
  std::atomic<bool> failed_{false};
  mutable sync::Mutex mu_;
  std::string first_ GUARDED_BY(mu_);
};

}  // namespace broker::storage
