// The game's store: every SQL statement of the game's logic in one table, by name, with the
// spelling each backend needs (SQLite and PostgreSQL share one today; a statement that needs
// its own PostgreSQL text names it in the table), run over a connection from game/db.hpp. The
// use cases (auth, rounds, moderation, board, export) name statements and never hold SQL.
//
//   winokit::Store store(db);                                      // db: a Database&
//   auto rows = store.run(winokit::Stmt::select_user, {user_id});  // `?` parameters in order
//   for (const auto& s : winokit::statements()) std::cout << s.name << ": " << s.sql << "\n";
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winokit/game/db.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

// Every statement the game runs (the order is the table's, statements()).
enum class Stmt {
  // accounts and sessions (auth)
  insert_user,
  select_login,
  select_user,
  select_solver_qualified,
  set_admin_by_name,
  list_admins,
  insert_session,
  select_session,
  delete_session,
  delete_expired_sessions,
  // qualification and rounds
  select_qualification_attempts,
  insert_qualification_result,
  update_qualification_result,
  set_solver_qualified,
  select_creator_rounds,
  select_draft,
  lock_user,
  count_created_rounds,
  count_solved_assignments,
  insert_round,
  select_round_of_creator,
  select_round_state_of_creator,
  submit_round,
  select_solvable_rounds,
  delete_stale_assignments,
  select_held_assignment,
  select_taken_slots,
  insert_assignment,
  select_round_for_solver,
  lock_round,
  select_round_to_solve,
  select_assignment,
  solve_assignment,
  increment_solves,
  select_solved_scores,
  complete_round,
  // moderation
  select_round_state,
  select_seen,
  hide_round,
  insert_report,
  count_round_reporters,
  select_pending_report_by,
  select_pending_reports,
  select_report,
  review_reports,
  restore_round,
  remove_round,
  // dashboard and leaderboard (board)
  select_dashboard_rounds,
  select_dashboard_solves,
  select_qualification_result,
  select_reported_rounds,
  count_possible_solvers,
  delete_unsolved_assignment,
  insert_setting,
  select_setting,
  leaderboard_spymasters,
  leaderboard_solvers,
  // export
  select_export_rounds,
  // the schema (read only: a database the game did not create is not altered)
  select_schema_version,
};

struct Statement {
  Stmt id;
  const char* name;      // "insert_round"
  const char* sql;       // with `?` placeholders; SQLite's, and PostgreSQL's unless below
  const char* postgres;  // PostgreSQL's own text, or nullptr when `sql` serves both
};

// The table, in Stmt order.
const std::vector<Statement>& statements();
const Statement& statement(Stmt id);
// The text `id` runs as on a backend ("sqlite" or "postgresql", Database::kind()).
const char* statement_sql(Stmt id, const std::string& kind);

class Store {
 public:
  explicit Store(Database& db) : db_(db), postgres_(db.kind() == "postgresql") {}
  std::vector<DbRow> run(Stmt id, const std::vector<DbValue>& params = {});
  Database& database() { return db_; }

 private:
  Database& db_;
  bool postgres_;
};

// Stored values: lists are JSON text ("" reads as an empty list); times are Unix seconds.
nlohmann::json stored_list(const DbValue& v);
std::vector<std::string> stored_strings(const DbValue& v);
std::int64_t store_now();

}  // namespace winokit
