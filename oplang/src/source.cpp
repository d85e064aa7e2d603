// Reading a script or program for the command-line tools.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "oplang/text.h"

namespace oplang {

std::optional<std::string> read_source(const std::string& path, std::ostream& errors) {
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    if (std::cin.bad()) {
      errors << "<stdin>: cannot read\n";
      return std::nullopt;
    }
    return text.str();
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    errors << path << ": is a directory\n";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    errors << path << ": cannot open\n";
    return std::nullopt;
  }
  text << in.rdbuf();
  if (in.bad()) {
    errors << path << ": cannot read\n";
    return std::nullopt;
  }
  return text.str();
}

}  // namespace oplang
