// inproc_protocol_target: this broker, in memory, behind the target protocol on stdin and
// stdout (conformance/target_protocol.h): the reference every other protocol target can be
// read against, and what `scripts/conformance exec -- build/default/conformance/
// inproc_protocol_target` judges like `scripts/conformance inproc`.
//
// Its hello serves every feature of protocol 1, workers (the same broker, thread-safe; the
// requests are answered one at a time) and the model's clock (unit_ms 0). Exit: 0 at the
// end of stdin, 2 on a request that is not the protocol's or bad usage.
#include <iostream>
#include <string>

#include "conformance/inproc_target.h"
#include "conformance/protocol_server.h"

int main(int argc, char** argv) {
  if (argc > 1) {
    const std::string flag = argv[1];
    std::ostream& out = flag == "--help" || flag == "-h" ? std::cout : std::cerr;
    out << "usage: inproc_protocol_target   (requests on stdin, replies on stdout: the\n"
           "       conformance kit's target protocol, docs/target-protocol.md)\n";
    return flag == "--help" || flag == "-h" ? 0 : 2;
  }
  conformance::Hello hello;
  hello.name = "inproc";
  hello.serves = conformance::protocol_features();
  hello.workers = true;
  conformance::InProcTarget target;
  return conformance::serve_protocol(target, hello, std::cin, std::cout, std::cerr);
}
