#include "winokit/game/server.hpp"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sodium.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <regex>
#include <thread>
#include <unordered_map>

#include "winokit/core/error.hpp"
#include "winokit/io/files.hpp"

namespace winokit {

using nlohmann::json;

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

namespace {

constexpr const char* kCookie = "wk_session";
constexpr std::size_t kMaxBuckets = 100000;  // pruned beyond this
constexpr unsigned kListenBacklog = 1024;

// Token buckets keyed by account or address.
class RateLimiter {
 public:
  RateLimiter(double rate, double burst) : rate_(rate), burst_(burst) {}
  bool allow(const std::string& key) {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(mutex_);
    if (buckets_.size() > kMaxBuckets) prune(now);
    auto [it, fresh] = buckets_.try_emplace(key, Bucket{burst_, now});
    Bucket& b = it->second;
    if (!fresh) {
      const double dt = std::chrono::duration<double>(now - b.last).count();
      b.tokens = std::min(burst_, b.tokens + dt * rate_);
      b.last = now;
    }
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

 private:
  struct Bucket {
    double tokens;
    std::chrono::steady_clock::time_point last;
  };
  void prune(std::chrono::steady_clock::time_point now) {
    for (auto it = buckets_.begin(); it != buckets_.end();) {
      const double dt = std::chrono::duration<double>(now - it->second.last).count();
      it = it->second.tokens + dt * rate_ >= burst_ ? buckets_.erase(it) : std::next(it);
    }
  }
  double rate_, burst_;
  std::mutex mutex_;
  std::map<std::string, Bucket> buckets_;
};

void send_json(HttpResponse& res, int status, const json& body) {
  res.status = status;
  res.headers.emplace_back("Cache-Control", "no-store");
  // Replace, not throw, on invalid UTF-8 (an error message may quote cut user text).
  res.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  res.content_type = "application/json";
}

void send_error(HttpResponse& res, GameErrorKind kind, const std::string& code,
                const std::string& message) {
  send_json(res, http_status(kind), {{"error", {{"code", code}, {"message", message}}}});
}

std::string cookie_value(const HttpRequest& req, const std::string& name) {
  const std::string header = req.header("Cookie");
  std::size_t pos = 0;
  while (pos < header.size()) {
    std::size_t end = header.find(';', pos);
    if (end == std::string::npos) end = header.size();
    std::string part = header.substr(pos, end - pos);
    const auto a = part.find_first_not_of(' ');
    if (a != std::string::npos) part = part.substr(a);
    if (part.rfind(name + "=", 0) == 0) return part.substr(name.size() + 1);
    pos = end + 1;
  }
  return {};
}

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string content_type_of(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  for (auto& c : ext)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".png") return "image/png";
  if (ext == ".webp") return "image/webp";
  return "image/jpeg";
}

std::int64_t path_id(const std::vector<std::string>& matches) {
  const std::string& s = matches.at(1);
  if (s.empty() || s.size() > 18)
    throw GameError(GameErrorKind::NotFound, "not_found", "no such id");
  return std::stoll(s);
}

std::vector<std::string> string_list(const json& body, const char* key) {
  const auto it = body.find(key);
  if (it == body.end() || !it->is_array()) {
    throw GameError(GameErrorKind::Invalid, "bad_request",
                    std::string("'") + key + "' must be a list of names");
  }
  if (it->size() > 64)
    throw GameError(GameErrorKind::Invalid, "bad_request", std::string("'") + key + "' too long");
  std::vector<std::string> out;
  for (const auto& v : *it) {
    if (!v.is_string())
      throw GameError(GameErrorKind::Invalid, "bad_request",
                      std::string("'") + key + "' holds names");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::string string_field(const json& body, const char* key, bool required = true) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) {
    if (required)
      throw GameError(GameErrorKind::Invalid, "bad_request", std::string("missing '") + key + "'");
    return {};
  }
  if (!it->is_string())
    throw GameError(GameErrorKind::Invalid, "bad_request",
                    std::string("'") + key + "' must be a string");
  return it->get<std::string>();
}

}  // namespace

struct GameServer::Impl {
  using Handler =
      std::function<void(const HttpRequest&, const std::vector<std::string>&, HttpResponse&)>;
  struct Route {
    std::string method;
    std::regex pattern;
    Handler handler;
  };
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
  RateLimiter per_account, per_address, auth;
  std::vector<Route> routes_;

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

