#include "broker/broker_options.h"

#include <utility>

#include "broker/errors.h"

namespace broker {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw InvalidArgument(what);
}

}  // namespace

BrokerOptions BrokerOptions::pool(std::size_t threads, Millis handler_timeout) {
  require(threads > 0, "a pool needs at least one thread");
  require(handler_timeout.count() >= 0, "handler_timeout must be >= 0");
  BrokerOptions o(Dispatcher::kPool);
  o.pool_threads_ = threads;
  o.handler_timeout_ = handler_timeout;
  return o;
}

BrokerOptions BrokerOptions::with_clock(std::shared_ptr<Clock> clock) const {
  require(clock != nullptr, "clock must not be null");
  BrokerOptions o = *this;
  o.clock_ = std::move(clock);
  return o;
}

BrokerOptions BrokerOptions::with_retry_backoff(Millis backoff) const {
  require(dispatcher_ != Dispatcher::kSynchronous,
          "retry_backoff needs a threaded dispatcher (lane or pool)");
  require(backoff.count() >= 0, "retry_backoff must be >= 0");
  BrokerOptions o = *this;
  o.retry_backoff_ = backoff;
  return o;
}

BrokerOptions BrokerOptions::with_auto_expire(Millis period) const {
  require(period.count() > 0, "auto_expire period must be > 0");
  BrokerOptions o = *this;
  o.auto_expire_period_ = period;
  return o;
}

BrokerOptions BrokerOptions::with_storage(StorageOptions storage) const {
  require(!storage.directory.empty(), "storage directory must not be empty");
  for (const FsyncPolicy& p : {storage.publish_sync, storage.commit_sync}) {
    require(p.kind != FsyncPolicy::Kind::kInterval || p.interval.count() > 0,
            "an interval fsync policy needs an interval > 0");
  }
  require(storage.segment_bytes >= 256, "segment_bytes must be >= 256");
  require(storage.journal_compact_bytes >= 1024, "journal_compact_bytes must be >= 1024");
  BrokerOptions o = *this;
  o.storage_ = std::move(storage);
  return o;
}

}  // namespace broker
