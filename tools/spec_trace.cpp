// spec-trace SCRIPT: runs a text script on the model and on the broker, prints what each
// step returned and delivered, and marks the first difference.
// Exit status: 0 identical, 1 a difference, 2 unreadable or malformed script.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "harness/broker_runner.h"
#include "oplang/model_runner.h"
#include "oplang/text.h"

namespace {

// Indents every line after the first so multi-line outcomes stay under their step.
std::string indent(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: spec-trace SCRIPT\n";
    return 2;
  }
  const std::string path = argv[1];
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << path << ": cannot open\n";
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  oplang::Script script;
  try {
    script = oplang::parse(text.str());
  } catch (const oplang::ParseError& e) {
    std::cerr << path << ":" << e.what() << "\n";
    return 2;
  }
  oplang::ModelRunner model;
  harness::BrokerRunner broker;
  for (std::size_t i = 0; i < script.size(); ++i) {
    const oplang::Outcome m = model.step(script[i]);
    const oplang::Outcome b = broker.step(script[i]);
    std::cout << "[" << i + 1 << "] " << oplang::print(script[i]) << "\n";
    if (m == b) {
      std::cout << "    " << indent(oplang::print(m)) << "\n";
      continue;
    }
    std::cout << "*** FIRST DIFFERENCE at step " << i + 1 << "\n"
              << "    model:  " << indent(oplang::print(m)) << "\n"
              << "    broker: " << indent(oplang::print(b)) << "\n";
    return 1;
  }
  std::cout << "identical: " << script.size() << " steps\n";
  return 0;
}
