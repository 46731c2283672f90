// GameServer's insides (private to src/game), split by concern:
//   http_util.cpp    token buckets, cookies, JSON replies and fields, security headers
//   router.cpp       routing by path segments (router.hpp)
//   server.cpp       the request pipeline: limits, target length, Origin/CSRF, sessions, errors
//   api_routes.cpp   the routes: one small handler per endpoint
//   http_daemon.cpp  libmicrohttpd: callbacks, the worker queue, the deadline sweeper, run()
#pragma once

#include <microhttpd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "router.hpp"
#include "winokit/game/server.hpp"

namespace winokit {

namespace http {

inline constexpr const char* kCookie = "wk_session";

// Token buckets keyed by account or address.
class RateLimiter {
 public:
  RateLimiter(double rate, double burst) : rate_(rate), burst_(burst) {}
  bool allow(const std::string& key);

 private:
  struct Bucket {
    double tokens;
    std::chrono::steady_clock::time_point last;
  };
  void prune(std::chrono::steady_clock::time_point now);
  double rate_, burst_;
  std::mutex mutex_;
  std::map<std::string, Bucket> buckets_;
};

void send_json(HttpResponse& res, int status, const nlohmann::json& body);
void send_error(HttpResponse& res, GameErrorKind kind, const std::string& code,
                const std::string& message);
void add_security_headers(HttpResponse& res);
std::string cookie_value(const HttpRequest& req, const std::string& name);
std::string lower(std::string s);
std::string content_type_of(const std::filesystem::path& p);
// A route's {id} capture as a number (NotFound beyond 18 digits).
std::int64_t path_id(const std::vector<std::string>& captures);
// JSON body fields: a list of at most 64 strings; a string (required or "" when absent).
std::vector<std::string> string_list(const nlohmann::json& body, const char* key);
std::string string_field(const nlohmann::json& body, const char* key, bool required = true);

}  // namespace http

struct GameServer::Impl {
  // One connection (libmicrohttpd's socket context): when its current request began, for the
  // deadline on the complete head and body.
  struct Connection {
    int fd = -1;
    std::chrono::steady_clock::time_point started;
    bool request_complete = false;  // read in full: the deadline no longer applies
    bool cut = false;
  };
  // One request (libmicrohttpd's per-request context).
  struct Request {
    MHD_Connection* mhd = nullptr;
    Connection* connection = nullptr;
    HttpRequest req;
    HttpResponse res;
    bool too_large = false, queued = false, answered = false;
    std::atomic<bool> done{false};
    std::string forwarded;  // counted against the per-forwarded-address cap
  };

  Game& game;
  ServerOptions options;
  http::RateLimiter per_account, per_address, auth, reports;
  Router router;

  MHD_Daemon* daemon = nullptr;
  std::mutex registry_mutex;  // connections, forwarded counts
  std::unordered_map<Connection*, std::unique_ptr<Connection>> connections;
  std::unordered_map<std::string, int> in_flight;

  std::mutex queue_mutex;
  std::condition_variable queue_cv;
  std::deque<Request*> queue;
  bool stopping = false;
  std::vector<std::thread> workers;

  std::mutex run_mutex;
  std::condition_variable run_cv;
  bool stop_requested = false;

  Impl(Game& g, ServerOptions o);

  // --- server.cpp: the request pipeline ---
  std::string client_address(const HttpRequest& req) const;
  std::string session_cookie(const std::string& token, bool clear = false) const;
  std::string own_origin(const HttpRequest& req) const;
  void check_host(const HttpRequest& req) const;
  nlohmann::json body_of(const HttpRequest& req);
  Session session_of(const HttpRequest& req, bool state_changing);
  HttpResponse handle(const HttpRequest& req);
  void route(const HttpRequest& req, HttpResponse& res);

  // --- api_routes.cpp ---
  void routes();
  void on(const std::string& method, const std::string& pattern, Router::Handler h) {
    router.add(method, pattern, std::move(h));
  }

  // --- http_daemon.cpp: the network side ---
  static MHD_Result on_request(void* cls, MHD_Connection* c, const char* url, const char* method,
                               const char* version, const char* upload_data, size_t* upload_size,
                               void** con_cls);
  static void on_completed(void* cls, MHD_Connection* c, void** con_cls,
                           MHD_RequestTerminationCode code);
  static void on_connection(void* cls, MHD_Connection* c, void** socket_context,
                            MHD_ConnectionNotificationCode code);
  Connection* connection_of(MHD_Connection* c);
  void work();
  void sweep();
};

}  // namespace winokit
