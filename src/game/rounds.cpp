// Qualification, rounds against the rival, solving and scoring (see winokit/game/rounds.hpp).
#include "winokit/game/rounds.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>

#include "winokit/core/rng.hpp"
#include "winokit/game/auth.hpp"

namespace winokit {

using nlohmann::json;

namespace {

constexpr int kAssignRetries = 8;
constexpr int kAssignSpread = 8;                 // open rounds a solver is drawn among
constexpr std::int64_t kStaleSweepSeconds = 30;  // how often unsolved assignments are swept

// Picks must be distinct candidates, `k` of them.
void check_picks(const std::vector<std::string>& picks, const std::vector<std::string>& candidates,
                 std::size_t k, const std::string& what) {
  std::set<std::string> seen;
  for (const auto& p : picks) {
    if (std::find(candidates.begin(), candidates.end(), p) == candidates.end()) {
      // The pick is not echoed: it may be an image's name (the client only knows ids).
      throw GameError(GameErrorKind::Invalid, "bad_pick", what + ": an image is not a candidate");
    }
    if (!seen.insert(p).second) {
      throw GameError(GameErrorKind::Invalid, "bad_pick", what + ": picked twice");
    }
  }
  if (picks.size() != k) {
    throw GameError(GameErrorKind::Invalid, "bad_pick",
                    what + ": select exactly " + std::to_string(k) + " images (got " +
                        std::to_string(picks.size()) + ")");
  }
}

json round_for_solver(Store& store, std::int64_t round_id) {
  const auto rows = store.run(Stmt::select_round_for_solver, {round_id});
  const auto& r = rows.at(0);
  return {{"id", db_int(r[0])},
          {"cue", db_text(r[1])},
          {"candidates", stored_list(r[2])},
          {"k", stored_strings(r[3]).size()}};
}

}  // namespace

struct Rounds::Impl {
  ConnectionPool& connections;
  const GameConfig& config;
  const std::vector<std::string>& names;
  Rival& rival;
  std::mutex rng_mutex;  // candidate sampling
  Rng rng;
  std::atomic<std::int64_t> last_sweep{0};

  nlohmann::json nothing_to_solve(Store& store, std::int64_t user_id);

  Impl(ConnectionPool& c, const GameConfig& g, const std::vector<std::string>& n, Rival& r,
       std::uint64_t seed)
      : connections(c), config(g), names(n), rival(r), rng(derive_seed(seed, "game/candidates")) {}

  // Rounds this user may solve now: open, visible, not theirs, not taken by them, no pending
  // report of theirs, a free slot.
  std::vector<DbRow> solvable_rounds(Store& store, std::int64_t user_id, int limit) {
    return store.run(Stmt::select_solvable_rounds,
                     {user_id, user_id, user_id, std::int64_t{config.rules.solvers_per_association},
                      std::int64_t{limit}});
  }

