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

// The client never sees an image's file name (in the WinoGAViL pools it is the concept
// itself): every list of images in a reply carries opaque ids instead.
bool is_image_list_key(const std::string& key) {
  return key == "candidates" || key == "associations" || key == "model_picks" || key == "picks";
}

void hide_names(json& j, const ImageIds& ids) {
  if (j.is_array()) {
    for (auto& v : j)
      hide_names(v, ids);
    return;
  }
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (is_image_list_key(it.key()) && it->is_array()) {
      for (auto& v : *it) {
        if (v.is_string()) v = ids.id_of(v.get<std::string>());
      }
    } else {
      hide_names(*it, ids);
    }
  }
}

// Ids the client sends back, as names; an unknown id (or a name) matches no candidate.
std::vector<std::string> names_of(const std::vector<std::string>& given, const ImageIds& ids) {
  std::vector<std::string> out;
  for (const auto& id : given) {
    const std::string* name = ids.name_of(id);
    out.push_back(name ? *name : std::string("\x01unknown"));
  }
  return out;
}

// ?w= of an image: one of the thumbnail sides; 0 when absent (the original file).
int width_param(const HttpRequest& req) {
  int w = 0;
  for (const auto& kv : req.params) {
    if (kv.first != "w") continue;
    w = -1;
    for (int side : Game::kThumbnailSides)
      if (kv.second == std::to_string(side)) w = side;
    if (w < 0) throw GameError(GameErrorKind::Invalid, "bad_size", "w is 160, 320 or 640");
  }
  return w;
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
  // Images by opaque id (never by name): `?w=160|320|640` a JPEG thumbnail at that size
  // (made once, then cached), else the original file.
  on("GET", "/images/*", [this](const HttpRequest& req, const Captures& m, HttpResponse& res) {
    const std::string* name = game.image_ids().name_of(m[0]);
    const auto it = name ? game.pool().find(*name) : game.pool().end();
    if (it == game.pool().end())
      throw GameError(GameErrorKind::NotFound, "not_found", "no such image");
    const int w = width_param(req);
    res.headers.emplace_back("Cache-Control", "public, max-age=86400");
    if (w > 0) {
      if (const auto jpeg = game.thumbnail(*name, w)) {
        res.body = *jpeg;
        res.content_type = "image/jpeg";
        return;
      }
    }
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
    hide_names(j, game.image_ids());
    j["csrf"] = se.csrf;
    send_json(res, 200, j);
  });
  on("GET", "/api/qualification",
     [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
       json j = game.qualification_test(session_of(req, false));
       hide_names(j, game.image_ids());
       send_json(res, 200, j);
     });
  on("POST", "/api/qualification",
     [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
       const json body = body_of(req);
       const Session se = session_of(req, true);
       const auto it = body.find("answers");
       if (it == body.end())
         throw GameError(GameErrorKind::Invalid, "bad_request", "missing 'answers'");
       json answers = *it;
       if (answers.is_object()) {
         for (auto a = answers.begin(); a != answers.end(); ++a) {
           if (!a->is_array()) continue;
           for (auto& v : *a)
             if (v.is_string()) v = names_of({v.get<std::string>()}, game.image_ids())[0];
         }
       }
       send_json(res, 200, game.submit_qualification(se, answers));
     });
  on("POST", "/api/rounds", [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
    body_of(req);
    json j = game.new_round(session_of(req, true));
    hide_names(j, game.image_ids());
    send_json(res, 200, j);
  });
  on("POST", "/api/rounds/{id}/submit",
     [this](const HttpRequest& req, const Captures& m, HttpResponse& res) {
       const std::int64_t id = path_id(m);
       const json body = body_of(req);
       const Session se = session_of(req, true);
       const std::string cue = string_field(body, "cue");
       json j = game.submit_round(se, id, cue,
                                  names_of(string_list(body, "associations"), game.image_ids()));
       hide_names(j, game.image_ids());
       send_json(res, 200, j);
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
    json j = game.next_solve(session_of(req, true));
    hide_names(j, game.image_ids());
    send_json(res, 200, j);
  });
  on("POST", "/api/solve/{id}",
     [this](const HttpRequest& req, const Captures& m, HttpResponse& res) {
       const std::int64_t id = path_id(m);
       const json body = body_of(req);
       const Session se = session_of(req, true);
       json j = game.submit_solve(se, id, names_of(string_list(body, "picks"), game.image_ids()));
       hide_names(j, game.image_ids());
       send_json(res, 200, j);
     });
  on("GET", "/api/leaderboard", [this](const HttpRequest&, const Captures&, HttpResponse& res) {
    send_json(res, 200, game.leaderboard());
  });
  on("GET", "/api/admin/reports",
     [this](const HttpRequest& req, const Captures&, HttpResponse& res) {
       json j = game.admin_reports(session_of(req, false));
       hide_names(j, game.image_ids());
       send_json(res, 200, j);
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
