#include "winokit/game_server.hpp"

#include <httplib.h>
#include <sodium.h>
#include <sys/socket.h>

#include <chrono>
#include <map>
#include <mutex>

#include "winokit/error.hpp"
#include "winokit/files.hpp"

namespace winokit {

using nlohmann::json;

namespace {

constexpr const char* kCookie = "wk_session";
constexpr std::size_t kMaxBuckets = 100000;  // pruned beyond this
constexpr int kListenBacklog = 1024;

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

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  // Replace, not throw, on invalid UTF-8 (an error message may quote cut user text).
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& code,
                const std::string& message) {
  send_json(res, status, {{"error", {{"code", code}, {"message", message}}}});
}

std::string cookie_value(const httplib::Request& req, const std::string& name) {
  const std::string header = req.get_header_value("Cookie");
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

// Host part of an Origin ("http://host:port" -> "host:port").
std::string origin_host(const std::string& origin) {
  const auto scheme = origin.find("://");
  return scheme == std::string::npos ? origin : origin.substr(scheme + 3);
}

std::string content_type_of(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  for (auto& c : ext)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".png") return "image/png";
  if (ext == ".webp") return "image/webp";
  return "image/jpeg";
}

std::int64_t path_id(const httplib::Request& req) {
  const std::string& s = req.matches[1];
  if (s.empty() || s.size() > 18) throw GameError(404, "not_found", "no such id");
  return std::stoll(s);
}

std::vector<std::string> string_list(const json& body, const char* key) {
  const auto it = body.find(key);
  if (it == body.end() || !it->is_array()) {
    throw GameError(400, "bad_request", std::string("'") + key + "' must be a list of names");
  }
  if (it->size() > 64) throw GameError(400, "bad_request", std::string("'") + key + "' too long");
  std::vector<std::string> out;
  for (const auto& v : *it) {
    if (!v.is_string())
      throw GameError(400, "bad_request", std::string("'") + key + "' holds names");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::string string_field(const json& body, const char* key, bool required = true) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) {
    if (required) throw GameError(400, "bad_request", std::string("missing '") + key + "'");
    return {};
  }
  if (!it->is_string())
    throw GameError(400, "bad_request", std::string("'") + key + "' must be a string");
  return it->get<std::string>();
}

}  // namespace

struct GameServer::Impl {
  Game& game;
  ServerOptions options;
  int listen_fd = -1;
  httplib::Server server;
  RateLimiter per_account, per_address, auth;

  Impl(Game& g, ServerOptions o)
      : game(g),
        options(std::move(o)),
        per_account(options.account_rate, options.account_burst),
        per_address(options.address_rate, options.address_burst),
        auth(options.auth_per_minute / 60.0, options.auth_per_minute) {}

  // The client's address for rate limits: the connection's, or behind a trusted reverse proxy
  // the last address the proxy appended to X-Forwarded-For (earlier entries are the client's
  // own claims and could be forged).
  std::string client_address(const httplib::Request& req) const {
    if (!options.trust_proxy) return req.remote_addr;
    const std::string fwd = req.get_header_value("X-Forwarded-For");
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

  // Parses the JSON body of a state-changing request (CSRF-relevant checks first).
  json body_of(const httplib::Request& req) {
    const std::string origin = req.get_header_value("Origin");
    if (!origin.empty() && origin != "null" &&
        origin_host(origin) != req.get_header_value("Host")) {
      throw GameError(403, "bad_origin", "cross-site request refused");
    }
    if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
      throw GameError(415, "bad_content_type", "send application/json");
    }
    json body;
    try {
      body = json::parse(req.body);
    } catch (const json::exception&) {
      throw GameError(400, "bad_json", "the body is not valid JSON");
    }
    if (!body.is_object()) throw GameError(400, "bad_json", "the body must be a JSON object");
    return body;
  }

  Session session_of(const httplib::Request& req, bool state_changing) {
    Session s = game.authenticate(cookie_value(req, kCookie));
    if (state_changing) {
      const std::string sent = req.get_header_value("X-CSRF-Token");
      if (sent.size() != s.csrf.size() ||
          sodium_memcmp(sent.data(), s.csrf.data(), sent.size()) != 0) {
        throw GameError(403, "bad_csrf", "missing or wrong CSRF token; reload the page");
      }
    }
    if (!per_account.allow("user:" + std::to_string(s.user_id))) {
      throw GameError(429, "rate_limited", "too many requests; slow down");
    }
    return s;
  }

