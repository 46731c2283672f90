// Reports and their review (see winokit/game/moderation.hpp).
#include "winokit/game/moderation.hpp"

#include "winokit/game/store.hpp"

namespace winokit {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxReason = 500;
// An association disappears for everyone once this many players report it (or one admin): one
// account alone cannot hide every open association by reporting each (issue 23). Until then it
// waits for an admin's review like any report; the reporter has already seen it.
constexpr std::int64_t kReportersToHide = 2;

void require_admin(const Session& s) {
  if (!s.admin) throw GameError(GameErrorKind::Forbidden, "not_admin", "admins only");
}

}  // namespace

json Moderation::report(const Session& s, std::int64_t round_id, const std::string& reason) {
  if (reason.size() > kMaxReason) {
    throw GameError(GameErrorKind::Invalid, "bad_reason", "the reason is too long");
  }
  auto lease = connections_.acquire();
  Database& db = *lease;
  Store store(db);
  Transaction tx(db);
  const auto rows = store.run(Stmt::select_round_state, {round_id});
  if (rows.empty() || db_text(rows[0][0]) == "draft") {
    throw GameError(GameErrorKind::NotFound, "no_round", "no such association");
  }
  // Only someone who has seen it (its creator, a player it was given to, an admin) may report
  // an association: ids cannot be enumerated to hide everything.
  const bool seen = s.admin || db_int(rows[0][1]) == s.user_id ||
                    !store.run(Stmt::select_seen, {round_id, s.user_id}).empty() ||
                    !store.run(Stmt::select_pending_report_by, {round_id, s.user_id}).empty();
  if (!seen) {
    throw GameError(GameErrorKind::Forbidden, "not_seen",
                    "you can only report associations you were shown");
  }
  const auto id = store.run(Stmt::insert_report, {round_id, s.user_id, reason, store_now()});
  const std::int64_t reporters =
      db_int(store.run(Stmt::count_round_reporters, {round_id}).at(0)[0]);
  const bool hidden = s.admin || reporters >= kReportersToHide;
  if (hidden) store.run(Stmt::hide_round, {round_id});
  // The reporter is not given it again, even once an admin restores it (select_held_assignment
  // and select_solvable_rounds skip rounds they reported), and their unsolved slot is freed for
  // another solver.
  store.run(Stmt::delete_unsolved_assignment, {round_id, s.user_id});
  tx.commit();
  return {{"report", db_int(id.at(0)[0])}, {"hidden", hidden}};
}

json Moderation::admin_reports(const Session& s) {
  require_admin(s);
  auto lease = connections_.acquire();
  Store store(*lease);
  json out = json::array();
  for (const auto& r : store.run(Stmt::select_pending_reports)) {
    out.push_back({{"id", db_int(r[0])},
                   {"round", db_int(r[1])},
                   {"reason", db_text(r[2])},
                   {"created_at", db_int(r[3])},
                   {"reporter", db_text(r[4])},
                   {"cue", db_text(r[5])},
                   {"candidates", stored_list(r[6])},
                   {"associations", stored_list(r[7])},
                   {"creator", db_text(r[8])}});
  }
  return {{"reports", out}};
}

json Moderation::admin_review(const Session& s, std::int64_t report_id, const std::string& action) {
  require_admin(s);
  if (action != "restore" && action != "remove") {
    throw GameError(GameErrorKind::Invalid, "bad_action", "action is 'restore' or 'remove'");
  }
  auto lease = connections_.acquire();
  Database& db = *lease;
  Store store(db);
  Transaction tx(db);
  const auto rows = store.run(Stmt::select_report, {report_id});
  if (rows.empty()) throw GameError(GameErrorKind::NotFound, "no_report", "no such report");
  if (db_text(rows[0][1]) != "pending") {
    throw GameError(GameErrorKind::Conflict, "reviewed", "already reviewed");
  }
  const std::int64_t round_id = db_int(rows[0][0]);
  const std::string state = action == "restore" ? "restored" : "removed";
  store.run(Stmt::review_reports, {state, s.user_id, store_now(), round_id});
  store.run(action == "restore" ? Stmt::restore_round : Stmt::remove_round, {round_id});
  tx.commit();
  return {{"round", round_id}, {"state", state}};
}

}  // namespace winokit
