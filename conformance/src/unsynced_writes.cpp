// One file's unsynced writes (conformance/unsynced_writes.h).
#include "conformance/unsynced_writes.h"

#include <algorithm>
#include <iterator>

namespace conformance {

void UnsyncedWrites::write(std::uint64_t offset, const std::string& bytes) {
  if (bytes.empty()) return;
  const std::uint64_t end = offset + bytes.size();
  // Cut every extent that overlaps [offset, end): keep the parts before and after.
  auto it = extents_.upper_bound(offset);
  if (it != extents_.begin()) --it;
  while (it != extents_.end() && it->first < end) {
    const std::uint64_t from = it->first;
    const std::uint64_t to = from + it->second.size();
    if (to <= offset) {
      ++it;
      continue;
    }
    std::string old = std::move(it->second);
    it = extents_.erase(it);
    if (from < offset) extents_.emplace(from, old.substr(0, offset - from));
    if (to > end) it = extents_.emplace(end, old.substr(end - from)).first;
  }
  extents_.emplace(offset, bytes);
}

std::string UnsyncedWrites::read(std::uint64_t offset, std::size_t size, std::uint64_t disk_size,
                                 const DiskRead& disk) const {
  const std::uint64_t file_size = size_over(disk_size);
  if (offset >= file_size) return {};
  const std::uint64_t end = std::min<std::uint64_t>(offset + size, file_size);
  std::string out(end - offset, '\0');
  if (offset < disk_size) {
    const std::uint64_t disk_end = std::min(end, disk_size);
    (void)disk(offset, disk_end - offset, out.data());  // short reads leave zeros
  }
  auto it = extents_.upper_bound(offset);
  if (it != extents_.begin()) --it;
  for (; it != extents_.end() && it->first < end; ++it) {
    const std::uint64_t from = std::max(it->first, offset);
    const std::uint64_t to = std::min<std::uint64_t>(it->first + it->second.size(), end);
    if (from >= to) continue;
    std::copy_n(it->second.data() + (from - it->first), to - from, out.data() + (from - offset));
  }
  return out;
}

std::uint64_t UnsyncedWrites::size_over(std::uint64_t disk_size) const {
  if (extents_.empty()) return disk_size;
  const auto& last = *std::prev(extents_.end());
  return std::max<std::uint64_t>(disk_size, last.first + last.second.size());
}

void UnsyncedWrites::truncate(std::uint64_t size) {
  auto it = extents_.lower_bound(size);
  extents_.erase(it, extents_.end());
  if (extents_.empty()) return;
  auto& last = *std::prev(extents_.end());
  if (last.first + last.second.size() > size) last.second.resize(size - last.first);
}

void UnsyncedWrites::flush(const DiskWrite& disk) {
  for (const auto& [offset, bytes] : extents_) disk(offset, bytes);
  extents_.clear();
}

std::uint64_t UnsyncedWrites::drop() {
  const std::uint64_t n = pending();
  extents_.clear();
  return n;
}

std::uint64_t UnsyncedWrites::pending() const {
  std::uint64_t n = 0;
  for (const auto& [offset, bytes] : extents_) n += bytes.size();
  return n;
}

}  // namespace conformance