  // Wraps a handler: typed errors become JSON 4xx, anything else a JSON 500.
  template <class F>
  httplib::Server::Handler wrap(F f) {
    return [this, f](const httplib::Request& req, httplib::Response& res) {
      try {
        f(req, res);
      } catch (const GameError& e) {
        send_error(res, e.status(), e.code(), e.what());
      } catch (const InputError& e) {
        send_error(res, 400, "bad_input", e.what());
      } catch (const UsageError& e) {
        send_error(res, 400, "bad_request", e.what());
      } catch (const json::exception& e) {
        send_error(res, 400, "bad_json", e.what());
      } catch (const std::exception& e) {
        send_error(res, 500, "internal", "internal error");
      }
    };
  }

  void routes() {
    auto& s = server;
    for (const auto& asset : web_assets()) {
      const WebAsset a = asset;
      s.Get(a.path, [a](const httplib::Request&, httplib::Response& res) {
        res.set_header("Cache-Control", "no-cache");
        res.set_content(a.body, a.content_type);
      });
    }
    s.Get(R"(/images/(.+))", wrap([this](const httplib::Request& req, httplib::Response& res) {
            const auto it = game.pool().find(req.matches[1]);
            if (it == game.pool().end()) throw GameError(404, "not_found", "no such image");
            res.set_header("Cache-Control", "public, max-age=86400");
            res.set_content(read_file(it->second), content_type_of(it->second).c_str());
          }));
    s.Get("/api/status", wrap([this](const httplib::Request&, httplib::Response& res) {
            send_json(res, 200, game.status());
          }));
    s.Post("/api/register", wrap([this](const httplib::Request& req, httplib::Response& res) {
             const json body = body_of(req);
             if (!auth.allow(client_address(req))) {
               throw GameError(429, "rate_limited", "too many attempts; wait a minute");
             }
             const AuthResult a =
                 game.register_user(string_field(body, "name"), string_field(body, "password"));
             res.set_header("Set-Cookie", session_cookie(a.token));
             send_json(res, 201, {{"user", a.user}, {"csrf", a.csrf}});
           }));
    s.Post("/api/login", wrap([this](const httplib::Request& req, httplib::Response& res) {
             const json body = body_of(req);
             if (!auth.allow(client_address(req))) {
               throw GameError(429, "rate_limited", "too many attempts; wait a minute");
             }
             const AuthResult a =
                 game.login(string_field(body, "name"), string_field(body, "password"));
             res.set_header("Set-Cookie", session_cookie(a.token));
             send_json(res, 200, {{"user", a.user}, {"csrf", a.csrf}});
           }));
    s.Post("/api/logout", wrap([this](const httplib::Request& req, httplib::Response& res) {
             body_of(req);
             session_of(req, true);
             game.logout(cookie_value(req, kCookie));
             res.set_header("Set-Cookie", session_cookie("", true));
             send_json(res, 200, {{"ok", true}});
           }));
    s.Get("/api/me", wrap([this](const httplib::Request& req, httplib::Response& res) {
            const Session se = session_of(req, false);
            json j = game.me(se);
            j["csrf"] = se.csrf;
            send_json(res, 200, j);
          }));
    s.Get("/api/qualification", wrap([this](const httplib::Request& req, httplib::Response& res) {
            send_json(res, 200, game.qualification_test(session_of(req, false)));
          }));
    s.Post("/api/qualification", wrap([this](const httplib::Request& req, httplib::Response& res) {
             const json body = body_of(req);
             const Session se = session_of(req, true);
             const auto it = body.find("answers");
             if (it == body.end()) throw GameError(400, "bad_request", "missing 'answers'");
             send_json(res, 200, game.submit_qualification(se, *it));
           }));
    s.Post("/api/rounds", wrap([this](const httplib::Request& req, httplib::Response& res) {
             body_of(req);
             send_json(res, 200, game.new_round(session_of(req, true)));
           }));
    s.Post(R"(/api/rounds/(\d+)/submit)",
           wrap([this](const httplib::Request& req, httplib::Response& res) {
             const std::int64_t id = path_id(req);
             const json body = body_of(req);
             const Session se = session_of(req, true);
             const std::string cue = string_field(body, "cue");
             send_json(res, 200, game.submit_round(se, id, cue, string_list(body, "associations")));
           }));
    s.Post(R"(/api/rounds/(\d+)/report)",
           wrap([this](const httplib::Request& req, httplib::Response& res) {
             const std::int64_t id = path_id(req);
             const json body = body_of(req);
             const Session se = session_of(req, true);
             send_json(res, 200, game.report(se, id, string_field(body, "reason", false)));
           }));
    s.Get("/api/solve/next", wrap([this](const httplib::Request& req, httplib::Response& res) {
            send_json(res, 200, game.next_solve(session_of(req, false)));
          }));
    s.Post(R"(/api/solve/(\d+))", wrap([this](const httplib::Request& req, httplib::Response& res) {
             const std::int64_t id = path_id(req);
             const json body = body_of(req);
             const Session se = session_of(req, true);
             send_json(res, 200, game.submit_solve(se, id, string_list(body, "picks")));
           }));
    s.Get("/api/leaderboard", wrap([this](const httplib::Request&, httplib::Response& res) {
            send_json(res, 200, game.leaderboard());
          }));
    s.Get("/api/admin/reports", wrap([this](const httplib::Request& req, httplib::Response& res) {
            send_json(res, 200, game.admin_reports(session_of(req, false)));
          }));
    s.Post(R"(/api/admin/reports/(\d+))",
           wrap([this](const httplib::Request& req, httplib::Response& res) {
             const std::int64_t id = path_id(req);
             const json body = body_of(req);
             const Session se = session_of(req, true);
             send_json(res, 200, game.admin_review(se, id, string_field(body, "action")));
           }));
    s.Get("/api/admin/export", wrap([this](const httplib::Request& req, httplib::Response& res) {
            const Session se = session_of(req, false);
            if (!se.admin) throw GameError(403, "not_admin", "admins only");
            double min_solvable = 80;
            if (req.has_param("min_solvable")) {
              try {
                min_solvable = std::stod(req.get_param_value("min_solvable"));
              } catch (const std::exception&) {
                throw GameError(400, "bad_request", "min_solvable must be a number");
              }
            }
            res.set_header("Cache-Control", "no-store");
            res.set_content(game.export_csv(min_solvable), "text/csv");
          }));
  }
};

