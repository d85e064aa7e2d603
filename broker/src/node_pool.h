// A memory resource for the nodes of a subscription's maps: a free list per
// block size, so a node made and dropped per message costs two pointer moves.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory_resource>
#include <new>
#include <vector>

namespace broker {

/// Hands out blocks of up to kMaxBlock bytes from a free list per size (rounded up to
/// kGrain), refilled from the upstream resource a chunk at a time; bigger or over-aligned
/// requests go upstream. It keeps every chunk until it is destroyed: it holds at most the
/// most blocks of each size ever in use at once. Not thread-safe (the owner's lock guards
/// it). Allocation throws what the upstream throws (std::bad_alloc).
///
/// std::pmr::unsynchronized_pool_resource was the one before: its deallocate looks up the
/// chunk that owns the block (a search over its chunks), a twentieth of a busy lane's time.
class NodePool final : public std::pmr::memory_resource {
 public:
  explicit NodePool(std::pmr::memory_resource* upstream = std::pmr::get_default_resource())
      : upstream_(upstream) {}
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;
  ~NodePool() override {
    for (const Chunk& c : chunks_) upstream_->deallocate(c.bytes, c.size, kAlign);
  }

  static constexpr std::size_t kGrain = 16;
  static constexpr std::size_t kMaxBlock = 256;

 private:
  static constexpr std::size_t kAlign = alignof(std::max_align_t);
  struct FreeBlock {
    FreeBlock* next;
  };
  struct Chunk {
    void* bytes;
    std::size_t size;
  };

  static bool pooled(std::size_t bytes, std::size_t alignment) {
    return bytes <= kMaxBlock && alignment <= kAlign;
  }
  static std::size_t size_class(std::size_t bytes) {
    return (std::max<std::size_t>(bytes, 1) + kGrain - 1) / kGrain - 1;
  }

  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (!pooled(bytes, alignment)) return upstream_->allocate(bytes, alignment);
    const std::size_t c = size_class(bytes);
    if (free_[c] == nullptr) refill(c);
    FreeBlock* block = free_[c];
    free_[c] = block->next;
    return block;
  }

  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    if (!pooled(bytes, alignment)) {
      upstream_->deallocate(p, bytes, alignment);
      return;
    }
    const std::size_t c = size_class(bytes);
    free_[c] = new (p) FreeBlock{free_[c]};
  }

  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  /// A new chunk for size class c, twice the blocks of its last one (from 16, up to 1024):
  /// a subscription that holds few messages stays small.
  void refill(std::size_t c) {
    const std::size_t block = (c + 1) * kGrain;
    std::size_t& count = next_count_[c];
    if (count == 0) count = 16;
    chunks_.reserve(chunks_.size() + 1);  // so the push_back below cannot throw
    void* bytes = upstream_->allocate(block * count, kAlign);
    chunks_.push_back(Chunk{bytes, block * count});
    auto* base = static_cast<std::byte*>(bytes);
    for (std::size_t i = count; i > 0; --i) {
      free_[c] = new (base + (i - 1) * block) FreeBlock{free_[c]};
    }
    count = std::min<std::size_t>(2 * count, 1024);
  }

  std::pmr::memory_resource* const upstream_;
  std::array<FreeBlock*, kMaxBlock / kGrain> free_{};
  std::array<std::size_t, kMaxBlock / kGrain> next_count_{};
  std::vector<Chunk> chunks_;
};

}  // namespace broker
