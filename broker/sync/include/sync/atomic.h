// The sync layer's atomic: the broker's lock-free paths (wake-up flags, stop flags, counters)
// use it instead of std::atomic, so that on the fiber back-end every load, store and
// read-modify-write is a scheduling point (the approach of Rust's loom): the fiber
// properties then explore the interleavings between atomic operations, not only those
// between locks; and each goes through the run's memory model, so a load may read what the
// C++ memory model allows, not only the newest store. On the std back-end it is std::atomic
// and costs nothing more.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(BROKER_SYNC_FIBER)
#include "sync/sync_fiber.h"
#endif

namespace broker::sync {

/// std::atomic<T> with the operations the broker uses, each taking its memory order
/// explicitly (every call site says why that order suffices). On fibers each operation is
/// followed by a scheduling point ("atomic"): it takes effect where the fiber reaches it,
/// then another fiber may run, so between any two shared operations of a fiber (locks,
/// atomics) the scheduler may switch. (A point before it instead would split a call from its
/// first effect: ~Broker's stop flag would no longer take effect as the destructor begins.)
/// On fibers each operation also goes through the run's memory model: under a weak-memory
/// schedule a load may return an older store than the newest, as the C++ memory model
/// allows for its order (fiber/src/memory_model.h). Outside a fiber run (a destructor at
/// exit) there is no point and no model. Thread-safe; never throws.
template <typename T>
class Atomic {
 public:
#if defined(BROKER_SYNC_FIBER)
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(std::uint64_t),
                "the fiber memory model carries an atomic's value in 64 bits");
  Atomic() noexcept : value_(T{}) { forget(); }
  explicit Atomic(T v) noexcept : value_(v) { forget(); }
  ~Atomic() { forget(); }
#else
  constexpr Atomic() noexcept : value_(T{}) {}
  constexpr explicit Atomic(T v) noexcept : value_(v) {}
#endif
  Atomic(const Atomic&) = delete;
  Atomic& operator=(const Atomic&) = delete;

#if defined(BROKER_SYNC_FIBER)
  // On fibers each operation also names its call site (the compiler's __builtin_FILE and
  // __builtin_LINE as default arguments: clang 14 has no std::source_location), so that
  // the weak-memory sweep (scripts/memory-order-sites) can weaken one site at a time
  // without a rebuild.
  T load(std::memory_order order, const char* file = __builtin_FILE(),
         unsigned line = __builtin_LINE()) const noexcept {
    FiberRuntime* rt = installed_fiber_runtime();
    if (rt == nullptr) return value_.load(order);
    order = rt->order_at(order, file, line);
    const T r = value_of(rt->atomic_load(&value_, bits(value_.load()), order, false));
    rt->point("atomic");
    return r;
  }
  void store(T v, std::memory_order order, const char* file = __builtin_FILE(),
             unsigned line = __builtin_LINE()) noexcept {
    const T before = value_.exchange(v);
    if (FiberRuntime* rt = installed_fiber_runtime()) {
      order = rt->order_at(order, file, line);
      rt->atomic_store(&value_, bits(before), bits(v), order);
      rt->point("atomic");
    }
  }
  T exchange(T v, std::memory_order order, const char* file = __builtin_FILE(),
             unsigned line = __builtin_LINE()) noexcept {
    return rmw(
        order, file, line, [&] { return value_.exchange(v); }, [&](T) { return v; });
  }
  T fetch_add(T d, std::memory_order order, const char* file = __builtin_FILE(),
              unsigned line = __builtin_LINE()) noexcept {
    return rmw(
        order, file, line, [&] { return value_.fetch_add(d); }, [&](T r) { return T(r + d); });
  }
  T fetch_sub(T d, std::memory_order order, const char* file = __builtin_FILE(),
              unsigned line = __builtin_LINE()) noexcept {
    return rmw(
        order, file, line, [&] { return value_.fetch_sub(d); }, [&](T r) { return T(r - d); });
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order order,
                               const char* file = __builtin_FILE(),
                               unsigned line = __builtin_LINE()) noexcept {
    const T wanted = expected;
    const bool swapped = value_.compare_exchange_strong(expected, desired);
    if (FiberRuntime* rt = installed_fiber_runtime()) {
      order = rt->order_at(order, file, line);
      if (swapped) {
        rt->atomic_rmw(&value_, bits(wanted), bits(desired), order);
      } else {
        // A failed compare-exchange is a load of the newest value, with the failure order.
        rt->atomic_load(&value_, bits(expected), failure_order(order), true);
      }
      rt->point("atomic");
    }
    return swapped;
  }

