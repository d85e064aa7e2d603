#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "dispatcher.h"
#include "offer.h"

namespace broker {
namespace {

constexpr int kBatch = 32;  // offers per task before the subscription goes to the back

/// A subscription's place in the pool. Guarded by PoolCore::mu.
struct Entry {
  std::shared_ptr<SubscriptionState> s;
  bool queued = false;   // in the ready queue (at most once)
  bool running = false;  // a worker runs its task (at most one)
  bool again = false;    // notified while running: queue again afterwards
  bool removed = false;
  bool retrying = false;     // failed; requeued at retry_at
  bool failed_last = false;  // the last offer of its previous task was a first failure
  Millis retry_at{0};
};

/// A pool thread and the offer it runs. Guarded by PoolCore::mu.
struct Worker {
  sync::Thread thread;
  std::shared_ptr<SubscriptionState> current;
  std::uint64_t token = 0;
  Millis started{0};
  bool abandoned = false;  // its handler overran; a replacement took its place
  // The same, readable between offers without mu. Release/acquire: the worker that sees it
  // returns; what it must not touch any more is guarded by mu, not published through this.
  sync::Atomic<bool> abandoned_now{false};
  // The running offer follows a failure in its row (R15): if it overruns, that overrun is the
  // second failure in a row, and the timer backs off instead of re-offering at once.
  // Release/acquire: the timer reads it with mu held, after the worker stored it for the
  // offer that overran; a stale value only picks the wrong back-off, never a lost message.
  sync::Atomic<bool> follows_failure{false};
};

/// An offer the watchdog abandoned, and whether it was the second failure in a row.
struct Victim {
  std::shared_ptr<SubscriptionState> s;
  std::uint64_t token = 0;
  bool second_in_row = false;
};

/// State shared by the pool's threads; kept alive by abandoned threads that outlive it.
/// Lock order: a subscription's mu is never taken while holding mu (abandon drops it).
struct PoolCore : std::enable_shared_from_this<PoolCore> {
  PoolCore(const DispatcherOptions& o, std::function<void()> p)
      : options(o), on_progress(std::move(p)) {}
  const DispatcherOptions options;
  const std::function<void()> on_progress;
  sync::Mutex mu;
  sync::CondVar ready;  // the queue grew, or stop
  sync::CondVar tick;   // wakes the timer thread at stop
  std::deque<std::shared_ptr<Entry>> queue GUARDED_BY(mu);
  std::map<const SubscriptionState*, std::shared_ptr<Entry>> entries GUARDED_BY(mu);
  std::vector<std::shared_ptr<Worker>> workers GUARDED_BY(mu);
  std::vector<std::shared_ptr<Entry>> retry_list GUARDED_BY(mu);  // entries backing off
  bool stop GUARDED_BY(mu) = false;
  // stop, readable between offers without mu. Release/acquire, as abandoned_now.
  sync::Atomic<bool> stopping{false};
  sync::Thread timer;

  void enqueue(const std::shared_ptr<Entry>& e) REQUIRES(mu) {
    if (e->removed || e->queued || e->retrying) return;
    if (e->running) {
      e->again = true;
      return;
    }
    e->queued = true;
    queue.push_back(e);
    ready.notify_one();
  }

  void start_worker() REQUIRES(mu) {
    auto w = std::make_shared<Worker>();
    auto self = shared_from_this();
    w->thread = sync::Thread([self, w] { self->work(*w); });
    workers.push_back(w);
  }

  /// Reports offer start/end of one worker for the timeout watchdog.
  class Watch final : public OfferWatch {
   public:
    Watch(PoolCore& core, Worker& w) : core_(core), w_(w) {}
    void started(const std::shared_ptr<SubscriptionState>& s, std::uint64_t token) override {
      sync::MutexLock lock(core_.mu);
      w_.current = s;
      w_.token = token;
      w_.started = sync::steady_now();
    }
    void ended() override {
      sync::MutexLock lock(core_.mu);
      w_.current = nullptr;
    }

   private:
    PoolCore& core_;
    Worker& w_;
  };

  void work(Worker& w) {
    Watch watch(*this, w);
    for (;;) {
      std::shared_ptr<Entry> e = next_task(w);
      if (!e) return;
      if (!finish_task(w, e, run_task(w, *e, watch))) return;
    }
  }

  // Waits for a ready subscription and marks it running; null when the worker must exit.
  std::shared_ptr<Entry> next_task(Worker& w) EXCLUDES(mu) {
    sync::MutexLock lock(mu);
    while (!stop && !w.abandoned && queue.empty()) ready.wait(mu);
    if (stop || w.abandoned) return nullptr;
    std::shared_ptr<Entry> e = queue.front();
    queue.pop_front();
    e->queued = false;
    e->running = true;
    return e;
  }

  /// How a task ended.
  struct TaskEnd {
    OfferResult last = OfferResult::kNothing;
    int done = 0;                   // offers made
    bool back_off = false;          // a second failure in a row: wait retry_backoff (R15)
    std::optional<Millis> recheck;  // nothing now, but a returned message waits (R24)
  };