  Impl(Game& g, ServerOptions o)
      : game(g),
        options(std::move(o)),
        per_account(options.account_rate, options.account_burst),
        per_address(options.address_rate, options.address_burst),
        auth(options.auth_per_minute / 60.0, options.auth_per_minute) {}

  // The client's address for rate limits: the connection's, or behind a trusted reverse proxy
  // the last address the proxy appended to X-Forwarded-For (earlier entries are the client's
  // own claims and could be forged).
  std::string client_address(const HttpRequest& req) const {
    if (!options.trust_proxy) return req.remote_addr;
    const std::string fwd = req.header("X-Forwarded-For");
    if (fwd.empty()) return req.remote_addr;
    const auto comma = fwd.rfind(',');
    std::string last = comma == std::string::npos ? fwd : fwd.substr(comma + 1);
    const auto a = last.find_first_not_of(' ');
    const auto b = last.find_last_not_of(' ');
    return a == std::string::npos ? req.remote_addr : last.substr(a, b - a + 1);
  }

  std::string session_cookie(const std::string& token, bool clear = false) const {
    std::string c =
        std::string(kCookie) + "=" + (clear ? "" : token) + "; Path=/; HttpOnly; SameSite=Strict";
    if (clear) c += "; Max-Age=0";
    if (options.secure_cookie) c += "; Secure";
    return c;
  }

  // The origin this server is reached at: scheme://host[:port] as the browser names it.
  std::string own_origin(const HttpRequest& req) const {
    std::string scheme = "http";
    if (options.trust_proxy) {
      const std::string proto = lower(req.header("X-Forwarded-Proto"));
      if (proto == "https" || proto == "http") scheme = proto;
    }
    return scheme + "://" + lower(req.header("Host"));
  }

