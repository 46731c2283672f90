// The game server's request pipeline: per-address limits, the target's length, Origin and CSRF
// checks, sessions, and typed errors turned into JSON replies. The routes are in
// api_routes.cpp, the network side in http_daemon.cpp (see server_impl.hpp).
#include "winokit/game/server.hpp"

#include <arpa/inet.h>
#include <sodium.h>

#include <algorithm>
#include <cctype>

#include "server_impl.hpp"
#include "winokit/core/error.hpp"

namespace winokit {

using nlohmann::json;
using namespace http;

namespace {

// The one place game errors become HTTP statuses.
constexpr std::pair<GameErrorKind, int> kHttpStatuses[] = {
    {GameErrorKind::Invalid, 400},        {GameErrorKind::Unauthorized, 401},
    {GameErrorKind::Forbidden, 403},      {GameErrorKind::NotFound, 404},
    {GameErrorKind::WrongMethod, 405},    {GameErrorKind::Conflict, 409},
    {GameErrorKind::Gone, 410},           {GameErrorKind::TooLarge, 413},
    {GameErrorKind::WrongMediaType, 415}, {GameErrorKind::RateLimited, 429},
    {GameErrorKind::Internal, 500},       {GameErrorKind::Busy, 503},
};

constexpr int kUriTooLong = 414;
// Reports per account and minute: enough for a player who meets a few bad cues, too few to
// work through every open association.
constexpr double kReportsPerMinute = 5;
constexpr const char* kRetryAfter = "1";  // seconds, on 503

// The request target's length as it came: the path, and the query's names and values.
std::size_t target_bytes(const HttpRequest& req) {
  std::size_t n = req.path.size();
  for (const auto& [k, v] : req.params)
    n += k.size() + v.size() + 2;  // '?' or '&', '='
  return n;
}

}  // namespace

int http_status(GameErrorKind kind) {
  for (const auto& [k, status] : kHttpStatuses) {
    if (k == kind) return status;
  }
  return 500;
}

std::string HttpRequest::header(const std::string& name) const {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() && std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return v;
    }
  }
  return {};
}

GameServer::Impl::Impl(Game& g, ServerOptions o)
    : game(g),
      options(std::move(o)),
      per_account(options.account_rate, options.account_burst),
      per_address(options.address_rate, options.address_burst),
      auth(options.auth_per_minute / 60.0, options.auth_per_minute),
      reports(kReportsPerMinute / 60.0, kReportsPerMinute) {}

// The client's address for rate limits: the connection's, or behind a trusted reverse proxy
// the last address the proxy appended to X-Forwarded-For (earlier entries are the client's
// own claims and could be forged).
std::string GameServer::Impl::client_address(const HttpRequest& req) const {
  if (!options.trust_proxy) return req.remote_addr;
  const std::string fwd = req.header("X-Forwarded-For");
  if (fwd.empty()) return req.remote_addr;
  const auto comma = fwd.rfind(',');
  std::string last = comma == std::string::npos ? fwd : fwd.substr(comma + 1);
  const auto a = last.find_first_not_of(' ');
  const auto b = last.find_last_not_of(' ');
  return a == std::string::npos ? req.remote_addr : last.substr(a, b - a + 1);
}

std::string GameServer::Impl::session_cookie(const std::string& token, bool clear) const {
  std::string c =
      std::string(kCookie) + "=" + (clear ? "" : token) + "; Path=/; HttpOnly; SameSite=Strict";
  if (clear) c += "; Max-Age=0";
  if (options.secure_cookie) c += "; Secure";
  return c;
}

// The origin this server is reached at: the configured public origin, or scheme://host[:port]
// as the browser names it.
std::string GameServer::Impl::own_origin(const HttpRequest& req) const {
  if (!options.public_origin.empty()) return lower(options.public_origin);
  std::string scheme = "http";
  if (options.trust_proxy) {
    const std::string proto = lower(req.header("X-Forwarded-Proto"));
    if (proto == "https" || proto == "http") scheme = proto;
  }
  return scheme + "://" + lower(req.header("Host"));
}

// Parses the JSON body of a state-changing request (CSRF-relevant checks first). An Origin,
// when sent, must match scheme, host and port.
json GameServer::Impl::body_of(const HttpRequest& req) {
  const std::string origin = req.header("Origin");
  if (!origin.empty() && lower(origin) != own_origin(req)) {
    throw GameError(GameErrorKind::Forbidden, "bad_origin", "cross-site request refused");
  }
  if (req.header("Content-Type").rfind("application/json", 0) != 0) {
    throw GameError(GameErrorKind::WrongMediaType, "bad_content_type", "send application/json");
  }
  json body;
  try {
    body = json::parse(req.body);
  } catch (const json::exception&) {
    throw GameError(GameErrorKind::Invalid, "bad_json", "the body is not valid JSON");
  }
  if (!body.is_object())
    throw GameError(GameErrorKind::Invalid, "bad_json", "the body must be a JSON object");
  return body;
}

