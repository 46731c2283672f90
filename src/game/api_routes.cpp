// The game server's routes: one small handler per endpoint, each unpacking its request and
// calling the Game. Checks shared by all (limits, target length, errors) are in server.cpp.
#include <cmath>
#include <stdexcept>

#include "server_impl.hpp"
#include "winokit/core/error.hpp"

namespace winokit {

using nlohmann::json;
using namespace http;

namespace {

constexpr double kDefaultMinSolvable = 80;

// ?min_solvable=N of the admin export: a finite number.
double min_solvable_param(const HttpRequest& req) {
  double min_solvable = kDefaultMinSolvable;
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
  return min_solvable;
}

}  // namespace

void GameServer::Impl::routes() {
  using Captures = std::vector<std::string>;
  for (const auto& asset : web_assets()) {
    const WebAsset a = asset;
    on("GET", a.path, [a](const HttpRequest&, const Captures&, HttpResponse& res) {
      res.headers.emplace_back("Cache-Control", "no-cache");
      res.body = a.body;
      res.content_type = a.content_type;
    });
  }
  // Served from the file by the daemon (no copy per connection); handle() alone leaves the body
  // empty and names the file.
  on("GET", "/images/*", [this](const HttpRequest&, const Captures& m, HttpResponse& res) {
    const auto it = game.pool().find(m[0]);
    if (it == game.pool().end())
      throw GameError(GameErrorKind::NotFound, "not_found", "no such image");
    res.headers.emplace_back("Cache-Control", "public, max-age=86400");
    res.file = it->second;
    res.content_type = content_type_of(it->second);
  });
  on("GET", "/api/status", [this](const HttpRequest&, const Captures&, HttpResponse& res) {
    send_json(res, 200, game.status());
  });
  on("POST", "/api/register", [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
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
  on("POST", "/api/login", [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
    const json body = body_of(req);
    if (!auth.allow(client_address(req))) {
      throw GameError(GameErrorKind::RateLimited, "rate_limited",
                      "too many attempts; wait a minute");
    }
    const AuthResult a = game.login(string_field(body, "name"), string_field(body, "password"));
    res.headers.emplace_back("Set-Cookie", session_cookie(a.token));
    send_json(res, 200, {{"user", a.user}, {"csrf", a.csrf}});
  });
  on("POST", "/api/logout", [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
    body_of(req);
    session_of(req, true);
    game.logout(cookie_value(req, kCookie));
    res.headers.emplace_back("Set-Cookie", session_cookie("", true));
    send_json(res, 200, {{"ok", true}});
  });
  on("GET", "/api/me", [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
    const Session se = session_of(req, false);
    json j = game.me(se);
    j["csrf"] = se.csrf;
    send_json(res, 200, j);
  });
  on("GET", "/api/qualification",
     [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
       send_json(res, 200, game.qualification_test(session_of(req, false)));
     });
  on("POST", "/api/qualification",
     [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
       const json body = body_of(req);
       const Session se = session_of(req, true);
       const auto it = body.find("answers");
       if (it == body.end())
         throw GameError(GameErrorKind::Invalid, "bad_request", "missing 'answers'");
       send_json(res, 200, game.submit_qualification(se, *it));
     });
  on("POST", "/api/rounds", [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
    body_of(req);
    send_json(res, 200, game.new_round(session_of(req, true)));
  });
  on("POST", "/api/rounds/{id}/submit",
     [this](const HttpRequest& req, const Captures& m, HttpResponse& res) {
       const std::int64_t id = path_id(m);
       const json body = body_of(req);
       const Session se = session_of(req, true);
       const std::string cue = string_field(body, "cue");
       send_json(res, 200, game.submit_round(se, id, cue, string_list(body, "associations")));
     });
  on("POST", "/api/rounds/{id}/report",
     [this](const HttpRequest& req, const Captures& m, HttpResponse& res) {
       const std::int64_t id = path_id(m);
       const json body = body_of(req);
       const Session se = session_of(req, true);
       if (!reports.allow("user:" + std::to_string(se.user_id))) {
         throw GameError(GameErrorKind::RateLimited, "report_rate_limited",
                         "too many reports; wait a minute");
       }
       send_json(res, 200, game.report(se, id, string_field(body, "reason", false)));
     });
  // Hands the player a task (and records it): a state change, so POST with the CSRF token; a
  // GET is 405 (a link or an image tag on another site cannot assign tasks).
  on("POST", "/api/solve/next", [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
    body_of(req);
    send_json(res, 200, game.next_solve(session_of(req, true)));
  });
  on("POST", "/api/solve/{id}",
     [this](const HttpRequest& req, const Captures& m, HttpResponse& res) {
       const std::int64_t id = path_id(m);
       const json body = body_of(req);
       const Session se = session_of(req, true);
       send_json(res, 200, game.submit_solve(se, id, string_list(body, "picks")));
     });
  on("GET", "/api/leaderboard", [this](const HttpRequest&, const Captures&, HttpResponse& res) {
    send_json(res, 200, game.leaderboard());
  });
  on("GET", "/api/admin/reports",
     [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
       send_json(res, 200, game.admin_reports(session_of(req, false)));
     });
  on("POST", "/api/admin/reports/{id}",
     [this](const HttpRequest& req, const Captures& m, HttpResponse& res) {
       const std::int64_t id = path_id(m);
       const json body = body_of(req);
       const Session se = session_of(req, true);
       send_json(res, 200, game.admin_review(se, id, string_field(body, "action")));
     });
  on("GET", "/api/admin/export",
     [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
       const Session se = session_of(req, false);
       if (!se.admin) throw GameError(GameErrorKind::Forbidden, "not_admin", "admins only");
       const double min_solvable = min_solvable_param(req);
       res.headers.emplace_back("Cache-Control", "no-store");
       res.body = game.export_csv(min_solvable);
       res.content_type = "text/csv";
     });
}

}  // namespace winokit
