// The store's statement table (winokit/game/store.hpp) and the HTTP status of each game error
// kind (winokit/game/server.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "game_test_util.hpp"
#include "winokit/game/store.hpp"

namespace winokit {
namespace {

TEST(GameStore, TableIsInStatementOrderWithUniqueNames) {
  const auto& table = statements();
  ASSERT_EQ(table.size(), static_cast<std::size_t>(Stmt::select_schema_version) + 1);
  std::set<std::string> names;
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(table[i].id), i) << table[i].name;
    EXPECT_TRUE(names.insert(table[i].name).second) << "twice: " << table[i].name;
    EXPECT_FALSE(std::string(table[i].sql).empty()) << table[i].name;
    // Without its own PostgreSQL text, a statement runs the same text on both backends.
    const char* pg = statement_sql(table[i].id, "postgresql");
    EXPECT_STREQ(pg, table[i].postgres ? table[i].postgres : table[i].sql) << table[i].name;
    EXPECT_STREQ(statement_sql(table[i].id, "sqlite"), table[i].sql) << table[i].name;
  }
  EXPECT_STREQ(statement(Stmt::insert_round).name, "insert_round");
}

// Every statement prepares and runs against the migrated schema (0 for each parameter, each in
// a transaction rolled back): a misspelt column or table fails here, not in a player's request.
// SQLite, or PostgreSQL when WINOKIT_TEST_POSTGRES is set.
TEST(GameStore, EveryStatementRunsAgainstTheSchema) {
  test::TempDir dir;
  auto db = test_database(dir);
  migrate(*db);
  Store store(*db);
  for (const auto& s : statements()) {
    const std::string sql = statement_sql(s.id, db->kind());
    const auto params = static_cast<std::size_t>(std::count(sql.begin(), sql.end(), '?'));
    Transaction tx(*db);
    try {
      store.run(s.id, std::vector<DbValue>(params, std::int64_t{0}));
    } catch (const DbConstraintError&) {
      // No user or round 0 for a foreign key: the statement itself is sound.
    } catch (const std::exception& e) {
      ADD_FAILURE() << s.name << ": " << e.what();
    }
  }
}

// The game's logic names statements; SQL text lives only in the store (and the migrations).
TEST(GameStore, NoSqlOutsideTheStore) {
  const std::filesystem::path root = WINOKIT_SOURCE_DIR;
  std::vector<std::filesystem::path> files = {root / "tools/winokit/cmd_game.cpp"};
  for (const auto& e : std::filesystem::directory_iterator(root / "src/game")) {
    const auto name = e.path().filename().string();
    if (name != "store.cpp" && name != "db.cpp") files.push_back(e.path());
  }
  ASSERT_GT(files.size(), 5u);
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (const char* verb : {"\"SELECT ", "\"INSERT ", "\"UPDATE ", "\"DELETE ", "\"CREATE "}) {
      EXPECT_EQ(s.find(verb), std::string::npos) << f << " holds SQL (" << verb << ")";
    }
  }
}

TEST(GameErrors, EachKindHasOneHttpStatus) {
  const std::vector<std::pair<GameErrorKind, int>> expected = {
      {GameErrorKind::Invalid, 400},        {GameErrorKind::Unauthorized, 401},
      {GameErrorKind::Forbidden, 403},      {GameErrorKind::NotFound, 404},
      {GameErrorKind::WrongMethod, 405},    {GameErrorKind::Conflict, 409},
      {GameErrorKind::Gone, 410},           {GameErrorKind::TooLarge, 413},
      {GameErrorKind::WrongMediaType, 415}, {GameErrorKind::RateLimited, 429},
      {GameErrorKind::Internal, 500},       {GameErrorKind::Busy, 503},
  };
  for (const auto& [kind, status] : expected)
    EXPECT_EQ(http_status(kind), status) << static_cast<int>(kind);
  const GameError e(GameErrorKind::Conflict, "name_taken", "this name is taken");
  EXPECT_EQ(e.kind(), GameErrorKind::Conflict);
  EXPECT_EQ(e.code(), "name_taken");
  EXPECT_STREQ(e.what(), "this name is taken");
}

}  // namespace
}  // namespace winokit
