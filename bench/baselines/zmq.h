// ZeroMQ inproc PUB/SUB: one PUB socket, one SUB socket and thread per subscriber.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "../common.h"

namespace bench {

/// libzmq inproc PUB/SUB with unlimited high-water marks (nothing is dropped). Construction
/// waits until every subscriber receives (ZeroMQ's slow-joiner handshake). Single publisher
/// thread only (ZeroMQ sockets are not thread-safe). Failed calls are retried.
class ZmqFanOut {
 public:
  static constexpr const char* kName = "zmq";

  /// Binds, connects `subscribers` SUB sockets and waits until each one receives.
  ZmqFanOut(std::size_t subscribers, const HandlerFactory& make)
      : pub_(ctx_, zmq::socket_type::pub) {
    static std::atomic<int> instance{0};
    const std::string endpoint = "inproc://bench-" + std::to_string(instance++);
    pub_.set(zmq::sockopt::sndhwm, 0);
    pub_.set(zmq::sockopt::linger, 0);
    pub_.bind(endpoint);
    for (std::size_t i = 0; i < subscribers; ++i) {
      auto s = std::make_unique<Sub>(ctx_);
      s->handler = make(i);
      s->socket.set(zmq::sockopt::rcvhwm, 0);
      s->socket.set(zmq::sockopt::linger, 0);
      s->socket.set(zmq::sockopt::subscribe, "");
      s->socket.connect(endpoint);
      subs_.push_back(std::move(s));
    }
    for (auto& s : subs_) s->thread = std::thread([sp = s.get()] { run(*sp); });
    // Slow joiner: send 1-byte probes until every subscriber has seen one.
    for (;;) {
      std::size_t ready = 0;
      for (auto& s : subs_) ready += s->ready.load(std::memory_order_acquire) ? 1 : 0;
      if (ready == subs_.size()) break;
      pub_.send(zmq::buffer("p", 1), zmq::send_flags::none);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  /// Sends the empty stop message; each subscriber stops when it reaches it.
  ~ZmqFanOut() {
    for (auto& s : subs_) s->stop.store(true, std::memory_order_relaxed);
    pub_.send(zmq::message_t(), zmq::send_flags::none);
    for (auto& s : subs_) s->thread.join();
  }
  ZmqFanOut(const ZmqFanOut&) = delete;
  ZmqFanOut& operator=(const ZmqFanOut&) = delete;

  /// Sends one copy of payload; ZeroMQ fans it out. REQUIRES: one publishing thread.
  void publish(std::string_view payload) {
    pub_.send(zmq::buffer(payload.data(), payload.size()), zmq::send_flags::none);
  }

 private:
  struct Sub {
    explicit Sub(zmq::context_t& ctx) : socket(ctx, zmq::socket_type::sub) {}
    zmq::socket_t socket;
    SubHandler handler;
    std::atomic<bool> ready{false};
    std::atomic<bool> stop{false};  // set before the stop message: drop the backlog
    std::thread thread;
  };

  static void run(Sub& s) {
    zmq::message_t m;
    for (;;) {
      if (!s.socket.recv(m, zmq::recv_flags::none)) continue;
      if (m.size() == 0) return;
      if (m.size() == 1) {
        s.ready.store(true, std::memory_order_release);
        continue;
      }
      if (s.stop.load(std::memory_order_relaxed)) continue;
      const std::string_view payload(static_cast<const char*>(m.data()), m.size());
      while (!s.handler(payload)) {
      }
    }
  }

  zmq::context_t ctx_;
  zmq::socket_t pub_;
  std::vector<std::unique_ptr<Sub>> subs_;
};

}  // namespace bench