GameServer::GameServer(Game& game, ServerOptions options)
    : impl_(std::make_unique<Impl>(game, std::move(options))) {
  auto& s = impl_->server;
  const int threads = impl_->options.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  s.set_payload_max_length(impl_->options.max_body);
  s.set_tcp_nodelay(true);  // small JSON replies: no Nagle / delayed-ACK stalls
  // Remember the listening socket: run() raises its backlog after httplib's listen().
  s.set_socket_options([this](socket_t sock) {
    httplib::default_socket_options(sock);
    impl_->listen_fd = sock;
  });
  s.set_read_timeout(10, 0);
  s.set_write_timeout(10, 0);
  s.set_keep_alive_timeout(5);
  s.set_keep_alive_max_count(10000);
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; "
                   "frame-ancestors 'none'");
    if (!impl_->per_address.allow(impl_->client_address(req))) {
      send_error(res, 429, "rate_limited", "too many requests from this address");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    const int status = res.status;
    const std::string code = status == 413   ? "too_large"
                             : status == 404 ? "not_found"
                             : status == 400 ? "bad_request"
                                             : "error";
    send_error(res, status, code, status == 413 ? "the request body is too large" : "error");
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    send_error(res, 500, "internal", "internal error");
  });
  impl_->routes();
}

GameServer::~GameServer() = default;

void GameServer::run(const std::function<void(int)>& on_ready) {
  auto& s = impl_->server;
  int port = impl_->options.port;
  if (port == 0) {
    port = s.bind_to_any_port(impl_->options.host);
    if (port < 0) throw IoError("cannot bind " + impl_->options.host);
  } else if (!s.bind_to_port(impl_->options.host, port)) {
    throw IoError("cannot listen on " + impl_->options.host + ":" + std::to_string(port) +
                  " (in use? try --port)");
  }
  // The library listens with a backlog of 5; many players connecting at once would overflow it
  // (SYN retries cost seconds). listen() again on the bound socket sets the real backlog.
  if (impl_->listen_fd >= 0) ::listen(impl_->listen_fd, kListenBacklog);
  if (on_ready) on_ready(port);
  s.listen_after_bind();
}

void GameServer::stop() {
  impl_->server.stop();
}

}  // namespace winokit
