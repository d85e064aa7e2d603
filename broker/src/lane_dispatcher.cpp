#include <atomic>
#include <map>
#include <optional>
#include <vector>

#include "dispatcher.h"
#include "offer.h"
#include "sync/atomic.h"

namespace broker {
namespace {

/// One subscription's thread and its wake-up flag. Lock order: LaneDispatcher::mu_ before
/// Lane::mu; neither is held while an offer runs.
struct Lane {
  explicit Lane(std::shared_ptr<SubscriptionState> state) : s(std::move(state)) {}
  const std::shared_ptr<SubscriptionState> s;
  sync::Mutex mu;
  sync::CondVar wake;
  bool pending GUARDED_BY(mu) = true;  // something may be waiting: look before sleeping
  // R24: a returned message waits out its back-off: look again after this long (real time).
  std::optional<Millis> recheck GUARDED_BY(mu);
  bool stop GUARDED_BY(mu) = false;
  // stop, readable between offers without mu. Release/acquire: a lane that sees it stops;
  // nothing else is published through it (stop under mu is what the wait loop reads).
  sync::Atomic<bool> stopping{false};
  bool finished GUARDED_BY(mu) = false;
  // The lane thread's own: how long it spins before it sleeps.
  SpinBudget spin;
  sync::Thread thread;
};

/// A thread per push subscription: a slow handler delays only its own lane.
class LaneDispatcher final : public Dispatcher {
 public:
  LaneDispatcher(const DispatcherOptions& options, std::function<void()> on_progress)
      : backoff_(options.retry_backoff), on_progress_(std::move(on_progress)) {}
  ~LaneDispatcher() override { stop(); }

  bool synchronous() const override { return false; }
  // Lanes look at their log's end while awake and register on it before they sleep.
  bool watches_log() const override { return true; }

  void attach(const std::shared_ptr<SubscriptionState>& s) override {
    auto lane = std::make_shared<Lane>(s);
    sync::MutexLock lock(mu_);
    if (stopped_) return;
    reap_finished();
    lane->thread = sync::Thread([this, lane] { run(*lane); });
    lanes_[s.get()] = lane;
  }

  void detach(const std::shared_ptr<SubscriptionState>& s) override {
    sync::MutexLock lock(mu_);
    auto it = lanes_.find(s.get());
    if (it == lanes_.end()) return;
    {
      sync::MutexLock lane_lock(it->second->mu);
      it->second->stop = true;
      it->second->stopping.store(true, std::memory_order_release);
      it->second->wake.notify_one();
    }
    // Joined later: detach may run on this very lane (a handler unsubscribing itself).
    retired_.push_back(it->second);
    lanes_.erase(it);
  }

  void notify(const std::shared_ptr<SubscriptionState>& s) override {
    if (s->wake.raise()) return;  // already woken
    sync::MutexLock lock(mu_);
    auto it = lanes_.find(s.get());
    if (it == lanes_.end()) return;
    sync::MutexLock lane_lock(it->second->mu);
    it->second->pending = true;
    it->second->wake.notify_one();
  }

  void stop() override {
    // First, before any lock: no offer may start once the destructor began (R16).
    halted_.store(true, std::memory_order_release);
    std::vector<std::shared_ptr<Lane>> all;
    {
      sync::MutexLock lock(mu_);
      stopped_ = true;
      for (auto& [key, lane] : lanes_) all.push_back(lane);
      lanes_.clear();
      all.insert(all.end(), retired_.begin(), retired_.end());
      retired_.clear();
    }
    for (auto& lane : all) {
      {
        sync::MutexLock lane_lock(lane->mu);
        lane->stop = true;
        lane->stopping.store(true, std::memory_order_release);
        lane->wake.notify_one();
      }
      if (lane->thread.joinable()) lane->thread.join();
    }
  }

 private:
  void reap_finished() REQUIRES(mu_) {
    std::vector<std::shared_ptr<Lane>> keep;
    for (auto& lane : retired_) {
      bool finished;
      {
        sync::MutexLock lane_lock(lane->mu);
        finished = lane->finished;
      }
      if (finished && lane->thread.joinable()) {
        lane->thread.join();
      } else {
        keep.push_back(lane);
      }
    }
    retired_.swap(keep);
  }

  void run(Lane& lane) {
    TopicLog& log = *lane.s->log();
    bool asleep = false;  // registered on log (add_sleeper) by deliver_while_awake
    for (;;) {
      bool stop = false;
      {
        sync::MutexLock lock(lane.mu);
        if (!lane.pending && !lane.stop && lane.recheck) {
          lane.wake.wait_for(lane.mu, *lane.recheck);  // a publish or stop ends it early
        } else {
          while (!lane.pending && !lane.stop) lane.wake.wait(lane.mu);
          lane.spin.woken_at(sync::spin_clock_ns());
        }
        stop = lane.stop;
        lane.pending = false;
        lane.recheck.reset();
      }
      if (asleep) {
        log.remove_sleeper();  // awake: publishers need not notify it until it sleeps again
        asleep = false;
      }
      if (stop || !deliver_while_awake(lane, log)) break;
      asleep = true;
    }
    sync::MutexLock lock(lane.mu);
    lane.finished = true;
  }