 private:
  static std::uint64_t bits(T v) noexcept {
    std::uint64_t b = 0;
    std::memcpy(&b, &v, sizeof v);
    return b;
  }
  static T value_of(std::uint64_t b) noexcept {
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  }
  static std::memory_order failure_order(std::memory_order order) noexcept {
    if (order == std::memory_order_acq_rel) return std::memory_order_acquire;
    if (order == std::memory_order_release) return std::memory_order_relaxed;
    return order;
  }
  // A read-modify-write reads the newest value (atomicity), so only its effect is reported.
  template <class Apply, class After>
  T rmw(std::memory_order order, const char* file, unsigned line, Apply apply,
        After after) noexcept {
    const T before = apply();
    if (FiberRuntime* rt = installed_fiber_runtime()) {
      order = rt->order_at(order, file, line);
      rt->atomic_rmw(&value_, bits(before), bits(after(before)), order);
      rt->point("atomic");
    }
    return before;
  }
  void forget() noexcept {
    if (FiberRuntime* rt = installed_fiber_runtime()) rt->atomic_forget(&value_);
  }
#else
  T load(std::memory_order order) const noexcept { return value_.load(order); }
  void store(T v, std::memory_order order) noexcept { value_.store(v, order); }
  T exchange(T v, std::memory_order order) noexcept { return value_.exchange(v, order); }
  T fetch_add(T d, std::memory_order order) noexcept { return value_.fetch_add(d, order); }
  T fetch_sub(T d, std::memory_order order) noexcept { return value_.fetch_sub(d, order); }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order order) noexcept {
    return value_.compare_exchange_strong(expected, desired, order);
  }

 private:
#endif
  // On fibers the newest value, in modification order; the model keeps the older ones.
  std::atomic<T> value_;
};

/// std::atomic_thread_fence(order); on fibers, the model's fence. Never throws.
#if defined(BROKER_SYNC_FIBER)
inline void fence(std::memory_order order, const char* file = __builtin_FILE(),
                  unsigned line = __builtin_LINE()) noexcept {
  if (FiberRuntime* rt = installed_fiber_runtime()) {
    rt->fence(rt->order_at(order, file, line));
    rt->point("fence");
    return;
  }
  std::atomic_thread_fence(order);
}
#else
inline void fence(std::memory_order order) noexcept { std::atomic_thread_fence(order); }
#endif

/// Plain shared data that an atomic or a lock publishes (a record behind a log's end): its
/// writer notes the write and each reader its read, so that on fibers a read that is not
/// happens-after the write is reported as a data race. Nothing on the std back-end.
inline void note_written([[maybe_unused]] const void* at, [[maybe_unused]] std::size_t bytes,
                         [[maybe_unused]] const char* what) noexcept {
#if defined(BROKER_SYNC_FIBER)
  if (FiberRuntime* rt = installed_fiber_runtime()) rt->plain_access(at, bytes, true, what);
#endif
}
/// See note_written.
inline void note_read([[maybe_unused]] const void* at, [[maybe_unused]] std::size_t bytes,
                      [[maybe_unused]] const char* what) noexcept {
#if defined(BROKER_SYNC_FIBER)
  if (FiberRuntime* rt = installed_fiber_runtime()) rt->plain_access(at, bytes, false, what);
#endif
}

}  // namespace broker::sync
