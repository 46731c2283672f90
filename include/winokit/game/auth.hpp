// The game's accounts and sessions: registration and sign-in with Argon2id password hashes
// (a bounded number hashed at once), session tokens and their CSRF tokens, and the admin role
// (granted offline by `winokit game admin`, never by registering).
//
//   winokit::Auth auth(connections, config);                    // connections: ConnectionPool&
//   winokit::AuthResult a = auth.register_user("ana", "correct horse");
//   winokit::Session s = auth.authenticate(a.token);            // GameError (Unauthorized) if not
//   winokit::set_game_admin(db, "ana", true);                   // db: a Database&
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/game/db.hpp"
#include "winokit/game/game.hpp"
#include "winokit/game/store.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

class Auth {
 public:
  // Prepares the hash verified for unknown names (same cost as a real one).
  Auth(ConnectionPool& connections, const GameConfig& config);
  ~Auth();
  AuthResult register_user(const std::string& name, const std::string& password);
  AuthResult login(const std::string& name, const std::string& password);
  void logout(const std::string& token);
  Session authenticate(const std::string& token);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// {id, name, admin, solver_qualified}; GameError (NotFound) for an unknown id.
nlohmann::json user_json(Store& store, std::int64_t user_id);
bool solver_qualified(Store& store, std::int64_t user_id);

// `winokit game admin`: grants or revokes the admin role of an existing account (names match
// regardless of case; takes effect on the account's next request, sessions included). Returns
// the name as stored; throws UsageError when no account has that name.
std::string set_game_admin(Database& db, const std::string& name, bool admin);
std::vector<std::string> list_game_admins(Database& db);

}  // namespace winokit
