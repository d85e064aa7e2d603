// A short-lived JetStream connection for the nats fixtures' readiness and leader checks
// (nats_server.cpp, nats_cluster.cpp). Internal to the kit.
#pragma once

#include <nats/nats.h>

#include <string>

namespace conformance {

/// Connects to url without reconnects, with `timeout_ms` for the connection and for each
/// JetStream request made through js(). ok() is false if either step failed (the server is
/// not up, or has no JetStream). Closes everything on destruction. Throws nothing.
class JetStreamProbe {
 public:
  JetStreamProbe(const std::string& url, int timeout_ms) {
    natsStatus s = natsOptions_Create(&opts_);
    if (s == NATS_OK) s = natsOptions_SetURL(opts_, url.c_str());
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts_, timeout_ms);
    if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts_, false);
    if (s == NATS_OK) s = natsConnection_Connect(&nc_, opts_);
    if (s == NATS_OK) {
      jsOptions jo;
      jsOptions_Init(&jo);
      jo.Wait = timeout_ms;
      s = natsConnection_JetStream(&js_, nc_, &jo);
    }
    if (s != NATS_OK) js_ = nullptr;
  }
  ~JetStreamProbe() {
    jsCtx_Destroy(js_);
    natsConnection_Destroy(nc_);
    natsOptions_Destroy(opts_);
  }
  JetStreamProbe(const JetStreamProbe&) = delete;
  JetStreamProbe& operator=(const JetStreamProbe&) = delete;

  [[nodiscard]] bool ok() const { return js_ != nullptr; }
  /// The JetStream context (null unless ok()).
  [[nodiscard]] jsCtx* js() const { return js_; }
  /// The connection (null unless ok()).
  [[nodiscard]] natsConnection* nc() const { return js_ != nullptr ? nc_ : nullptr; }

 private:
  natsOptions* opts_ = nullptr;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
};

}  // namespace conformance