  // Parses the JSON body of a state-changing request (CSRF-relevant checks first). An Origin,
  // when sent, must match scheme, host and port.
  json body_of(const HttpRequest& req) {
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

  Session session_of(const HttpRequest& req, bool state_changing) {
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

  void on(const std::string& method, const std::string& pattern, Handler h) {
    routes_.push_back({method, std::regex(pattern), std::move(h)});
  }

  // Runs a route: typed errors become JSON 4xx, anything else a JSON 500.
  HttpResponse handle(const HttpRequest& req) {
    HttpResponse res;
    try {
      route(req, res);
    } catch (const GameError& e) {
      res = {};
      send_error(res, e.kind(), e.code(), e.what());
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
    res.headers.emplace_back("X-Content-Type-Options", "nosniff");
    res.headers.emplace_back("X-Frame-Options", "DENY");
    res.headers.emplace_back("Referrer-Policy", "no-referrer");
    res.headers.emplace_back("Content-Security-Policy",
                             "default-src 'self'; img-src 'self'; style-src 'self'; script-src "
                             "'self'; frame-ancestors 'none'");
    return res;
  }

  void route(const HttpRequest& req, HttpResponse& res) {
    if (!per_address.allow(client_address(req))) {
      throw GameError(GameErrorKind::RateLimited, "rate_limited",
                      "too many requests from this address");
    }
    const std::string method = req.method == "HEAD" ? "GET" : req.method;
    bool path_known = false;
    std::smatch m;
    for (const auto& r : routes_) {
      if (!std::regex_match(req.path, m, r.pattern)) continue;
      path_known = true;
      if (r.method != method) continue;
      std::vector<std::string> matches(m.begin(), m.end());
      r.handler(req, matches, res);
      return;
    }
    if (path_known)
      throw GameError(GameErrorKind::WrongMethod, "bad_method", "method not allowed here");
    throw GameError(GameErrorKind::NotFound, "not_found", "no such page");
  }

  void routes() {
    for (const auto& asset : web_assets()) {
      const WebAsset a = asset;
      std::string literal;  // the asset's path as a regex
      for (char c : std::string(a.path)) {
        if (std::string(".[]{}()*+?^$|\\").find(c) != std::string::npos) literal += '\\';
        literal += c;
      }
      on("GET", literal, [a](const HttpRequest&, const auto&, HttpResponse& res) {
        res.headers.emplace_back("Cache-Control", "no-cache");
        res.body = a.body;
        res.content_type = a.content_type;
      });
    }
    on("GET", R"(/images/(.+))", [this](const HttpRequest&, const auto& m, HttpResponse& res) {
      const auto it = game.pool().find(m[1]);
      if (it == game.pool().end())
        throw GameError(GameErrorKind::NotFound, "not_found", "no such image");
      res.headers.emplace_back("Cache-Control", "public, max-age=86400");
      res.body = read_file(it->second);
      res.content_type = content_type_of(it->second);
    });
    on("GET", "/api/status", [this](const HttpRequest&, const auto&, HttpResponse& res) {
      send_json(res, 200, game.status());
    });
    on("POST", "/api/register", [this](const HttpRequest& req, const auto&, HttpResponse& res) {
      const json body = body_of(req);
      if (!auth.allow(client_address(req))) {
        throw GameError(GameErrorKind::RateLimited, "rate_limited",
                        "too many attempts; wait a minute");
      }
      const AuthResult a =
          game.register_user(string_field(body, "name"), string_field(body, "password"));
      res.headers.emplace_back("Set-Cookie", session_cookie(a.token));
      send_json(res, 201, {{"user", a.user}, {"csrf", a.csrf}});
    });
    on("POST", "/api/login", [this](const HttpRequest& req, const auto&, HttpResponse& res) {
      const json body = body_of(req);
      if (!auth.allow(client_address(req))) {
        throw GameError(GameErrorKind::RateLimited, "rate_limited",
                        "too many attempts; wait a minute");
      }
      const AuthResult a = game.login(string_field(body, "name"), string_field(body, "password"));
      res.headers.emplace_back("Set-Cookie", session_cookie(a.token));
      send_json(res, 200, {{"user", a.user}, {"csrf", a.csrf}});
    });
    on("POST", "/api/logout", [this](const HttpRequest& req, const auto&, HttpResponse& res) {
      body_of(req);
      session_of(req, true);
      game.logout(cookie_value(req, kCookie));
      res.headers.emplace_back("Set-Cookie", session_cookie("", true));
      send_json(res, 200, {{"ok", true}});
    });
    on("GET", "/api/me", [this](const HttpRequest& req, const auto&, HttpResponse& res) {
      const Session se = session_of(req, false);
      json j = game.me(se);
      j["csrf"] = se.csrf;
      send_json(res, 200, j);
    });
    on("GET", "/api/qualification", [this](const HttpRequest& req, const auto&, HttpResponse& res) {
      send_json(res, 200, game.qualification_test(session_of(req, false)));
    });
    on("POST", "/api/qualification",
       [this](const HttpRequest& req, const auto&, HttpResponse& res) {
         const json body = body_of(req);
         const Session se = session_of(req, true);
         const auto it = body.find("answers");
         if (it == body.end())
           throw GameError(GameErrorKind::Invalid, "bad_request", "missing 'answers'");
         send_json(res, 200, game.submit_qualification(se, *it));
       });
    on("POST", "/api/rounds", [this](const HttpRequest& req, const auto&, HttpResponse& res) {
      body_of(req);
      send_json(res, 200, game.new_round(session_of(req, true)));
    });
    on("POST", R"(/api/rounds/(\d+)/submit)",
       [this](const HttpRequest& req, const auto& m, HttpResponse& res) {
         const std::int64_t id = path_id(m);
         const json body = body_of(req);
         const Session se = session_of(req, true);
         const std::string cue = string_field(body, "cue");
         send_json(res, 200, game.submit_round(se, id, cue, string_list(body, "associations")));
       });
    on("POST", R"(/api/rounds/(\d+)/report)",
       [this](const HttpRequest& req, const auto& m, HttpResponse& res) {
         const std::int64_t id = path_id(m);
         const json body = body_of(req);
         const Session se = session_of(req, true);
         send_json(res, 200, game.report(se, id, string_field(body, "reason", false)));
       });
    on("GET", "/api/solve/next", [this](const HttpRequest& req, const auto&, HttpResponse& res) {
      send_json(res, 200, game.next_solve(session_of(req, false)));
    });
    on("POST", R"(/api/solve/(\d+))",
       [this](const HttpRequest& req, const auto& m, HttpResponse& res) {
         const std::int64_t id = path_id(m);
         const json body = body_of(req);
         const Session se = session_of(req, true);
         send_json(res, 200, game.submit_solve(se, id, string_list(body, "picks")));
       });
    on("GET", "/api/leaderboard", [this](const HttpRequest&, const auto&, HttpResponse& res) {
      send_json(res, 200, game.leaderboard());
    });
    on("GET", "/api/admin/reports", [this](const HttpRequest& req, const auto&, HttpResponse& res) {
      send_json(res, 200, game.admin_reports(session_of(req, false)));
    });
    on("POST", R"(/api/admin/reports/(\d+))",
       [this](const HttpRequest& req, const auto& m, HttpResponse& res) {
         const std::int64_t id = path_id(m);
         const json body = body_of(req);
         const Session se = session_of(req, true);
         send_json(res, 200, game.admin_review(se, id, string_field(body, "action")));
       });
    on("GET", "/api/admin/export", [this](const HttpRequest& req, const auto&, HttpResponse& res) {
      const Session se = session_of(req, false);
      if (!se.admin) throw GameError(GameErrorKind::Forbidden, "not_admin", "admins only");
      double min_solvable = 80;
      for (const auto& [k, v] : req.params) {
        if (k != "min_solvable") continue;
        try {
          std::size_t used = 0;
          min_solvable = std::stod(v, &used);
          if (used != v.size() || !std::isfinite(min_solvable)) throw std::invalid_argument(v);
        } catch (const std::exception&) {
          throw GameError(GameErrorKind::Invalid, "bad_request", "min_solvable must be a number");
        }
      }
      res.headers.emplace_back("Cache-Control", "no-store");
      res.body = game.export_csv(min_solvable);
      res.content_type = "text/csv";
    });
  }

  // --- The network side (libmicrohttpd) ---

  static MHD_Result collect(void* cls, MHD_ValueKind, const char* key, const char* value) {
    auto* out = static_cast<std::vector<std::pair<std::string, std::string>>*>(cls);
    if (out->size() < 200) out->emplace_back(key ? key : "", value ? value : "");
    return MHD_YES;
  }

  static MHD_Result send(MHD_Connection* c, const HttpResponse& r) {
    MHD_Response* response = MHD_create_response_from_buffer(
        r.body.size(), const_cast<char*>(r.body.data()), MHD_RESPMEM_MUST_COPY);
    if (response == nullptr) return MHD_NO;
    for (const auto& [k, v] : r.headers)
      MHD_add_response_header(response, k.c_str(), v.c_str());
    if (!r.content_type.empty())
      MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type.c_str());
    const MHD_Result ok = MHD_queue_response(c, static_cast<unsigned>(r.status), response);
    MHD_destroy_response(response);
    return ok;
  }

  static MHD_Result refuse(MHD_Connection* c, Request* st, GameErrorKind kind,
                           const std::string& code, const std::string& message) {
    HttpResponse res;
    send_error(res, kind, code, message);
    res.headers.emplace_back("Connection", "close");
    st->answered = true;
    return send(c, res);
  }

  Connection* connection_of(MHD_Connection* c) {
    const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? static_cast<Connection*>(info->socket_context) : nullptr;
  }

  static MHD_Result on_request(void* cls, MHD_Connection* c, const char* url, const char* method,
                               const char*, const char* upload_data, size_t* upload_size,
                               void** con_cls) {
    auto* self = static_cast<Impl*>(cls);
    auto* st = static_cast<Request*>(*con_cls);
    if (st == nullptr) {  // the head is in: set up, check what can be checked before the body
      st = new Request;
      *con_cls = st;
      st->mhd = c;
      st->connection = self->connection_of(c);
      st->req.method = method ? method : "";
      st->req.path = url ? url : "";
      MHD_get_connection_values(c, MHD_HEADER_KIND, collect, &st->req.headers);
      MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect, &st->req.params);
      const MHD_ConnectionInfo* info =
          MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
      if (info && info->client_addr) st->req.remote_addr = address_text(info->client_addr);
      if (self->options.trust_proxy) {
        const std::string key = self->client_address(st->req);
        std::lock_guard<std::mutex> lock(self->registry_mutex);
        int& n = self->in_flight[key];
        if (n >= self->options.max_connections_per_address) {
          if (n == 0) self->in_flight.erase(key);
          return refuse(c, st, GameErrorKind::RateLimited, "too_many_connections",
                        "too many requests in flight from this address");
        }
        ++n;
        st->forwarded = key;
      }
      const std::string length = st->req.header("Content-Length");
      if (!length.empty()) {
        errno = 0;
        char* end = nullptr;
        const unsigned long long n = std::strtoull(length.c_str(), &end, 10);
        if (errno != 0 || *end != '\0' || n > self->options.max_body) {
          st->too_large = true;
          return refuse(c, st, GameErrorKind::TooLarge, "too_large",
                        "the request body is too large");
        }
      }
      return MHD_YES;
    }
    if (st->answered) {  // an early refusal: drop whatever body still comes
      *upload_size = 0;
      return MHD_YES;
    }
    if (*upload_size > 0) {
      if (!st->too_large && st->req.body.size() + *upload_size <= self->options.max_body) {
        st->req.body.append(upload_data, *upload_size);
      } else {
        // Over the cap (a chunked body has no length up front): keep nothing, and answer 413
        // now if libmicrohttpd lets us, else once the body ends (the deadline bounds that).
        st->too_large = true;
        std::string().swap(st->req.body);
        if (refuse(c, st, GameErrorKind::TooLarge, "too_large", "the request body is too large") !=
            MHD_YES)
          st->answered = false;
      }
      *upload_size = 0;
      return MHD_YES;
    }
    if (st->too_large)
      return refuse(c, st, GameErrorKind::TooLarge, "too_large", "the request body is too large");
    if (st->done.load()) {
      st->answered = true;
      return send(c, st->res);
    }
    if (st->queued) return MHD_YES;
    if (st->connection) {
      std::lock_guard<std::mutex> lock(self->registry_mutex);
      st->connection->request_complete = true;
    }
    {
      std::lock_guard<std::mutex> lock(self->queue_mutex);
      if (!self->stopping &&
          self->queue.size() < static_cast<std::size_t>(std::max(1, self->options.max_queue))) {
        st->queued = true;
        MHD_suspend_connection(c);
        self->queue.push_back(st);
      }
    }
    if (!st->queued)
      return refuse(c, st, GameErrorKind::Busy, "busy", "the server is busy; try again");
    self->queue_cv.notify_one();
    return MHD_YES;
  }

  static void on_completed(void* cls, MHD_Connection* c, void** con_cls,
                           MHD_RequestTerminationCode) {
    auto* self = static_cast<Impl*>(cls);
    auto* st = static_cast<Request*>(*con_cls);
    *con_cls = nullptr;
    std::lock_guard<std::mutex> lock(self->registry_mutex);
    if (Connection* conn = self->connection_of(c)) {  // the next request's deadline starts now
      conn->started = std::chrono::steady_clock::now();
      conn->request_complete = false;
    }
    if (st == nullptr) return;
    if (!st->forwarded.empty()) {
      const auto it = self->in_flight.find(st->forwarded);
      if (it != self->in_flight.end() && --it->second <= 0) self->in_flight.erase(it);
    }
    delete st;
  }

  static void on_connection(void* cls, MHD_Connection* c, void** socket_context,
                            MHD_ConnectionNotificationCode code) {
    auto* self = static_cast<Impl*>(cls);
    std::lock_guard<std::mutex> lock(self->registry_mutex);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      auto conn = std::make_unique<Connection>();
      const MHD_ConnectionInfo* info =
          MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
      conn->fd = info ? info->connect_fd : -1;
      conn->started = std::chrono::steady_clock::now();
      *socket_context = conn.get();
      self->connections.emplace(conn.get(), std::move(conn));
    } else {
      self->connections.erase(static_cast<Connection*>(*socket_context));
      *socket_context = nullptr;
    }
  }

