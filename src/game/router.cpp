#include "router.hpp"

#include <stdexcept>

namespace winokit {

void Router::add(std::string method, const std::string& pattern, Handler handler) {
  if (pattern.empty() || pattern.front() != '/')
    throw std::logic_error("route pattern must start with '/': " + pattern);
  Route route{std::move(method), {}, std::move(handler)};
  std::size_t pos = 1;
  for (;;) {
    const std::size_t end = std::min(pattern.find('/', pos), pattern.size());
    const std::string part = pattern.substr(pos, end - pos);
    if (!route.segments.empty() && route.segments.back().kind == Kind::Rest)
      throw std::logic_error("'*' must end a route pattern: " + pattern);
    if (part == "{id}") {
      route.segments.push_back({Kind::Digits, {}});
    } else if (part == "*") {
      route.segments.push_back({Kind::Rest, {}});
    } else {
      route.segments.push_back({Kind::Literal, part});
    }
    if (end == pattern.size()) break;
    pos = end + 1;
  }
  routes_.push_back(std::move(route));
}

bool Router::matches(const Route& route, std::string_view path, std::vector<std::string>& out) {
  out.clear();
  if (path.empty() || path.front() != '/') return false;
  std::size_t pos = 1;
  for (std::size_t i = 0; i < route.segments.size(); ++i) {
    const Segment& seg = route.segments[i];
    if (pos > path.size()) return false;  // the path ended before the pattern
    if (seg.kind == Kind::Rest) {
      if (pos == path.size()) return false;
      out.emplace_back(path.substr(pos));
      return true;
    }
    std::size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(pos, end - pos);
    if (seg.kind == Kind::Literal) {
      if (part != seg.text) return false;
    } else {
      if (part.empty()) return false;
      for (const char c : part) {
        if (c < '0' || c > '9') return false;
      }
      out.emplace_back(part);
    }
    pos = end + 1;  // past the '/', or one past the end when the path is done
  }
  return pos == path.size() + 1;
}

Router::Match Router::match(std::string_view method, std::string_view path) const {
  Match m;
  std::vector<std::string> captures;
  for (const Route& r : routes_) {
    if (!matches(r, path, captures)) continue;
    m.path_known = true;
    if (r.method != method) continue;
    m.handler = &r.handler;
    m.captures = std::move(captures);
    return m;
  }
  return m;
}

}  // namespace winokit
