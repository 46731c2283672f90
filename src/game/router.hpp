// The game server's router (private to src/game): routes by path segments in one pass over the
// path, without regular expressions (std::regex recursed once per character and overflowed a
// worker's stack on a 26,000-character path; issue 23).
//
//   Router r;
//   r.add("POST", "/api/rounds/{id}/submit", handler);  // {id}: one segment of digits
//   r.add("GET", "/images/*", handler);                 // *: the non-empty rest of the path
//   const Router::Match m = r.match("POST", "/api/rounds/12/submit");  // m.captures == {"12"}
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace winokit {

struct HttpRequest;
struct HttpResponse;

// The longest request target (path and query) the server routes; longer ones get 414.
inline constexpr std::size_t kMaxTargetBytes = 4096;

class Router {
 public:
  using Handler =
      std::function<void(const HttpRequest&, const std::vector<std::string>&, HttpResponse&)>;

  // pattern: "/"-separated segments; a literal, "{id}" (one non-empty segment of ASCII digits)
  // or, last only, "*" (the non-empty rest of the path, slashes included).
  void add(std::string method, const std::string& pattern, Handler handler);

  struct Match {
    const Handler* handler = nullptr;  // null: no route for this method
    bool path_known = false;           // some route has this path (another method: 405)
    std::vector<std::string> captures;
  };
  // Linear in the path's length; no recursion.
  Match match(std::string_view method, std::string_view path) const;

 private:
  enum class Kind { Literal, Digits, Rest };
  struct Segment {
    Kind kind;
    std::string text;
  };
  struct Route {
    std::string method;
    std::vector<Segment> segments;
    Handler handler;
  };
  static bool matches(const Route& route, std::string_view path, std::vector<std::string>& out);
  std::vector<Route> routes_;
};

}  // namespace winokit
