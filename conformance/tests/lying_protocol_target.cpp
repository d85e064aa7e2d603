// lying_protocol_target: this broker behind the target protocol, lying on purpose in one
// way, so the kit's tests show each lie caught: a wrong answer as a violation (shrunk and
// replayed), a broken line as the engine's failure that names it.
//
//   lying_protocol_target --lie ack2|forget-acks|version|garbage:N|silent:N|wrong-kind:N|exit:N
//
//   ack2          an accepted ack of offset 2 is answered not_holder
//   forget-acks   every ack is answered accepted and never reaches the broker
//   version       the hello says protocol version 2
//   garbage:N     the Nth reply is a line that is not JSON
//   silent:N      the Nth reply is never written (the target keeps reading)
//   wrong-kind:N  the Nth publish is answered done, not its offset
//   exit:N        the target exits instead of writing the Nth reply
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <variant>

#include "conformance/inproc_target.h"
#include "conformance/target_protocol.h"

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "--lie") {
    std::cerr << "usage: lying_protocol_target --lie ack2|forget-acks|version|garbage:N|"
                 "silent:N|wrong-kind:N|exit:N\n";
    return 2;
  }
  const std::string lie = argv[2];
  const std::size_t colon = lie.find(':');
  const std::string kind = lie.substr(0, colon);
  const std::uint64_t nth = colon == std::string::npos ? 0 : std::stoull(lie.substr(colon + 1));

  conformance::Hello hello;
  hello.name = "liar";
  hello.serves = conformance::protocol_features();
  hello.workers = true;
  std::string hello_line = conformance::encode_hello(hello);
  if (kind == "version") hello_line.replace(hello_line.find("\"version\":1"), 11, "\"version\":2");
  std::cout << hello_line << std::endl;

  conformance::InProcTarget target;
  std::map<std::uint32_t, std::unique_ptr<conformance::Target>> workers;
  std::uint64_t replies = 0;
  std::uint64_t publishes = 0;
  for (std::string line; std::getline(std::cin, line);) {
    const conformance::Request request = conformance::decode_request(line);
    conformance::Target* t = &target;
    if (request.worker > 0) {
      std::unique_ptr<conformance::Target>& w = workers[request.worker];
      if (!w) w = target.worker();
      t = w.get();
    }
    conformance::Reply reply;
    reply.id = request.id;
    const auto* ack = std::get_if<oplang::Ack>(&request.op);
    if (kind == "forget-acks" && ack != nullptr) {
      reply.outcome = oplang::Outcome{std::nullopt, model::AckResult{}, {}};
    } else if (const auto* s = std::get_if<oplang::GetStats>(&request.op)) {
      reply.outcome = oplang::Outcome{std::nullopt, *t->stats(s->topic, s->name), {}};
    } else {
      reply.outcome = t->step(request.op);
    }
    if (kind == "ack2" && ack != nullptr && ack->offset == 2 && !reply.outcome->error &&
        oplang::accepted(reply.outcome->value) == true) {
      reply.outcome->value = model::AckResult{model::AckOutcome::kNotHolder};
    }
    ++replies;
    if (kind == "wrong-kind" && std::holds_alternative<oplang::Publish>(request.op) &&
        ++publishes == nth) {
      reply.outcome = oplang::Outcome{};
    }
    if (replies == nth) {
      if (kind == "garbage") {
        std::cout << "<html>502 Bad Gateway</html>" << std::endl;
        continue;
      }
      if (kind == "silent") continue;
      if (kind == "exit") return 1;
    }
    std::cout << conformance::encode_protocol_reply(reply) << std::endl;
  }
  return 0;
}
