// Every SQL statement of the game's logic, by name (see winokit/game/store.hpp).
#include "winokit/game/store.hpp"

#include <chrono>
#include <stdexcept>

namespace winokit {

namespace {

// One row per Stmt, in its order (checked when the table is first used).
const std::vector<Statement> kStatements = {
    // ---- accounts and sessions ----
    {Stmt::insert_user, "insert_user",
     "INSERT INTO users (name, pass_hash, is_admin, solver_qualified, created_at) VALUES (?, "
     "?, ?, ?, ?) RETURNING id",
     nullptr},
    {Stmt::select_login, "select_login",
     "SELECT id, pass_hash FROM users WHERE LOWER(name) = LOWER(?)", nullptr},
    {Stmt::select_user, "select_user",
     "SELECT id, name, is_admin, solver_qualified FROM users WHERE id = ?", nullptr},
    {Stmt::select_solver_qualified, "select_solver_qualified",
     "SELECT solver_qualified FROM users WHERE id = ?", nullptr},
    {Stmt::set_admin_by_name, "set_admin_by_name",
     "UPDATE users SET is_admin = ? WHERE LOWER(name) = LOWER(?) RETURNING name", nullptr},
    {Stmt::list_admins, "list_admins", "SELECT name FROM users WHERE is_admin = 1 ORDER BY name",
     nullptr},
    {Stmt::insert_session, "insert_session",
     "INSERT INTO sessions (token_hash, user_id, csrf, created_at, expires_at) VALUES "
     "(?, ?, ?, ?, ?)",
     nullptr},
    {Stmt::select_session, "select_session",
     "SELECT s.user_id, u.name, s.csrf, u.is_admin, s.expires_at FROM sessions s JOIN users u "
     "ON u.id = s.user_id WHERE s.token_hash = ?",
     nullptr},
    {Stmt::delete_session, "delete_session", "DELETE FROM sessions WHERE token_hash = ?", nullptr},
    {Stmt::delete_expired_sessions, "delete_expired_sessions",
     "DELETE FROM sessions WHERE expires_at < ?", nullptr},
    // ---- qualification and rounds ----
    {Stmt::select_qualification_attempts, "select_qualification_attempts",
     "SELECT attempts, passed FROM qualification_results WHERE user_id = ?", nullptr},
    {Stmt::insert_qualification_result, "insert_qualification_result",
     "INSERT INTO qualification_results (user_id, score, passed, attempts, taken_at) "
     "VALUES (?, ?, ?, 1, ?)",
     nullptr},
    {Stmt::update_qualification_result, "update_qualification_result",
     "UPDATE qualification_results SET score = ?, passed = ?, attempts = attempts + 1, "
     "taken_at = ? WHERE user_id = ?",
     nullptr},
    {Stmt::set_solver_qualified, "set_solver_qualified",
     "UPDATE users SET solver_qualified = 1 WHERE id = ?", nullptr},
    {Stmt::select_creator_rounds, "select_creator_rounds",
     "SELECT state, fool_score, solvable_score, id, cue, solves, hidden FROM rounds WHERE "
     "creator_id = ? AND state <> 'draft' AND removed = 0 AND qualification = 1 ORDER BY id",
     nullptr},
    {Stmt::select_draft, "select_draft",
     "SELECT id, candidates FROM rounds WHERE creator_id = ? AND state = 'draft'", nullptr},
    // A no-op write: the player's row stays locked until the transaction ends (PostgreSQL), so
    // concurrent "new round" requests of one player see each other's draft.
    {Stmt::lock_user, "lock_user", "UPDATE users SET is_admin = is_admin WHERE id = ?", nullptr},
    {Stmt::count_created_rounds, "count_created_rounds",
     "SELECT COUNT(*) FROM rounds WHERE creator_id = ? AND state <> 'draft'", nullptr},
    {Stmt::count_solved_assignments, "count_solved_assignments",
     "SELECT COUNT(*) FROM assignments WHERE solver_id = ? AND solved_at IS NOT NULL", nullptr},
    {Stmt::insert_round, "insert_round",
     "INSERT INTO rounds (creator_id, candidates, created_at, state, qualification) VALUES (?, "
     "?, ?, 'draft', ?) RETURNING id",
     nullptr},
    {Stmt::select_round_of_creator, "select_round_of_creator",
     "SELECT creator_id, state, candidates FROM rounds WHERE id = ?", nullptr},
    {Stmt::select_round_state_of_creator, "select_round_state_of_creator",
     "SELECT state FROM rounds WHERE id = ? AND creator_id = ?", nullptr},
    {Stmt::submit_round, "submit_round",
     "UPDATE rounds SET state = 'open', cue = ?, associations = ?, model_picks = ?, model_score "
     "= ?, fool_score = ?, submitted_at = ? WHERE id = ?",
     nullptr},
    // Rounds a user may solve now: open, visible, not theirs, not taken by them, a free slot.
    {Stmt::select_solvable_rounds, "select_solvable_rounds",
     "SELECT r.id FROM rounds r WHERE r.state = 'open' AND r.hidden = 0 AND r.removed = 0 AND "
     "r.creator_id <> ? AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.round_id = r.id "
     "AND a.solver_id = ?) AND NOT EXISTS (SELECT 1 FROM reports p WHERE p.round_id = r.id AND "
     "p.reporter_id = ?) AND (SELECT COUNT(*) FROM assignments a2 WHERE "
     "a2.round_id = r.id) "
     "< ? ORDER BY r.id LIMIT ?",
     nullptr},
    {Stmt::delete_stale_assignments, "delete_stale_assignments",
     "DELETE FROM assignments WHERE solved_at IS NULL AND assigned_at < ?", nullptr},
    {Stmt::select_held_assignment, "select_held_assignment",
     "SELECT a.round_id FROM assignments a JOIN rounds r ON r.id = a.round_id WHERE "
     "a.solver_id = ? AND a.solved_at IS NULL AND r.hidden = 0 AND r.removed = 0 AND NOT EXISTS "
     "(SELECT 1 FROM reports p WHERE p.round_id = a.round_id AND p.reporter_id = a.solver_id) "
     "ORDER BY a.round_id LIMIT 1",
     nullptr},
    {Stmt::select_taken_slots, "select_taken_slots",
     "SELECT slot FROM assignments WHERE round_id = ?", nullptr},
    {Stmt::insert_assignment, "insert_assignment",
     "INSERT INTO assignments (round_id, slot, solver_id, assigned_at) VALUES (?, ?, ?, ?)",
     nullptr},
    {Stmt::select_round_for_solver, "select_round_for_solver",
     "SELECT id, cue, candidates, associations FROM rounds WHERE id = ?", nullptr},
    // A no-op write that takes the round's row lock (PostgreSQL; SQLite holds the write lock).
    {Stmt::lock_round, "lock_round", "UPDATE rounds SET solves = solves WHERE id = ?", nullptr},
    {Stmt::select_round_to_solve, "select_round_to_solve",
     "SELECT r.creator_id, r.state, r.candidates, r.associations, r.fool_score, r.hidden, "
     "r.removed FROM rounds r WHERE r.id = ?",
     nullptr},
    {Stmt::select_assignment, "select_assignment",
     "SELECT solved_at FROM assignments WHERE round_id = ? AND solver_id = ?", nullptr},
    {Stmt::solve_assignment, "solve_assignment",
     "UPDATE assignments SET picks = ?, score = ?, solved_at = ? WHERE round_id = ? AND "
     "solver_id = ?",
     nullptr},
    {Stmt::increment_solves, "increment_solves",
     "UPDATE rounds SET solves = solves + 1 WHERE id = ?", nullptr},
    {Stmt::select_solved_scores, "select_solved_scores",
     "SELECT score FROM assignments WHERE round_id = ? AND solved_at IS NOT NULL ORDER BY slot",
     nullptr},
    {Stmt::complete_round, "complete_round",
     "UPDATE rounds SET state = 'complete', solvable_score = ?, solvable_std = ?, bonus "
     "= ? WHERE id = ?",
     nullptr},
    // ---- moderation ----
    {Stmt::select_round_state, "select_round_state",
     "SELECT state, creator_id FROM rounds WHERE id = ?", nullptr},
    {Stmt::select_seen, "select_seen",
     "SELECT 1 FROM assignments WHERE round_id = ? AND solver_id = ?", nullptr},
    {Stmt::hide_round, "hide_round", "UPDATE rounds SET hidden = 1 WHERE id = ?", nullptr},
    {Stmt::insert_report, "insert_report",
     "INSERT INTO reports (round_id, reporter_id, reason, created_at, state) VALUES (?, ?, ?, ?, "
     "'pending') RETURNING id",
     nullptr},
    {Stmt::count_round_reporters, "count_round_reporters",
     "SELECT COUNT(DISTINCT reporter_id) FROM reports WHERE round_id = ? AND state = 'pending'",
     nullptr},
    {Stmt::select_pending_report_by, "select_pending_report_by",
     // Any report of theirs, reviewed or not: a restored association is not given back to the
     // player who reported it.
     "SELECT 1 FROM reports WHERE round_id = ? AND reporter_id = ?", nullptr},
    {Stmt::select_pending_reports, "select_pending_reports",
     "SELECT p.id, p.round_id, p.reason, p.created_at, u.name, r.cue, r.candidates, "
     "r.associations, c.name FROM reports p JOIN users u ON u.id = p.reporter_id JOIN "
     "rounds r ON r.id = p.round_id JOIN users c ON c.id = r.creator_id WHERE p.state = "
     "'pending' ORDER BY p.id",
     nullptr},
    {Stmt::select_report, "select_report", "SELECT round_id, state FROM reports WHERE id = ?",
     nullptr},
    {Stmt::review_reports, "review_reports",
     "UPDATE reports SET state = ?, reviewed_by = ?, reviewed_at = ? WHERE round_id = ? AND "
     "state = 'pending'",
     nullptr},
    {Stmt::restore_round, "restore_round", "UPDATE rounds SET hidden = 0 WHERE id = ?", nullptr},
    {Stmt::remove_round, "remove_round", "UPDATE rounds SET removed = 1 WHERE id = ?", nullptr},
    // ---- dashboard and leaderboard ----
    {Stmt::select_dashboard_rounds, "select_dashboard_rounds",
     "SELECT id, state, cue, candidates, associations, model_picks, model_score, "
     "fool_score, solves, solvable_score, bonus, hidden, removed FROM rounds WHERE "
     "creator_id = ? AND state <> 'draft' ORDER BY id DESC",
     nullptr},
    {Stmt::select_dashboard_solves, "select_dashboard_solves",
     "SELECT a.round_id, r.cue, a.score, a.picks, r.associations FROM assignments a JOIN "
     "rounds r ON r.id = a.round_id WHERE a.solver_id = ? AND a.solved_at IS NOT NULL "
     "ORDER BY a.solved_at DESC",
     nullptr},
    {Stmt::select_qualification_result, "select_qualification_result",
     "SELECT score, passed, attempts FROM qualification_results WHERE user_id = ?", nullptr},
    {Stmt::select_reported_rounds, "select_reported_rounds",
     "SELECT DISTINCT round_id FROM reports WHERE reporter_id = ?", nullptr},
    // Players who may still solve round ? of creator ?: qualified, not its creator, and not
    // a reporter of it who has not solved it (a reporter is never given it again).
    {Stmt::count_possible_solvers, "count_possible_solvers",
     "SELECT COUNT(*) FROM users u WHERE u.id <> ? AND u.solver_qualified = 1 AND NOT EXISTS "
     "(SELECT 1 FROM reports p WHERE p.round_id = ? AND p.reporter_id = u.id AND NOT EXISTS "
     "(SELECT 1 FROM assignments a WHERE a.round_id = p.round_id AND a.solver_id = u.id AND "
     "a.solved_at IS NOT NULL))",
     nullptr},
    {Stmt::delete_unsolved_assignment, "delete_unsolved_assignment",
     "DELETE FROM assignments WHERE round_id = ? AND solver_id = ? AND solved_at IS NULL", nullptr},
    // ---- the game's settings (the images' id key) ----
    {Stmt::insert_setting, "insert_setting",
     "INSERT INTO game_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
     nullptr},
    {Stmt::select_setting, "select_setting", "SELECT value FROM game_settings WHERE name = ?",
     nullptr},
    {Stmt::leaderboard_spymasters, "leaderboard_spymasters",
     "SELECT u.name, COUNT(*), AVG(r.fool_score), AVG(r.solvable_score), SUM(r.bonus) FROM "
     "rounds r JOIN users u ON u.id = r.creator_id WHERE r.state = 'complete' AND "
     "r.removed = 0 GROUP BY u.name ORDER BY SUM(r.bonus) DESC, AVG(r.fool_score) DESC, "
     "u.name LIMIT 100",
     nullptr},
    {Stmt::leaderboard_solvers, "leaderboard_solvers",
     "SELECT u.name, COUNT(*), AVG(a.score) FROM assignments a JOIN users u ON u.id = "
     "a.solver_id WHERE a.solved_at IS NOT NULL GROUP BY u.name ORDER BY AVG(a.score) DESC, "
     "COUNT(*) DESC, u.name LIMIT 100",
     nullptr},
    // ---- export ----
    {Stmt::select_export_rounds, "select_export_rounds",
     "SELECT id, candidates, cue, associations, fool_score, solvable_score, solvable_std "
     "FROM rounds WHERE state = 'complete' AND hidden = 0 AND removed = 0 AND "
     "solvable_score >= ? ORDER BY id",
     nullptr},
    // ---- the schema ----
    {Stmt::select_schema_version, "select_schema_version",
     "SELECT MAX(version) FROM schema_migrations", nullptr},
};

const std::vector<Statement>& checked_table() {
  static const bool ordered = [] {
    for (std::size_t i = 0; i < kStatements.size(); ++i) {
      if (static_cast<std::size_t>(kStatements[i].id) != i) return false;
    }
    return kStatements.size() == static_cast<std::size_t>(Stmt::select_schema_version) + 1;
  }();
  if (!ordered) throw std::logic_error("the game's statement table is not in Stmt order");
  return kStatements;
}

}  // namespace

const std::vector<Statement>& statements() {
  return checked_table();
}

const Statement& statement(Stmt id) {
  return checked_table().at(static_cast<std::size_t>(id));
}

const char* statement_sql(Stmt id, const std::string& kind) {
  const Statement& s = statement(id);
  return kind == "postgresql" && s.postgres != nullptr ? s.postgres : s.sql;
}

std::vector<DbRow> Store::run(Stmt id, const std::vector<DbValue>& params) {
  const Statement& s = statement(id);
  return db_.query(postgres_ && s.postgres != nullptr ? s.postgres : s.sql, params);
}

nlohmann::json stored_list(const DbValue& v) {
  const std::string text = db_text(v);
  if (text.empty()) return nlohmann::json::array();
  return nlohmann::json::parse(text);
}

std::vector<std::string> stored_strings(const DbValue& v) {
  return stored_list(v).get<std::vector<std::string>>();
}

std::int64_t store_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace winokit
