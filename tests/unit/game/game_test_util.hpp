// Shared by the game's unit tests (tests/unit/game/): a rival whose answer is known, an image
// pool, a fast configuration, the test's database (SQLite, or PostgreSQL when
// WINOKIT_TEST_POSTGRES is set) and a few helpers.
//
//   auto game = make_game(dir);
//   Session ana = join(*game, "ana");
//   EXPECT_EQ(error_status([&] { game->new_round(Session{}); }), 403);
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"
#include "winokit/eval/association_solver.hpp"
#include "winokit/game/auth.hpp"
#include "winokit/game/export.hpp"
#include "winokit/game/game.hpp"
#include "winokit/game/image_pool.hpp"
#include "winokit/game/server.hpp"
#include "winokit/io/table.hpp"

namespace winokit {

using nlohmann::json;

// A rival whose answer is known: the first k candidates in the order shown.
class FirstKRival final : public Rival {
 public:
  std::vector<std::string> pick(const std::string&, const std::vector<std::string>& candidates,
                                int k) override {
    return {candidates.begin(), candidates.begin() + k};
  }
  std::string describe() const override { return "first-k test rival"; }
  bool random_weights() const override { return true; }
};

inline std::map<std::string, std::filesystem::path> make_pool(const test::TempDir& dir, int n) {
  std::map<std::string, std::filesystem::path> pool;
  for (int i = 0; i < n; ++i) {
    const std::string name = "img" + std::to_string(i);
    pool[name] = dir.write("images/" + name + ".png", "\x89PNG fake " + name);
  }
  return pool;
}

inline GameConfig fast_config() {
  GameConfig c;
  c.password_cost = PasswordCost::Minimum;
  c.seed = 7;
  return c;
}

// SQLite in the test's folder, or, when WINOKIT_TEST_POSTGRES holds a URL (see
// tests/cli/game_postgres.sh), a PostgreSQL database emptied for the test.
inline std::unique_ptr<Database> test_database(const test::TempDir& dir) {
  if (const char* url = std::getenv("WINOKIT_TEST_POSTGRES")) {
    auto db = open_database(url);
    db->query("DROP SCHEMA IF EXISTS public CASCADE");
    db->query("CREATE SCHEMA public");
    return db;
  }
  return open_database((dir.path() / "game.db").string());
}

// A second connection to the test's database (what `winokit game admin` does offline).
inline std::unique_ptr<Database> second_connection(const test::TempDir& dir) {
  if (const char* url = std::getenv("WINOKIT_TEST_POSTGRES")) return open_database(url);
  return open_database((dir.path() / "game.db").string());
}

inline std::unique_ptr<Game> make_game(const test::TempDir& dir,
                                       GameConfig config = fast_config()) {
  return std::make_unique<Game>(test_database(dir), make_pool(dir, 20),
                                std::make_unique<FirstKRival>(), std::move(config));
}

// A new player, signed in.
inline Session join(Game& game, const std::string& name) {
  return game.authenticate(game.register_user(name, "password1").token);
}

inline int error_status(const std::function<void()>& f) {
  try {
    f();
  } catch (const GameError& e) {
    return http_status(e.kind());
  }
  return 0;
}

}  // namespace winokit
