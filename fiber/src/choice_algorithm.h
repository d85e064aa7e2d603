// The Boost.Fiber scheduling algorithm of a fiber run: it resumes exactly the context the
// Controller asked for, and nothing else. All choices are made by the Controller at
// scheduling points; this class only holds Boost's ready contexts until they are wanted.
#pragma once

#include <algorithm>
#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>
#include <boost/fiber/type.hpp>
#include <chrono>
#include <vector>

namespace fiber::detail {

/// Resumes only `desired`; parks every other ready context. Owned by Boost's scheduler;
/// touches no state outside itself, so it may outlive the Controller.
class ChoiceAlgorithm final : public boost::fibers::algo::algorithm {
 public:
  /// Publishes itself through *self so the Controller can steer it.
  explicit ChoiceAlgorithm(ChoiceAlgorithm** self) { *self = this; }

  /// The context to resume at the next switch.
  void want(boost::fibers::context::id id) { desired_ = id; }

  void awakened(boost::fibers::context* ctx) noexcept override { ready_.push_back(ctx); }

  boost::fibers::context* pick_next() noexcept override {
    auto it = std::find_if(ready_.begin(), ready_.end(),
                           [&](boost::fibers::context* c) { return c->get_id() == desired_; });
    if (it == ready_.end()) {
      it = std::find_if(ready_.begin(), ready_.end(), [](boost::fibers::context* c) {
        return c->is_context(boost::fibers::type::dispatcher_context);
      });
    }
    if (it == ready_.end()) return nullptr;
    boost::fibers::context* ctx = *it;
    ready_.erase(it);
    return ctx;
  }

  bool has_ready_fibers() const noexcept override { return !ready_.empty(); }
  // Nothing ever waits on real time: the Controller advances virtual time itself.
  void suspend_until(std::chrono::steady_clock::time_point const&) noexcept override {}
  void notify() noexcept override {}

 private:
  std::vector<boost::fibers::context*> ready_;
  boost::fibers::context::id desired_;
};

}  // namespace fiber::detail
