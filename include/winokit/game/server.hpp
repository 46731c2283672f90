// The game's HTTP server: a JSON API over a Game and the web pages compiled into the binary.
//
//   winokit::GameServer server(game, {});          // 127.0.0.1:8080
//   server.run([](int port) { /* listening */ });  // blocks until stop()
//
// Sessions live in an HttpOnly, SameSite=Strict cookie (`wk_session`); every state-changing
// request (POST) needs the session's CSRF token in the `X-CSRF-Token` header, a JSON body
// (Content-Type application/json) no larger than `max_body`, and an Origin, when the browser
// sends one, whose scheme, host and port match the server's (the Host header; the scheme is
// http, or behind a trusted proxy its X-Forwarded-Proto). Token buckets limit requests per account
// and per address, and register/login attempts per address. Errors are JSON: {"error": {"code",
// "message"}} with a 4xx status; an unexpected failure is a 500 with the same shape, and the server
// keeps going. A GameError's kind becomes its status through one table (http_status).
//
// The network side is GNU libmicrohttpd: event-driven I/O threads read and write every
// connection without blocking, so slow or idle clients hold a socket, never a thread. A body is
// capped at `max_body` bytes however it is framed (Content-Length or chunked: 413, nothing
// buffered beyond the cap); the complete request head and body must arrive within
// `request_seconds` (the connection is closed otherwise); connections are capped in total and
// per address (behind a trusted proxy: requests in flight per forwarded address); complete
// requests run on a bounded pool of `threads` workers with a bounded queue (503 when full).
// Routing is by path segments, never a backtracking regex; a request target (path and query)
// over 4096 bytes is answered 414 before any routing.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "winokit/game/game.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;     // 0: any free port (reported to on_ready)
  int threads = 16;    // workers running requests (database, password hashing)
  int io_threads = 2;  // event loops reading and writing the connections
  std::size_t max_body = 64 * 1024;
  int request_seconds = 10;              // deadline for a request's complete head and body
  int max_connections = 4096;            // open connections in total
  int max_connections_per_address = 64;  // per client address; behind a proxy, requests in
                                         // flight per forwarded address
  int max_queue = 1024;                  // complete requests waiting for a worker (then 503)
  double account_rate = 20, account_burst = 60;    // requests per second per signed-in account
  double address_rate = 200, address_burst = 400;  // requests per second per client address
  double auth_per_minute = 20;                     // register + login per address
  bool secure_cookie = false;                      // add `Secure` (when served over HTTPS)
  // Behind a reverse proxy: rate-limit and cap by the address the proxy appends to
  // X-Forwarded-For, and take the scheme from X-Forwarded-Proto.
  bool trust_proxy = false;
  // The origin players reach the game at ("https://game.example.org"). Requests naming another
  // Host are refused (403 bad_host), and an Origin must be this one. Empty: the Host must be an
  // IP address or localhost, so a DNS-rebinding page (evil.example resolving to this server)
  // is refused.
  std::string public_origin;
};

// The HTTP status of a refused request of this kind: Invalid 400, Unauthorized 401, Forbidden
// 403, NotFound 404, WrongMethod 405, Conflict 409, Gone 410, TooLarge 413, WrongMediaType 415,
// RateLimited 429, Internal 500, Busy 503.
int http_status(GameErrorKind kind);

// One HTTP request and its reply, without the network (tests, fuzzing).
struct HttpRequest {
  std::string method, path;  // path: percent-decoded, without the query
  std::vector<std::pair<std::string, std::string>> headers, params;  // params: the query's
  std::string body, remote_addr;
  std::string header(const std::string& name) const;  // case-insensitive; "" when absent
};
struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body, content_type;
  // When set, the body is this file (images): sent from the file on the wire, with no copy per
  // connection; handle() leaves `body` empty.
  std::filesystem::path file;
};

class GameServer {
 public:
  GameServer(Game& game, ServerOptions options);
  ~GameServer();
  // Binds, calls on_ready(port) and serves until stop(). A port another socket listens on is a
  // UsageError ("address already in use"; no SO_REUSEPORT, so two servers never share a port);
  // other failures to listen are IoError.
  void run(const std::function<void(int)>& on_ready = {});
  void stop();
  // Routes one request as if it had arrived on a connection (rate limits included).
  HttpResponse handle(const HttpRequest& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The web assets served at "/", "/app.js", "/style.css" and "/favicon.svg".
struct WebAsset {
  const char* path;
  const char* content_type;
  const char* body;
};
const std::vector<WebAsset>& web_assets();

}  // namespace winokit