  // Runs up to kBatch offers of one subscription, with no pool lock held. A failure is
  // re-offered at once, a second failure in a row backs off, also across a batch boundary.
  // An abandoned worker stops at once (its replacement owns the subscription now), and so
  // does every worker once the pool stops (only the running handler call may finish).
  TaskEnd run_task(Worker& w, Entry& e, Watch& watch) EXCLUDES(mu) {
    {
      sync::MutexLock s_lock(e.s->mu);
      e.s->offers.set_backing_off(false);
    }
    e.s->wake.look();  // before looking
    TaskEnd end;
    bool failed_once = e.failed_last;  // written by finish_task under mu before we ran
    // Between two offers of one run: the second follows a confirmation, not a failure.
    const std::function<bool()> may_go_on = [this, &w] {
      if (stopping.load(std::memory_order_acquire) ||
          w.abandoned_now.load(std::memory_order_acquire)) {
        return false;
      }
      w.follows_failure.store(false, std::memory_order_release);
      return true;
    };
    while (end.done < kBatch) {
      if (stopping.load(std::memory_order_acquire)) return end;
      w.follows_failure.store(failed_once, std::memory_order_release);
      const OfferRun run = offer_run(e.s, &watch, kBatch - end.done, may_go_on, on_progress);
      end.done += run.offers;
      end.last = run.next.value_or(run.last);
      if (run.offers > 1) failed_once = false;  // a run's offers but its last confirmed
      on_progress();
      if (w.abandoned_now.load(std::memory_order_acquire)) return end;
      if (end.last == OfferResult::kFailed) {
        if (failed_once) {
          end.back_off = true;
          break;
        }
        failed_once = true;
        continue;
      }
      if (end.last != OfferResult::kConfirmed && end.last != OfferResult::kIgnored) break;
      failed_once = false;
    }
    if (end.back_off) {
      sync::MutexLock s_lock(e.s->mu);
      e.s->offers.set_backing_off(true);
    }
    if (end.last == OfferResult::kNothing) end.recheck = wait_recheck(*e.s);
    return end;
  }

  // Ends a task: schedules a retry after a second failure in a row, or requeues if more may
  // be waiting. Returns false when the worker must exit.
  bool finish_task(Worker& w, const std::shared_ptr<Entry>& e, const TaskEnd& end) EXCLUDES(mu) {
    bool failed = false;
    {
      sync::MutexLock lock(mu);
      if (w.abandoned) return false;  // the timer failed our offer and requeued e already
      e->running = false;
      e->failed_last = end.last == OfferResult::kFailed && !end.back_off;
      // Busy: an abandoned handler's late offer still runs; look again after a backoff
      // rather than drop the subscription from the pool.
      if (end.back_off || end.last == OfferResult::kBusy) {
        e->retrying = true;
        e->retry_at = sync::steady_now() + std::max(options.retry_backoff, Millis{1});
        retry_list.push_back(e);
        tick.notify_one();  // the timer may be asleep with nothing to retry
        failed = true;
      } else if (end.done == kBatch || e->again || e->failed_last) {
        enqueue(e);
      } else if (end.recheck) {
        // R24: look again when the wait ends (at most kWaitRecheck later: the clock may be
        // moved by hand); a publish meanwhile waits for that look too.
        e->retrying = true;
        e->retry_at = sync::steady_now() + *end.recheck;
        retry_list.push_back(e);
        tick.notify_one();
      } else if (!e->s->wake.try_sleep()) {
        enqueue(e);  // raised since the task's look: publishers did not queue it (awake)
      }
      e->again = false;
    }
    if (failed) on_progress();
    return true;
  }

  // Requeues subscriptions whose backoff ended and abandons overrunning handlers.
  void run_timer() {
    const Millis timeout = options.handler_timeout;
    Millis period = std::max(Millis{1}, options.retry_backoff);
    if (timeout.count() > 0) period = std::min(period, std::max(Millis{1}, timeout / 4));
    for (;;) {
      std::vector<std::shared_ptr<Entry>> due;
      std::vector<Victim> victims;
      if (!collect_timer_work(period, due, victims)) return;
      // Without the pool lock: subscription locks come first in the lock order.
      for (auto& e : due) {
        sync::MutexLock s_lock(e->s->mu);
        e->s->offers.set_backing_off(false);
      }
      for (const Victim& v : victims) {
        abandon_offer(*v.s, v.token);
        if (!v.second_in_row) continue;
        sync::MutexLock s_lock(v.s->mu);
        v.s->offers.set_backing_off(true);
      }
      if (!victims.empty()) on_progress();
      sync::MutexLock lock(mu);
      for (auto& e : due) enqueue(e);
      // An overrun is a failure of its row like any other (R15): the first is re-offered at
      // once, a second waits retry_backoff.
      const Millis now = sync::steady_now();
      for (const Victim& v : victims) {
        auto it = entries.find(v.s.get());
        if (it == entries.end()) continue;
        Entry& e = *it->second;
        e.running = false;
        e.again = false;
        e.failed_last = !v.second_in_row;
        e.retrying = false;
        if (!v.second_in_row) {
          enqueue(it->second);
          continue;
        }
        e.retrying = true;
        e.retry_at = now + std::max(options.retry_backoff, Millis{1});
        retry_list.push_back(it->second);
      }
    }
  }

