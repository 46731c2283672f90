#include "winokit/core/error.hpp"

namespace winokit {

namespace {
std::string with_hint(const std::string& message, const std::string& hint) {
  return hint.empty() ? message : message + " (" + hint + ")";
}
}  // namespace

Error::Error(const std::string& message, std::string hint)
    : std::runtime_error(with_hint(message, hint)), hint_(std::move(hint)) {}

std::string format_location(const Location& where) {
  std::string out = where.file;
  if (where.line > 0) out.append(":").append(std::to_string(where.line));
  if (!where.field.empty()) out.append(": field '").append(where.field).append("'");
  return out;
}

InputError::InputError(Location where, const std::string& problem, std::string hint)
    : Error(format_location(where) + ": " + problem, std::move(hint)),
      where_(std::move(where)),
      problem_(problem) {}

}  // namespace winokit