  static std::string address_text(const sockaddr* a) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (a->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a)->sin_addr, buf, sizeof buf);
    } else if (a->sa_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, buf, sizeof buf);
    }
    return buf;
  }

  void work() {
    for (;;) {
      Request* st = nullptr;
      {
        std::unique_lock<std::mutex> lock(queue_mutex);
        queue_cv.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        st = queue.front();
        queue.pop_front();
      }
      MHD_Connection* c = st->mhd;  // st is not touched once done is set
      st->res = handle(st->req);
      st->done.store(true);
      MHD_resume_connection(c);
    }
  }

  // Closes connections whose request head and body did not arrive within the deadline
  // (libmicrohttpd's own timeout only counts inactivity: a client trickling a byte at a time
  // would never meet it). shutdown() wakes the connection's event loop, which closes it.
  void sweep() {
    const auto limit = std::chrono::seconds(std::max(1, options.request_seconds));
    std::unique_lock<std::mutex> lock(run_mutex);
    while (!stop_requested) {
      run_cv.wait_for(lock, std::chrono::milliseconds(200));
      const auto now = std::chrono::steady_clock::now();
      std::lock_guard<std::mutex> reg(registry_mutex);
      for (auto& [key, conn] : connections) {
        if (conn->request_complete || conn->cut || conn->fd < 0) continue;
        if (now - conn->started > limit) {
          ::shutdown(conn->fd, SHUT_RDWR);
          conn->cut = true;
        }
      }
    }
  }
};

