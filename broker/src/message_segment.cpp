#include "message_segment.h"

#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace broker {

std::unique_ptr<unsigned char, MessageSegment::Free> MessageSegment::allocate(std::size_t bytes) {
  void* p = nullptr;
  if (bytes >= kMaxBytes) {
    const std::size_t rounded = (bytes + kMaxBytes - 1) / kMaxBytes * kMaxBytes;
    p = std::aligned_alloc(kMaxBytes, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // Advice only: where transparent huge pages are off, this fails and 4 KiB pages serve.
    if (p != nullptr) (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  } else {
    p = std::malloc(bytes);
  }
  if (p == nullptr) throw std::bad_alloc();
  return std::unique_ptr<unsigned char, Free>(static_cast<unsigned char*>(p));
}

}  // namespace broker
