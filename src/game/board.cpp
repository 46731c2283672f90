// Dashboard and leaderboard (see winokit/game/board.hpp).
#include "winokit/game/board.hpp"

#include "winokit/game/auth.hpp"
#include "winokit/game/rounds.hpp"
#include "winokit/game/store.hpp"

namespace winokit {

using nlohmann::json;

json Board::me(const Session& s) {
  auto lease = connections_.acquire();
  Store store(*lease);
  json j = user_json(store, s.user_id);
  j["creator"] = creator_status(store, config_.rules, s.user_id);
  json rounds = json::array();
  double fool = 0, solvable = 0, bonus = 0;
  int complete = 0;
  for (const auto& r : store.run(Stmt::select_dashboard_rounds, {s.user_id})) {
    json round = {{"id", db_int(r[0])},
                  {"state", db_text(r[1])},
                  {"cue", db_text(r[2])},
                  {"candidates", stored_list(r[3])},
                  {"associations", stored_list(r[4])},
                  {"model_picks", stored_list(r[5])},
                  {"model_score", db_real(r[6])},
                  {"fool_the_ai", db_real(r[7])},
                  {"solves", db_int(r[8])},
                  {"hidden", db_int(r[11]) != 0},
                  {"removed", db_int(r[12]) != 0}};
    if (db_text(r[1]) == "complete") {
      round["solvable_by_humans"] = db_real(r[9]);
      round["bonus"] = db_real(r[10]);
      if (db_int(r[12]) == 0) {
        ++complete;
        fool += db_real(r[7]);
        solvable += db_real(r[9]);
        bonus += db_real(r[10]);
      }
    }
    rounds.push_back(round);
  }
  json solves = json::array();
  double solver_total = 0;
  for (const auto& r : store.run(Stmt::select_dashboard_solves, {s.user_id})) {
    solves.push_back({{"round", db_int(r[0])},
                      {"cue", db_text(r[1])},
                      {"score", db_real(r[2])},
                      {"picks", stored_list(r[3])},
                      {"associations", stored_list(r[4])}});
    solver_total += db_real(r[2]);
  }
  // Associations this player has reported (their own or ones they solved): not reported twice.
  json reported = json::array();
  for (const auto& r : store.run(Stmt::select_reported_rounds, {s.user_id}))
    reported.push_back(db_int(r[0]));
  j["reported"] = reported;
  j["rounds"] = rounds;
  j["solves"] = solves;
  j["totals"] = {
      {"complete_rounds", complete},
      {"bonus", bonus},
      {"mean_fool_the_ai", complete ? json(fool / complete) : json(nullptr)},
      {"mean_solvable_by_humans", complete ? json(solvable / complete) : json(nullptr)},
      {"solves", solves.size()},
      {"mean_solver_score",
       solves.empty() ? json(nullptr) : json(solver_total / static_cast<double>(solves.size()))}};
  const auto q = store.run(Stmt::select_qualification_result, {s.user_id});
  j["qualification"] = {{"instances", config_.qualification.size()},
                        {"attempts_allowed", config_.qualification_attempts}};
  if (!q.empty()) {
    j["qualification"]["score"] = db_real(q[0][0]);
    j["qualification"]["passed"] = db_int(q[0][1]) != 0;
    j["qualification"]["attempts"] = db_int(q[0][2]);
  }
  return j;
}

json Board::leaderboard() {
  auto lease = connections_.acquire();
  Store store(*lease);
  json spymasters = json::array(), solvers = json::array();
  for (const auto& r : store.run(Stmt::leaderboard_spymasters)) {
    spymasters.push_back({{"name", db_text(r[0])},
                          {"associations", db_int(r[1])},
                          {"mean_fool_the_ai", db_real(r[2])},
                          {"mean_solvable_by_humans", db_real(r[3])},
                          {"bonus", db_real(r[4])}});
  }
  for (const auto& r : store.run(Stmt::leaderboard_solvers)) {
    solvers.push_back(
        {{"name", db_text(r[0])}, {"solves", db_int(r[1])}, {"mean_score", db_real(r[2])}});
  }
  return {{"spymasters", spymasters}, {"solvers", solvers}};
}

}  // namespace winokit
