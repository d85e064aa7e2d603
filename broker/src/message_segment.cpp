#include "message_segment.h"

#include <cstdint>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace broker {

void MessageSegment::Free::operator()(unsigned char* p) const {
#if defined(__linux__)
  if (mapped > 0) {
    munmap(p, mapped);
    return;
  }
#endif
  std::free(p);
}

MessageSegment::Bytes MessageSegment::obtain(std::size_t bytes) {
  if (spares_ && bytes == kMaxBytes) {
    if (Bytes spare = spares_->take()) return spare;
  }
  return allocate(bytes);
}

MessageSegment::Bytes MessageSegment::allocate(std::size_t bytes) {
#if defined(__linux__)
  if (bytes >= kMaxBytes) {
    // Mapped, not malloc'd: glibc's aligned_alloc of a mapped chunk keeps the whole
    // over-allocation (twice the size) mapped. Map one alignment more, then unmap the
    // unaligned head and the tail, so exactly `rounded` bytes stay mapped.
    const std::size_t rounded = (bytes + kMaxBytes - 1) / kMaxBytes * kMaxBytes;
    void* raw = mmap(nullptr, rounded + kMaxBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto begin = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t start = (begin + kMaxBytes - 1) / kMaxBytes * kMaxBytes;
    if (start > begin) munmap(raw, start - begin);
    const std::uintptr_t tail = begin + rounded + kMaxBytes - (start + rounded);
    if (tail > 0) munmap(reinterpret_cast<void*>(start + rounded), tail);
    auto* p = reinterpret_cast<unsigned char*>(start);
#if defined(MADV_HUGEPAGE)
    // Advice only: where transparent huge pages are off this fails and 4 KiB pages serve.
    (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return Bytes(p, Free{rounded});
  }
#endif
  void* p = std::malloc(bytes);
  if (p == nullptr) throw std::bad_alloc();
  return Bytes(static_cast<unsigned char*>(p), Free{});
}

}  // namespace broker