GameServer::GameServer(Game& game, ServerOptions options)
    : impl_(std::make_unique<Impl>(game, std::move(options))) {
  impl_->routes();
}

GameServer::~GameServer() = default;

HttpResponse GameServer::handle(const HttpRequest& request) {
  return impl_->handle(request);
}

void GameServer::run(const std::function<void(int)>& on_ready) {
  Impl& im = *impl_;
  const ServerOptions& o = im.options;
  if (o.threads < 1 || o.io_threads < 1 || o.max_connections < 1 ||
      o.max_connections_per_address < 1 || o.request_seconds < 1) {
    throw UsageError("server threads, connection caps and the request deadline must be positive");
  }
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  const std::string host = o.host == "localhost" ? "127.0.0.1" : o.host;
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(o.port));
    addr_len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(o.port));
    addr_len = sizeof(sockaddr_in6);
  } else {
    throw UsageError("--host must be a numeric IPv4 or IPv6 address, not '" + o.host + "'");
  }
  if (o.port < 0 || o.port > 65535) throw UsageError("the port must be 0 to 65535");
  unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
  if (addr.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
  // Without a proxy, libmicrohttpd caps connections per socket address; behind one every
  // connection comes from the proxy, and requests in flight are capped per forwarded address.
  const unsigned per_ip = o.trust_proxy ? 0u : static_cast<unsigned>(o.max_connections_per_address);
  {
    std::lock_guard<std::mutex> lock(im.queue_mutex);
    im.stopping = false;
  }
  for (int i = 0; i < o.threads; ++i)
    im.workers.emplace_back([&im] { im.work(); });
  MHD_OptionItem pool_option[] = {{o.io_threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END,
                                   static_cast<intptr_t>(o.io_threads), nullptr},
                                  {MHD_OPTION_END, 0, nullptr}};
  im.daemon = MHD_start_daemon(
      flags, 0, nullptr, nullptr, &Impl::on_request, &im, MHD_OPTION_SOCK_ADDR,
      reinterpret_cast<sockaddr*>(&addr), MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u,
      MHD_OPTION_LISTEN_BACKLOG_SIZE, kListenBacklog, MHD_OPTION_CONNECTION_LIMIT,
      static_cast<unsigned>(o.max_connections), MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
      MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(o.request_seconds),
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<size_t>(64 * 1024),
      MHD_OPTION_NOTIFY_COMPLETED, &Impl::on_completed, &im, MHD_OPTION_NOTIFY_CONNECTION,
      &Impl::on_connection, &im, MHD_OPTION_ARRAY, pool_option, MHD_OPTION_END);
  (void)addr_len;
  auto stop_workers = [&im] {
    {
      std::lock_guard<std::mutex> lock(im.queue_mutex);
      im.stopping = true;
    }
    im.queue_cv.notify_all();
    for (auto& t : im.workers)
      t.join();
    im.workers.clear();
  };
  if (im.daemon == nullptr) {
    stop_workers();
    throw IoError("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                  " (in use? try --port)");
  }
  const MHD_DaemonInfo* info = MHD_get_daemon_info(im.daemon, MHD_DAEMON_INFO_BIND_PORT);
  const int port = info ? info->port : o.port;
  std::thread sweeper([&im] { im.sweep(); });
  if (on_ready) on_ready(port);
  {
    std::unique_lock<std::mutex> lock(im.run_mutex);
    im.run_cv.wait(lock, [&] { return im.stop_requested; });
  }
  sweeper.join();
  MHD_quiesce_daemon(im.daemon);
  stop_workers();  // finishes the queued requests and resumes their connections
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // their replies go out
  MHD_stop_daemon(im.daemon);
  im.daemon = nullptr;
}

void GameServer::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->run_mutex);
    impl_->stop_requested = true;
  }
  impl_->run_cv.notify_all();
}

}  // namespace winokit
