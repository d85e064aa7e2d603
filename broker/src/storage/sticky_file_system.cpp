#include "sticky_file_system.h"

#include "broker/errors.h"

namespace broker::storage {

std::optional<std::string> StickyFileSystem::failure() const {
  if (!failed()) return std::nullopt;
  sync::MutexLock lock(mu_);
  return first_;
}

void StickyFileSystem::check() const {
  if (!failed()) return;
  sync::MutexLock lock(mu_);
  throw IoError("storage failed earlier, reopen the broker: " + first_);
}

template <class Call>
void StickyFileSystem::guarded(Call&& call) {
  check();
  try {
    call();
  } catch (const IoError& e) {
    sync::MutexLock lock(mu_);
    if (!failed_.load(std::memory_order_relaxed)) {
      first_ = e.what();
      failed_.store(true, std::memory_order_release);
    }
    throw;
  }
}

void StickyFileSystem::create_directories(const std::string& dir) {
  guarded([&] { fs_->create_directories(dir); });
}
void StickyFileSystem::append(const std::string& path, std::string_view bytes) {
  guarded([&] { fs_->append(path, bytes); });
}
void StickyFileSystem::sync(const std::string& path) {
  guarded([&] { fs_->sync(path); });
}
void StickyFileSystem::sync_dir(const std::string& dir) {
  guarded([&] { fs_->sync_dir(dir); });
}
void StickyFileSystem::rename(const std::string& from, const std::string& to) {
  guarded([&] { fs_->rename(from, to); });
}
void StickyFileSystem::remove(const std::string& path) {
  guarded([&] { fs_->remove(path); });
}
/// A mapped file of a StickyFileSystem: its calls are guarded by the file system's.
class StickyFileSystem::Mapped final : public MappedFile {
 public:
  Mapped(StickyFileSystem& fs, std::unique_ptr<MappedFile> file)
      : fs_(fs), file_(std::move(file)) {}
  [[nodiscard]] std::uint64_t size() const override { return file_->size(); }
  void extend(std::uint64_t size) override {
    fs_.guarded([&] { file_->extend(size); });
  }
  void store(std::uint64_t position, std::string_view bytes) override {
    fs_.check();
    file_->store(position, bytes);
  }
  void sync() override {
    fs_.guarded([&] { file_->sync(); });
  }
  void truncate(std::uint64_t size) override {
    fs_.guarded([&] { file_->truncate(size); });
  }

 private:
  StickyFileSystem& fs_;  // outlives its files: the store's segment logs go first
  const std::unique_ptr<MappedFile> file_;
};

std::unique_ptr<MappedFile> StickyFileSystem::map(const std::string& path) {
  std::unique_ptr<MappedFile> file;
  guarded([&] { file = fs_->map(path); });
  return std::make_unique<Mapped>(*this, std::move(file));
}

void StickyFileSystem::truncate(const std::string& path, std::uint64_t size) {
  guarded([&] { fs_->truncate(path, size); });
}

}  // namespace broker::storage