  // Sleeps until the earliest retry is due (or one watchdog period when handler timeouts
  // are on; with neither, until woken), then lists retries that are due and offers that
  // overran (their workers are replaced). Idle pools do not wake. Returns false at stop.
  bool collect_timer_work(Millis period, std::vector<std::shared_ptr<Entry>>& due,
                          std::vector<Victim>& victims) EXCLUDES(mu) {
    const Millis timeout = options.handler_timeout;
    sync::MutexLock lock(mu);
    if (!stop) {
      Millis sleep = timeout.count() > 0 ? period : Millis::max();
      const Millis before = sync::steady_now();
      for (const auto& e : retry_list)
        sleep = std::min(sleep, std::max(Millis{0}, e->retry_at - before));
      if (sleep == Millis::max()) {
        tick.wait(mu);
      } else if (sleep.count() > 0) {
        tick.wait_for(mu, sleep);
      }
    }
    if (stop) return false;
    const Millis now = sync::steady_now();
    std::vector<std::shared_ptr<Entry>> later;
    for (auto& e : retry_list) {
      if (!e->retrying || e->removed) continue;  // requeued by an abandon, or unsubscribed
      if (e->retry_at <= now) {
        e->retrying = false;
        due.push_back(e);
      } else {
        later.push_back(e);
      }
    }
    retry_list.swap(later);
    if (timeout.count() <= 0) return true;
    std::size_t replaced = 0;
    for (auto& w : workers) {
      if (w->current && !w->abandoned && now - w->started > timeout) {
        w->abandoned = true;
        w->abandoned_now.store(true, std::memory_order_release);
        victims.push_back(
            {w->current, w->token, w->follows_failure.load(std::memory_order_acquire)});
        w->thread.detach();  // it may never return; it holds the core alive
        ++replaced;
      }
    }
    std::erase_if(workers, [](const std::shared_ptr<Worker>& w) { return w->abandoned; });
    // Only now: start_worker() grows `workers`, which the loop above walked.
    for (std::size_t i = 0; i < replaced; ++i) start_worker();
    return true;
  }
};

/// A fixed pool of threads shared by every push subscription (SPEC R15).
class PoolDispatcher final : public Dispatcher {
 public:
  PoolDispatcher(const DispatcherOptions& options, std::function<void()> on_progress)
      : core_(std::make_shared<PoolCore>(options, std::move(on_progress))) {
    sync::MutexLock lock(core_->mu);
    for (std::size_t i = 0; i < std::max<std::size_t>(1, options.pool_threads); ++i) {
      core_->start_worker();
    }
    auto core = core_;
    core_->timer = sync::Thread([core] { core->run_timer(); });
  }
  ~PoolDispatcher() override { stop(); }

  bool synchronous() const override { return false; }

  void attach(const std::shared_ptr<SubscriptionState>& s) override {
    sync::MutexLock lock(core_->mu);
    auto e = std::make_shared<Entry>();
    e->s = s;
    core_->entries[s.get()] = e;
    core_->enqueue(e);
  }

  void detach(const std::shared_ptr<SubscriptionState>& s) override {
    sync::MutexLock lock(core_->mu);
    auto it = core_->entries.find(s.get());
    if (it == core_->entries.end()) return;
    it->second->removed = true;
    core_->entries.erase(it);
  }

  void notify(const std::shared_ptr<SubscriptionState>& s) override {
    if (s->wake.raise()) return;  // already woken
    sync::MutexLock lock(core_->mu);
    auto it = core_->entries.find(s.get());
    if (it != core_->entries.end()) core_->enqueue(it->second);
  }

  void stop() override {
    std::vector<std::shared_ptr<Worker>> workers;
    // First, before any lock: no offer may start once the destructor began (R16).
    core_->stopping.store(true, std::memory_order_release);
    {
      sync::MutexLock lock(core_->mu);
      if (core_->stop) return;
      core_->stop = true;
      core_->ready.notify_all();
      core_->tick.notify_all();
    }
    if (core_->timer.joinable()) core_->timer.join();
    {
      sync::MutexLock lock(core_->mu);
      workers = core_->workers;  // after the timer: it may have replaced workers
    }
    for (auto& w : workers) {
      if (w->thread.joinable()) w->thread.join();
    }
  }

 private:
  std::shared_ptr<PoolCore> core_;
};

}  // namespace

std::unique_ptr<Dispatcher> make_pool_dispatcher(const DispatcherOptions& options,
                                                 std::function<void()> on_progress) {
  return std::make_unique<PoolDispatcher>(options, std::move(on_progress));
}

}  // namespace broker