  // Looks for work until the lane may sleep: after nothing was left, a raise or a publish
  // (the log's end moved) during the spin, or one that registering or try_sleep finds, means
  // look again (no publisher woke the lane: it was awake). Returns false when the lane must
  // stop, true when it is registered on log as a sleeper (publishers notify it from now on).
  bool deliver_while_awake(Lane& lane, TopicLog& log) {
    WakeSignal& wake = lane.s->wake;
    for (;;) {
      wake.look();  // before looking: a raise from here on is seen by this look or the next
      // Likewise a publish: publishers do not raise while no lane of the log is registered,
      // so the end this look began at is how the lane finds out about one after it.
      const Offset seen = log.end();
      const auto published = [&log, seen] { return log.end() != seen; };
      if (!deliver_until_idle(lane)) return false;
      bool waits;
      {
        sync::MutexLock lock(lane.mu);
        waits = lane.recheck.has_value();
      }
      // A returned message waiting out its back-off (R24): no spin, the recheck sleep.
      if (!waits) {
        if (wake.spin_for_raise(published)) continue;
        lane.spin.idle_from(sync::spin_clock_ns());
        if (lane.spin.extra_ns() > 0 && wake.spin_longer(lane.spin.extra_ns(), published)) {
          lane.spin.woken_at(sync::spin_clock_ns());
          continue;
        }
      }
      // Registered first, then the end once more: a publish after that read sees the
      // registration and notifies (TopicLog::add_sleeper), one before it moved the end.
      if (log.add_sleeper() == seen && wake.try_sleep()) return true;
      log.remove_sleeper();
    }
  }

  // Offers until nothing is left. A failure is retried at once (most are transient); a
  // second failure in a row waits retry_backoff first, so a failing handler cannot spin.
  // Returns false when the lane must stop.
  bool deliver_until_idle(Lane& lane) {
    int failures_in_a_row = 0;
    const std::function<bool()> may_go_on = [this, &lane] {
      return !lane.stopping.load(std::memory_order_acquire) &&
             !halted_.load(std::memory_order_acquire);
    };
    for (;;) {
      if (lane.stopping.load(std::memory_order_acquire) || halted_.load(std::memory_order_acquire))
        return false;  // drop pending work
      const OfferRun run = offer_batch(lane.s, kRun, may_go_on, on_progress_);
      const OfferResult r = run.next.value_or(run.last);
      if (r == OfferResult::kFailed) {
        // A confirmation before the call's closing failures ended the row before them.
        if (run.offers > run.failed_in_a_row) failures_in_a_row = 0;
        failures_in_a_row += run.failed_in_a_row;
      }
      if (r == OfferResult::kFailed && failures_in_a_row >= 2) {
        failures_in_a_row = 0;
        {
          sync::MutexLock lock(lane.s->mu);
          lane.s->offers.set_backing_off(true);
        }
        on_progress_();
        {
          sync::MutexLock lock(lane.mu);
          // Only stop ends the back-off early: a publish, seek or join in the meantime
          // wakes the lane (pending) but must not re-offer the failing message early (R15).
          const Millis until = sync::steady_now() + backoff_;
          for (Millis now = sync::steady_now(); !lane.stop && now < until;
               now = sync::steady_now()) {
            lane.wake.wait_for(lane.mu, until - now);
          }
          if (lane.stop) return false;
        }
        sync::MutexLock lock(lane.s->mu);
        lane.s->offers.set_backing_off(false);
        continue;
      }
      on_progress_();
      if (r == OfferResult::kFailed) continue;  // the first failure in a row: again at once
      failures_in_a_row = 0;
      if (r == OfferResult::kConfirmed || r == OfferResult::kIgnored) continue;
      if (r == OfferResult::kNothing) {
        const std::optional<Millis> recheck = wait_recheck(*lane.s);
        sync::MutexLock lock(lane.mu);
        lane.recheck = recheck;
      }
      return r != OfferResult::kGone;
    }
  }

  // Offers per call (offer_batch, whose runs grow 1, 2, 4, ... up to kMaxRun messages, each
  // taken and applied at once): enough for a busy lane to lock its subscription twice per
  // kMaxRun messages most of the time.
  static constexpr int kRun = 1024;
  const Millis backoff_;
  // stop() began; read by every lane between offers. Release/acquire, as Lane::stopping.
  sync::Atomic<bool> halted_{false};
  const std::function<void()> on_progress_;
  sync::Mutex mu_;
  std::map<const SubscriptionState*, std::shared_ptr<Lane>> lanes_ GUARDED_BY(mu_);
  std::vector<std::shared_ptr<Lane>> retired_ GUARDED_BY(mu_);
  bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace

std::unique_ptr<Dispatcher> make_lane_dispatcher(const DispatcherOptions& options,
                                                 std::function<void()> on_progress) {
  return std::make_unique<LaneDispatcher>(options, std::move(on_progress));
}

}  // namespace broker
