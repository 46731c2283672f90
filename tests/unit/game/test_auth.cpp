// Accounts: names unique regardless of case, stored case variants, the admin role
// (winokit/game/auth.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "game_test_util.hpp"

namespace winokit {
namespace {

using nlohmann::json;

TEST(Game, NamesAreUniqueRegardlessOfCaseAndNeedALetterOrDigit) {
  test::TempDir dir;
  auto game = make_game(dir);
  game->register_user("alice", "password1");
  for (const char* variant : {"ALICE", "Alice", "aLiCe"})
    EXPECT_EQ(error_status([&] { game->register_user(variant, "password1"); }), 409) << variant;
  for (const char* bad : {"...", "---", "___", "._-", "al ice",
                          "al\xc3\xa9"
                          "ce"})
    EXPECT_EQ(error_status([&] { game->register_user(bad, "password1"); }), 400) << bad;
  game->register_user("_a_", "password1");
  game->register_user("..7", "password1");
  // Signing in matches the name regardless of case too.
  EXPECT_EQ(game->authenticate(game->login("ALICE", "password1").token).name, "alice");
}

TEST(Game, CaseVariantsAlreadyStoredKeepTheirAccountsUnderANewName) {
  test::TempDir dir;
  {
    auto db = test_database(dir);
    migrate(*db);
    // A database from before names were case-folded: undo migrations 3 and 4 (the settings
    // table, later), add two variants.
    db->query("DROP INDEX users_name_folded");
    db->query("DROP TABLE game_settings");
    db->query("DELETE FROM schema_migrations WHERE version >= 3");
    for (const char* n : {"bob", "BOB", "Bob"})
      db->query("INSERT INTO users (name, pass_hash, created_at) VALUES (?, 'x', 0)",
                {std::string(n)});
    migrate(*db);
    std::vector<std::string> names;
    for (const auto& r : db->query("SELECT name FROM users ORDER BY id"))
      names.push_back(db_text(r[0]));
    EXPECT_EQ(names, (std::vector<std::string>{"bob", "BOB~2", "Bob~3"}));
  }
}

TEST(Game, AdminRoleGoesOnlyToAnExistingAccount) {
  test::TempDir dir;
  GameConfig c = fast_config();
  c.admins = {"boss"};
  // No account named boss yet: refused, so whoever registers it first gets nothing.
  EXPECT_THROW(make_game(dir, c), UsageError);
  auto game = make_game(dir);
  const AuthResult boss = game->register_user("boss", "password1");
  EXPECT_FALSE(game->authenticate(boss.token).admin);
  EXPECT_EQ(error_status([&] { game->admin_reports(game->authenticate(boss.token)); }), 403);
  EXPECT_THROW(set_game_admin(*second_connection(dir), "nobody", true), UsageError);
  EXPECT_EQ(set_game_admin(*second_connection(dir), "BOSS", true), "boss");
  EXPECT_TRUE(game->authenticate(boss.token).admin);
  EXPECT_EQ(list_game_admins(*second_connection(dir)), (std::vector<std::string>{"boss"}));
  game.reset();
  c.admins = {"Boss"};
  // An existing account: fine (the same database, not emptied as make_game does on PostgreSQL).
  auto again = std::make_unique<Game>(second_connection(dir), make_pool(dir, 20),
                                      std::make_unique<FirstKRival>(), c);
  EXPECT_TRUE(again->authenticate(again->login("boss", "password1").token).admin);
}

// Issue 23, item 6: sign-ins wait for a hashing slot on a bounded queue; beyond it they are
// answered at once with 503 (Busy), so they cannot hold every HTTP worker.
TEST(Game, SignInsBeyondTheHashingQueueAreBusyNotQueued) {
  test::TempDir dir;
  GameConfig c = fast_config();
  c.password_cost = PasswordCost::Interactive;  // 64 MiB each: hashes that overlap
  auto game = make_game(dir, c);
  game->register_user("ana", "password1");
  constexpr int kClients = 40;  // more than 8 slots + a queue of 2 per slot
  std::atomic<int> ok{0}, busy{0}, other{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&] {
      try {
        game->login("ana", "password1");
        ++ok;
      } catch (const GameError& e) {
        (e.kind() == GameErrorKind::Busy ? busy : other)++;
      }
    });
  }
  for (auto& t : clients)
    t.join();
  EXPECT_GT(ok.load(), 0);
  EXPECT_GT(busy.load(), 0);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(http_status(GameErrorKind::Busy), 503);
}

// Issue 23, item 6: password guessing on one account from many addresses: after 5 failures the
// account waits (exponentially longer), whatever the address; other accounts are not affected.
TEST(Game, FailedSignInsDelayTheAccountNotLockIt) {
  test::TempDir dir;
  auto game = make_game(dir);
  game->register_user("ana", "password1");
  game->register_user("bob", "password1");
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(error_status([&] { game->login("ana", "wrong-pass"); }), 401) << i;
  try {
    game->login("ANA", "password1");  // the right password, another spelling: still waits
    FAIL() << "no delay after 5 failures";
  } catch (const GameError& e) {
    EXPECT_EQ(e.code(), "account_throttled");
    EXPECT_EQ(http_status(e.kind()), 429);
    EXPECT_NE(std::string(e.what()).find("try again in"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(game->login("bob", "password1"));
}

}  // namespace
}  // namespace winokit