Session GameServer::Impl::session_of(const HttpRequest& req, bool state_changing) {
  Session s = game.authenticate(cookie_value(req, kCookie));
  if (state_changing) {
    const std::string sent = req.header("X-CSRF-Token");
    if (sent.size() != s.csrf.size() ||
        sodium_memcmp(sent.data(), s.csrf.data(), sent.size()) != 0) {
      throw GameError(GameErrorKind::Forbidden, "bad_csrf",
                      "missing or wrong CSRF token; reload the page");
    }
  }
  if (!per_account.allow("user:" + std::to_string(s.user_id))) {
    throw GameError(GameErrorKind::RateLimited, "rate_limited", "too many requests; slow down");
  }
  return s;
}

// The Host a request names must be this server's (DNS rebinding: a page on evil.example whose
// name now resolves to this server sends Host: evil.example). With a public origin, its host
// and port; without, an IP address or localhost (a rebinding attack needs a name). A request
// without Host (HTTP/1.0, tests) has nothing to check.
void GameServer::Impl::check_host(const HttpRequest& req) const {
  const std::string host = lower(req.header("Host"));
  if (host.empty()) return;
  bool ok = false;
  if (!options.public_origin.empty()) {
    const std::string origin = lower(options.public_origin);
    const auto scheme_end = origin.find("://");
    const std::string want =
        scheme_end == std::string::npos ? origin : origin.substr(scheme_end + 3);
    ok = host == want;
  } else {
    std::string name = host;
    if (!name.empty() && name.front() == '[') {  // [IPv6]:port
      name = name.substr(1, name.find(']') == std::string::npos ? 0 : name.find(']') - 1);
    } else if (const auto colon = name.rfind(':'); colon != std::string::npos) {
      name.resize(colon);
    }
    in6_addr v6{};
    in_addr v4{};
    ok = name == "localhost" || inet_pton(AF_INET, name.c_str(), &v4) == 1 ||
         inet_pton(AF_INET6, name.c_str(), &v6) == 1;
  }
  if (!ok) {
    throw GameError(GameErrorKind::Forbidden, "bad_host",
                    "this server does not answer for host '" + host +
                        "' (serve --public-origin names the one it does)");
  }
}

// Runs a route: typed errors become JSON 4xx, anything else a JSON 500.
HttpResponse GameServer::Impl::handle(const HttpRequest& req) {
  HttpResponse res;
  try {
    route(req, res);
  } catch (const GameError& e) {
    res = {};
    send_error(res, e.kind(), e.code(), e.what());
    // Busy (the hashing queue is full, the server is shutting down): worth retrying soon.
    if (e.kind() == GameErrorKind::Busy) res.headers.emplace_back("Retry-After", kRetryAfter);
  } catch (const InputError& e) {
    res = {};
    send_error(res, GameErrorKind::Invalid, "bad_input", e.what());
  } catch (const UsageError& e) {
    res = {};
    send_error(res, GameErrorKind::Invalid, "bad_request", e.what());
  } catch (const json::exception& e) {
    res = {};
    send_error(res, GameErrorKind::Invalid, "bad_json", e.what());
  } catch (const std::exception&) {
    res = {};
    send_error(res, GameErrorKind::Internal, "internal", "internal error");
  }
  add_security_headers(res);
  return res;
}

void GameServer::Impl::route(const HttpRequest& req, HttpResponse& res) {
  if (target_bytes(req) > kMaxTargetBytes) {  // before any routing or lookup
    send_json(res, kUriTooLong,
              {{"error",
                {{"code", "uri_too_long"},
                 {"message", "the request target is longer than " +
                                 std::to_string(kMaxTargetBytes) + " bytes"}}}});
    return;
  }
  check_host(req);
  if (!per_address.allow(client_address(req))) {
    throw GameError(GameErrorKind::RateLimited, "rate_limited",
                    "too many requests from this address");
  }
  const std::string method = req.method == "HEAD" ? "GET" : req.method;
  const Router::Match m = router.match(method, req.path);
  if (m.handler != nullptr) {
    (*m.handler)(req, m.captures, res);
    return;
  }
  if (m.path_known)
    throw GameError(GameErrorKind::WrongMethod, "bad_method", "method not allowed here");
  throw GameError(GameErrorKind::NotFound, "not_found", "no such page");
}

GameServer::GameServer(Game& game, ServerOptions options)
    : impl_(std::make_unique<Impl>(game, std::move(options))) {
  impl_->routes();
}

GameServer::~GameServer() = default;

HttpResponse GameServer::handle(const HttpRequest& request) {
  return impl_->handle(request);
}

void GameServer::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->run_mutex);
    impl_->stop_requested = true;
  }
  impl_->run_cv.notify_all();
}

}  // namespace winokit
