// The WinoGAViL game as a service, independent of HTTP: the facade the server and the CLI use,
// delegating to the use cases (game/auth.hpp: accounts and sessions; game/rounds.hpp:
// qualification, rounds against the rival, solving by three other players; game/moderation.hpp:
// reports and their review; game/board.hpp: dashboard and leaderboard; game/export.hpp: the
// export that feeds the benchmark), which keep their SQL in the store (game/store.hpp). Every
// method validates its input, commits its writes before returning, and throws GameError (a
// domain kind, a code, a message) for anything it refuses.
//
//   auto db = winokit::open_database("game.db");
//   winokit::Game game(std::move(db), pool, std::move(rival), {});
//   auto auth = game.register_user("ana", "correct horse");         // {token, csrf, user}
//   // names: 3-32 of [A-Za-z0-9_.-], at least one letter or digit, unique regardless of case
//   winokit::Session s = game.authenticate(auth.token);
//   auto draft = game.new_round(s);                                   // candidates
//   auto result = game.submit_round(s, draft["id"], "ocean", {"sea", "boat"});
//   std::string csv = game.export_csv(80);                           // the WinoGAViL layout
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"
#include "winokit/game/db.hpp"
#include "winokit/game/image_pool.hpp"
#include "winokit/game/rival.hpp"
#include "winokit/game/rules.hpp"
#include "winokit/model/vl_model.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

enum class PasswordCost { Interactive, Moderate, Minimum };

struct GameConfig {
  GameRules rules;
  std::set<std::string> blocklist = default_blocklist();
  // The solvers' qualification test (gold associations); empty: no test, every player may solve.
  std::vector<AssociationInstance> qualification;
  int qualification_attempts = 3;
  std::int64_t session_seconds = 7 * 24 * 3600;
  std::int64_t assignment_timeout_seconds = 600;  // an unsolved assignment is then freed
  PasswordCost password_cost = PasswordCost::Interactive;
  // Existing accounts given the admin role at start (names match regardless of case); the
  // constructor throws UsageError for a name no account has. Registering never makes an admin.
  std::set<std::string> admins;
  std::uint64_t seed = 0;  // candidate sampling; 0: from the system's random source
};

struct Session {
  std::int64_t user_id = 0;
  std::string name, csrf;
  bool admin = false;
};

struct AuthResult {
  std::string token, csrf;
  nlohmann::json user;
};

class Game {
 public:
  Game(std::unique_ptr<Database> db, std::map<std::string, std::filesystem::path> pool,
       std::unique_ptr<Rival> rival, GameConfig config);
  // Several connections to one database (PostgreSQL): requests use them side by side.
  Game(std::vector<std::unique_ptr<Database>> connections,
       std::map<std::string, std::filesystem::path> pool, std::unique_ptr<Rival> rival,
       GameConfig config);
  ~Game();

  AuthResult register_user(const std::string& name, const std::string& password);
  AuthResult login(const std::string& name, const std::string& password);
  void logout(const std::string& token);
  // Throws GameError (Unauthorized) for an unknown, expired or malformed token.
  Session authenticate(const std::string& token);

  nlohmann::json status() const;
  nlohmann::json me(const Session& s);
  nlohmann::json qualification_test(const Session& s);
  nlohmann::json submit_qualification(const Session& s, const nlohmann::json& answers);
  nlohmann::json new_round(const Session& s);
  nlohmann::json submit_round(const Session& s, std::int64_t round_id, const std::string& cue,
                              const std::vector<std::string>& associations);
  nlohmann::json next_solve(const Session& s);
  nlohmann::json submit_solve(const Session& s, std::int64_t round_id,
                              const std::vector<std::string>& picks);
  nlohmann::json report(const Session& s, std::int64_t round_id, const std::string& reason);
  nlohmann::json admin_reports(const Session& s);
  nlohmann::json admin_review(const Session& s, std::int64_t report_id, const std::string& action);
  nlohmann::json leaderboard();
  // Complete, visible associations with solvable-by-humans >= min_solvable, in the WinoGAViL
  // CSV layout, ordered by id.
  std::string export_csv(double min_solvable);

  const std::map<std::string, std::filesystem::path>& pool() const;
  // The images' opaque ids (what the client sees instead of file names).
  const ImageIds& image_ids() const;
  // The image `name` as a JPEG whose shorter side is `side` pixels, one of kThumbnailSides
  // (cached); nullptr when that is no fewer bytes than the original file (serve the file);
  // GameError (NotFound / Invalid) for an unknown or unreadable image or another size.
  static constexpr int kThumbnailSides[] = {160, 320, 640};
  std::shared_ptr<const std::string> thumbnail(const std::string& name, int side);
  const GameConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace winokit
