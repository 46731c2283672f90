// The game's HTTP server: a JSON API over a Game and the web pages compiled into the binary.
//
//   winokit::GameServer server(game, {});          // 127.0.0.1:8080
//   server.run([](int port) { /* listening */ });  // blocks until stop()
//
// Sessions live in an HttpOnly, SameSite=Strict cookie (`wk_session`); every state-changing
// request (POST) needs the session's CSRF token in the `X-CSRF-Token` header, a JSON body
// (Content-Type application/json) no larger than `max_body`, and an Origin, when the browser
// sends one, that matches the Host. Token buckets limit requests per account and per address,
// and register/login attempts per address. Errors are JSON: {"error": {"code", "message"}} with
// a 4xx status; an unexpected failure is a 500 with the same shape, and the server keeps going.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "winokit/game.hpp"

namespace winokit {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (reported to on_ready)
  int threads = 64;
  std::size_t max_body = 64 * 1024;
  double account_rate = 20, account_burst = 60;    // requests per second per signed-in account
  double address_rate = 200, address_burst = 400;  // requests per second per client address
  double auth_per_minute = 20;                     // register + login per address
  bool secure_cookie = false;                      // add `Secure` (when served over HTTPS)
  // Behind a reverse proxy: rate-limit by the address the proxy appends to X-Forwarded-For.
  bool trust_proxy = false;
};

class GameServer {
 public:
  GameServer(Game& game, ServerOptions options);
  ~GameServer();
  // Binds, calls on_ready(port) and serves until stop(). Throws IoError when it cannot bind.
  void run(const std::function<void(int)>& on_ready = {});
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The web assets served at "/", "/app.js" and "/style.css".
struct WebAsset {
  const char* path;
  const char* content_type;
  const char* body;
};
const std::vector<WebAsset>& web_assets();

}  // namespace winokit