  // Frees assignments left unsolved past the timeout; at most every kStaleSweepSeconds.
  void free_stale_assignments(Store& store) {
    const std::int64_t now = store_now();
    std::int64_t last = last_sweep.load();
    if (now - last < kStaleSweepSeconds || !last_sweep.compare_exchange_strong(last, now)) return;
    store.run(Stmt::delete_stale_assignments, {now - config.assignment_timeout_seconds});
  }
};

Rounds::Rounds(ConnectionPool& connections, const GameConfig& config,
               const std::vector<std::string>& names, Rival& rival, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(connections, config, names, rival, seed)) {}

Rounds::~Rounds() = default;

json creator_status(Store& store, const GameRules& rules, std::int64_t user_id) {
  const int needed = rules.creator_qualification_rounds;
  json j = {{"needed_rounds", needed},
            {"min_fool_the_ai", rules.creator_min_fool},
            {"min_solvable_by_humans", rules.creator_min_solvable},
            {"solvers", rules.solvers_per_association}};
  if (needed <= 0) {
    j["state"] = "qualified";
    j["rounds"] = 0;
    j["attempt"] = 0;
    return j;
  }
  // The qualification rounds in batches of `needed`: the last batch decides. A failed batch is
  // not final: the spymaster retries with a new batch (new images), so nobody is locked out of
  // creating for good.
  const auto rows = store.run(Stmt::select_creator_rounds, {user_id});
  const std::size_t n = static_cast<std::size_t>(needed);
  const std::size_t start = rows.empty() ? 0 : (rows.size() - 1) / n * n;
  const std::size_t in_batch = rows.size() - start;
  // The attempt the player's next round belongs to (a failed one's retry is the next).
  j["attempt"] = rows.size() / n + 1;
  j["rounds"] = in_batch;  // in the current attempt
  if (rows.empty() || in_batch < n) {
    j["state"] = "open";
    return j;
  }
  double fool = 0, solvable = 0;
  json waiting = json::array();
  for (std::size_t i = start; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (db_text(r[0]) != "complete") {
      waiting.push_back({{"id", db_int(r[3])},
                         {"cue", db_text(r[4])},
                         {"solves", db_int(r[5])},
                         {"hidden", db_int(r[6]) != 0}});
      continue;
    }
    fool += official_fool_the_ai(db_real(r[1]));
    solvable += db_real(r[2]);
  }
  j["attempt"] = rows.size() / n;  // the attempt being decided
  if (!waiting.empty()) {
    j["state"] = "pending";
    j["waiting"] = waiting;
    return j;
  }
  fool /= needed;
  solvable /= needed;
  j["fool_the_ai"] = fool;
  j["solvable_by_humans"] = solvable;
  const bool passed = fool > rules.creator_min_fool && solvable > rules.creator_min_solvable;
  j["state"] = passed ? "qualified" : "failed";
  if (!passed) j["attempt"] = rows.size() / n + 1;  // the retry
  return j;
}

namespace {

// How many more players must join before every waiting association can get its solvers.
std::int64_t players_missing(Store& store, const json& creator, std::int64_t user_id) {
  const std::int64_t solvers = creator["solvers"].get<std::int64_t>();
  std::int64_t missing = 0;
  for (const auto& w : creator["waiting"]) {
    const std::int64_t possible = db_int(
        store.run(Stmt::count_possible_solvers, {user_id, w["id"].get<std::int64_t>()}).at(0)[0]);
    missing = std::max(missing, solvers - possible);
  }
  return missing;
}

// What unblocks a spymaster whose qualification associations are still being solved.
std::string pending_message(const json& creator, std::int64_t missing) {
  const int solvers = creator["solvers"].get<int>();
  std::string msg = "your qualification association";
  std::string parts;
  bool hidden = false;
  for (const auto& w : creator["waiting"]) {
    if (!parts.empty()) parts += ", ";
    parts += "\u201c" + w["cue"].get<std::string>() + "\u201d (" +
             std::to_string(w["solves"].get<std::int64_t>()) + " of " + std::to_string(solvers) +
             " solvers)";
    hidden = hidden || w["hidden"].get<bool>();
  }
  msg += (creator["waiting"].size() > 1 ? "s " : " ") + parts + " must be solved by " +
         std::to_string(solvers) + " other players before you can create again";
  if (hidden) msg += "; one was reported and waits for an admin\u2019s review";
  if (missing > 0) {
    msg += "; not enough players can solve it yet: " + std::to_string(missing) + " more player" +
           (missing == 1 ? "" : "s") + " must join the game (and pass its test)";
  }
  return msg;
}

}  // namespace

json Rounds::qualification_test(const Session& s) {
  json items = json::array();
  for (const auto& inst : impl_->config.qualification) {
    items.push_back({{"id", inst.id},
                     {"cue", inst.cue},
                     {"candidates", inst.candidates},
                     {"k", inst.associations.size()}});
  }
  auto lease = impl_->connections.acquire();
  Store store(*lease);
  const auto prev = store.run(Stmt::select_qualification_result, {s.user_id});
  const std::int64_t attempts = prev.empty() ? 0 : db_int(prev[0][2]);
  const std::int64_t allowed = impl_->config.qualification_attempts;
  const bool qualified = solver_qualified(store, s.user_id);
  json j = {{"instances", items},
            {"solver_qualified", qualified},
            {"pass_mark", impl_->config.rules.solver_min_score},
            {"attempts_allowed", allowed},
            {"attempts_used", attempts},
            {"attempts_left", std::max<std::int64_t>(0, allowed - attempts)},
            {"locked", !qualified && !items.empty() && attempts >= allowed}};
  if (!prev.empty()) j["last_score"] = db_real(prev[0][0]);
  return j;
}

json Rounds::submit_qualification(const Session& s, const json& answers) {
  const auto& insts = impl_->config.qualification;
  if (insts.empty()) {
    throw GameError(GameErrorKind::Conflict, "no_test", "this game has no qualification test");
  }
  if (!answers.is_object()) {
    throw GameError(GameErrorKind::Invalid, "bad_request", "answers must be an object");
  }
  std::vector<double> scores;
  for (const auto& inst : insts) {
    const auto it = answers.find(inst.id);
    if (it == answers.end() || !it->is_array()) {
      throw GameError(GameErrorKind::Invalid, "bad_request",
                      "no answer for the cue \u201c" + inst.cue + "\u201d");
    }
    std::vector<std::string> picks;
    for (const auto& p : *it) {
      if (!p.is_string()) {
        throw GameError(GameErrorKind::Invalid, "bad_request", "picks are image ids");
      }
      picks.push_back(p.get<std::string>());
    }
    check_picks(picks, inst.candidates, inst.associations.size(),
                "the cue \u201c" + inst.cue + "\u201d");
    scores.push_back(jaccard_score(picks, inst.associations));
  }
  double mean = 0, sd = 0;
  mean_and_std(scores, mean, sd);
  const bool passed = mean >= impl_->config.rules.solver_min_score;
  auto lease = impl_->connections.acquire();
  Database& db = *lease;
  Store store(db);
  Transaction tx(db);
  const auto prev = store.run(Stmt::select_qualification_attempts, {s.user_id});
  const std::int64_t attempts = prev.empty() ? 0 : db_int(prev[0][0]);
  if (!prev.empty() && db_int(prev[0][1]) != 0) {
    throw GameError(GameErrorKind::Conflict, "already_qualified", "you have already qualified");
  }
  if (attempts >= impl_->config.qualification_attempts) {
    throw GameError(GameErrorKind::Forbidden, "no_attempts_left", "no qualification attempts left");
  }
  if (prev.empty()) {
    store.run(Stmt::insert_qualification_result,
              {s.user_id, mean, std::int64_t{passed}, store_now()});
  } else {
    store.run(Stmt::update_qualification_result,
              {mean, std::int64_t{passed}, store_now(), s.user_id});
  }
  if (passed) store.run(Stmt::set_solver_qualified, {s.user_id});
  tx.commit();
  return {{"score", mean},
          {"passed", passed},
          {"scores", scores},
          {"attempts_left", impl_->config.qualification_attempts - attempts - 1}};
}

json Rounds::new_round(const Session& s) {
  auto lease = impl_->connections.acquire();
  Database& db = *lease;
  Store store(db);
  // One draft per player on PostgreSQL too (14 simultaneous requests made up to 3 and got past
  // --solves-per-creation): the check and the insert in one transaction, the player's row locked.
  Transaction tx(db);
  store.run(Stmt::lock_user, {s.user_id});
  if (!solver_qualified(store, s.user_id)) {
    throw GameError(GameErrorKind::Forbidden, "not_qualified", "pass the qualification test first");
  }
  const auto& rules = impl_->config.rules;
  const json creator = creator_status(store, rules, s.user_id);
  const std::string cstate = creator["state"];
  // "failed": the last qualification attempt missed the bar; the player retries with new images
  // (a new qualification round), so creating is never closed for good.
  if (cstate == "pending") {
    throw GameError(GameErrorKind::Conflict, "qualification_pending",
                    pending_message(creator, players_missing(store, creator, s.user_id)));
  }
  const auto draft = store.run(Stmt::select_draft, {s.user_id});
  if (!draft.empty()) {
    json out = {{"id", db_int(draft[0][0])},
                {"candidates", stored_list(draft[0][1])},
                {"qualification", cstate != "qualified"},
                {"creator", creator}};
    tx.commit();
    return out;
  }
  // Players alternate roles: solve before creating again, when something is open to them.
  const auto created = store.run(Stmt::count_created_rounds, {s.user_id});
  const auto solved = store.run(Stmt::count_solved_assignments, {s.user_id});
  const std::int64_t owed =
      db_int(created[0][0]) * rules.solves_per_creation - db_int(solved[0][0]);
  if (owed > 0) {
    impl_->free_stale_assignments(store);
    if (!impl_->solvable_rounds(store, s.user_id, 1).empty()) {
      throw GameError(GameErrorKind::Conflict, "solve_first",
                      "solve " + std::to_string(owed) + " association(s) of other players first");
    }
  }
  const auto& counts = rules.candidate_counts;
  std::vector<std::string> names = impl_->names;
  int n = 0;
  {
    std::lock_guard<std::mutex> rng_lock(impl_->rng_mutex);
    n = counts[impl_->rng.below(static_cast<std::uint32_t>(counts.size()))];
    partial_shuffle(names, static_cast<std::size_t>(n), impl_->rng);
  }
  names.resize(static_cast<std::size_t>(n));
  const bool qualification = cstate != "qualified";
  const auto rows = store.run(Stmt::insert_round, {s.user_id, json(names).dump(), store_now(),
                                                   std::int64_t{qualification}});
  const std::int64_t id = db_int(rows.at(0)[0]);
  tx.commit();
  return {
      {"id", id}, {"candidates", names}, {"qualification", qualification}, {"creator", creator}};
}

json Rounds::submit_round(const Session& s, std::int64_t round_id, const std::string& cue,
                          const std::vector<std::string>& associations) {
  std::vector<std::string> candidates;
  {
    auto lease = impl_->connections.acquire();
    Store store(*lease);
    const auto rows = store.run(Stmt::select_round_of_creator, {round_id});
    if (rows.empty() || db_int(rows[0][0]) != s.user_id) {
      throw GameError(GameErrorKind::NotFound, "no_round", "no such round of yours");
    }
    if (db_text(rows[0][1]) != "draft") {
      throw GameError(GameErrorKind::Conflict, "already_submitted",
                      "this round was already submitted");
    }
    candidates = stored_strings(rows[0][2]);
  }
  const auto& rules = impl_->config.rules;
  const std::string clean = rules.check_cue(cue, candidates, impl_->config.blocklist);
  const auto k = associations.size();
  if (static_cast<int>(k) < rules.min_associations ||
      static_cast<int>(k) > rules.max_associations) {
    throw GameError(GameErrorKind::Invalid, "bad_pick",
                    "select " + std::to_string(rules.min_associations) + " to " +
                        std::to_string(rules.max_associations) + " images");
  }
  check_picks(associations, candidates, k, "associations");
  // The rival answers outside the lock: it runs the text tower.
  const auto picks = impl_->rival.pick(clean, candidates, static_cast<int>(k));
  // The official backend's integers: model = int(J * 100), fool-the-AI = 100 - model.
  const double model = official_model_score(picks, associations);
  const double fool = fool_the_ai_score(picks, associations);
  auto lease = impl_->connections.acquire();
  Database& db = *lease;
  Store store(db);
  Transaction tx(db);
  const auto rows = store.run(Stmt::select_round_state_of_creator, {round_id, s.user_id});
  if (rows.empty() || db_text(rows[0][0]) != "draft") {
    throw GameError(GameErrorKind::Conflict, "already_submitted",
                    "this round was already submitted");
  }
  store.run(Stmt::submit_round, {clean, json(associations).dump(), json(picks).dump(), model, fool,
                                 store_now(), round_id});
  tx.commit();
  return {{"id", round_id},       {"cue", clean},         {"associations", associations},
          {"model_picks", picks}, {"model_score", model}, {"fool_the_ai", fool}};
}

// Nothing to solve: the player's next action. Creating when the spymaster rules allow it (a
// retry after a failed qualification included), else a wait state naming what unblocks it.
json Rounds::Impl::nothing_to_solve(Store& store, std::int64_t user_id) {
  const json creator = creator_status(store, config.rules, user_id);
  const std::string cstate = creator["state"];
  json j = {{"id", nullptr}, {"creator", creator}};
  if (cstate == "pending") {
    j["next"] = "wait";
    j["message"] = "nothing to solve right now, and " +
                   pending_message(creator, players_missing(store, creator, user_id)) +
                   ". New associations from other players will appear here.";
  } else {
    j["next"] = "create";
    j["message"] =
        std::string(
            "nothing to solve right now: you have solved every open "
            "association (or its solvers are taken). Create one") +
        (cstate == "failed" ? " \u2014 a new qualification attempt with new images" : "") +
        "; other players will solve it.";
  }
  return j;
}

json Rounds::next_solve(const Session& s) {
  auto lease = impl_->connections.acquire();
  Database& db = *lease;
  Store store(db);
  if (!solver_qualified(store, s.user_id)) {
    throw GameError(GameErrorKind::Forbidden, "not_qualified", "pass the qualification test first");
  }
  impl_->free_stale_assignments(store);
  for (int attempt = 0; attempt < kAssignRetries; ++attempt) {
    Transaction tx(db);
    // An assignment already held comes back (reloading the page does not skip it).
    const auto held = store.run(Stmt::select_held_assignment, {s.user_id});
    if (!held.empty()) {
      json j = round_for_solver(store, db_int(held[0][0]));
      tx.commit();
      return j;
    }
    // The oldest open round (associations complete soonest); after losing a race for its slot,
    // one of the next oldest, spread over players so that the retries do not collide again.
    const auto open = impl_->solvable_rounds(store, s.user_id, kAssignSpread);
    if (open.empty()) {
      json j = impl_->nothing_to_solve(store, s.user_id);
      tx.commit();
      return j;
    }
    const auto pick =
        attempt == 0 ? 0 : static_cast<std::size_t>(s.user_id + attempt) % open.size();
    const std::int64_t round_id = db_int(open[pick][0]);
    std::set<std::int64_t> taken;
    for (const auto& r : store.run(Stmt::select_taken_slots, {round_id}))
      taken.insert(db_int(r[0]));
    std::int64_t slot = 1;
    while (taken.count(slot))
      ++slot;
    try {
      store.run(Stmt::insert_assignment, {round_id, slot, s.user_id, store_now()});
    } catch (const DbConstraintError&) {
      continue;  // another connection took the slot: roll back and look again
    }
    json j = round_for_solver(store, round_id);
    tx.commit();
    return j;
  }
  throw GameError(GameErrorKind::Busy, "busy", "too much contention; try again");
}

json Rounds::submit_solve(const Session& s, std::int64_t round_id,
                          const std::vector<std::string>& picks) {
  auto lease = impl_->connections.acquire();
  Database& db = *lease;
  Store store(db);
  Transaction tx(db);
  // Lock the round's row first (a no-op write; PostgreSQL row lock, SQLite already holds the
  // write lock): two last solvers in two server processes must not both miss completing it.
  store.run(Stmt::lock_round, {round_id});
  const auto rows = store.run(Stmt::select_round_to_solve, {round_id});
  if (rows.empty() || db_text(rows[0][1]) == "draft") {
    throw GameError(GameErrorKind::NotFound, "no_round", "no such association");
  }
  const auto& r = rows[0];
  if (db_int(r[0]) == s.user_id) {
    throw GameError(GameErrorKind::Forbidden, "own_round", "you cannot solve your own association");
  }
  const auto a = store.run(Stmt::select_assignment, {round_id, s.user_id});
  if (!a.empty() && !db_null(a[0][0])) {
    throw GameError(GameErrorKind::Conflict, "already_solved", "you already solved it");
  }
  // Hidden or removed for everyone, or reported by this player (reviewed or not): not theirs
  // to solve any more (their report freed the slot).
  const bool reported = !store.run(Stmt::select_pending_report_by, {round_id, s.user_id}).empty();
  if (db_int(r[5]) != 0 || db_int(r[6]) != 0 || (reported && a.empty())) {
    throw GameError(GameErrorKind::Gone, "hidden",
                    "this association was reported and is under review");
  }
  if (a.empty()) {
    throw GameError(GameErrorKind::Forbidden, "not_assigned",
                    "this association is not assigned to you");
  }
  if (reported) {
    throw GameError(GameErrorKind::Gone, "hidden", "you reported this association");
  }
  const auto candidates = stored_strings(r[2]);
  const auto gold = stored_strings(r[3]);
  check_picks(picks, candidates, gold.size(), "picks");
  const double score = jaccard_score(picks, gold);
  store.run(Stmt::solve_assignment, {json(picks).dump(), score, store_now(), round_id, s.user_id});
  store.run(Stmt::increment_solves, {round_id});
  const auto solved = store.run(Stmt::select_solved_scores, {round_id});
  json j = {{"round", round_id}, {"score", score}, {"picks", picks}, {"associations", gold}};
  if (static_cast<int>(solved.size()) >= impl_->config.rules.solvers_per_association) {
    std::vector<double> scores;
    for (const auto& row : solved)
      scores.push_back(db_real(row[0]));
    double mean = 0, sd = 0;
    mean_and_std(scores, mean, sd);
    const double bonus = impl_->config.rules.bonus(official_fool_the_ai(db_real(r[4])), mean);
    store.run(Stmt::complete_round, {mean, sd, bonus, round_id});
    j["association_complete"] = true;
  }
  tx.commit();
  return j;
}

}  // namespace winokit
