// The serving side of the target protocol (conformance/protocol_server.h).
#include "conformance/protocol_server.h"

#include <map>
#include <memory>
#include <string>
#include <variant>

namespace conformance {

int serve_protocol(Target& target, const Hello& hello, std::istream& in, std::ostream& out,
                   std::ostream& errors) {
  out << encode_hello(hello) << std::endl;
  std::map<std::uint32_t, std::unique_ptr<Target>> workers;
  for (std::string line; std::getline(in, line);) {
    Request request;
    try {
      request = decode_request(line);
    } catch (const ProtocolError& e) {
      errors << "protocol_server: a request that is not the protocol's (" << e.what()
             << "): " << line << "\n";
      return 2;
    }
    Reply reply;
    reply.id = request.id;
    try {
      Target* t = &target;
      if (request.worker > 0) {
        std::unique_ptr<Target>& w = workers[request.worker];
        if (!w) w = target.worker();
        if (!w) throw std::invalid_argument("this target has no workers");
        t = w.get();
      }
      if (const auto* s = std::get_if<oplang::GetStats>(&request.op)) {
        // Target::stats, which a target keeps apart from step.
        const std::optional<model::Stats> stats = t->stats(s->topic, s->name);
        if (!stats) throw std::invalid_argument("this target keeps no stats");
        reply.outcome = oplang::Outcome{std::nullopt, *stats, {}};
      } else {
        reply.outcome = t->step(request.op);
      }
      reply.ahead_ms = t->lag();
    } catch (const std::exception& e) {  // std::invalid_argument, TargetFailure
      reply.outcome.reset();
      reply.failure = e.what();
    }
    out << encode_protocol_reply(reply) << std::endl;
  }
  return 0;
}

}  // namespace conformance
