// The WinoGAViL game as a service, independent of HTTP: accounts and sessions, qualification,
// rounds (a spymaster's cue and associations against the rival), solving by three other
// players, reports and their review, dashboard, leaderboard and the export that feeds the
// benchmark. Every method validates its input, commits its writes before returning, and throws
// GameError (an HTTP status, a code, a message) for anything it refuses.
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
#include "winokit/game/rules.hpp"
#include "winokit/model/embedding_runtime.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

// The rival AI: picks k of the candidates for a cue.
class Rival {
 public:
  virtual ~Rival() = default;
  virtual std::vector<std::string> pick(const std::string& cue,
                                        const std::vector<std::string>& candidates, int k) = 0;
  virtual std::string describe() const = 0;
  virtual bool random_weights() const = 0;
};

// CLIP zero-shot with the prompt "A/An <cue>" over the pool's image embeddings, computed once
// (through the embedding cache) when the rival is made; ties broken by candidate order.
std::unique_ptr<Rival> make_clip_rival(const ClipRuntime& runtime,
                                       const std::map<std::string, std::filesystem::path>& pool,
                                       bool random_weights);

// The images a game samples from: name (file stem) -> file. Throws IoError when the folder
// holds fewer than `min_images` PNG/JPEG/WebP files.
std::map<std::string, std::filesystem::path> scan_image_pool(const std::filesystem::path& dir,
                                                             std::size_t min_images);

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
  // Throws GameError 401 for an unknown, expired or malformed token.
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
  const GameConfig& config() const;

 private:
  static std::vector<std::unique_ptr<Database>> one_connection(std::unique_ptr<Database> db);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `winokit game admin`: grants or revokes the admin role of an existing account (names match
// regardless of case; takes effect on the account's next request, sessions included). Returns
// the name as stored; throws UsageError when no account has that name.
std::string set_game_admin(Database& db, const std::string& name, bool admin);
std::vector<std::string> list_game_admins(Database& db);

// `winokit game export` without a server: reads the database directly.
std::string export_game_csv(Database& db, double min_solvable);

}  // namespace winokit
