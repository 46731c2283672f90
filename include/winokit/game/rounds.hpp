// The game's rounds: the solvers' qualification test, a spymaster's round (candidates drawn
// from the pool, the cue and associations checked by the rules, the rival's picks scored),
// assignment of open rounds to solvers and their scoring, and a creator's qualification.
//
//   winokit::Rounds rounds(connections, config, names, rival, seed);
//   auto draft = rounds.new_round(session);                               // {id, candidates}
//   auto result = rounds.submit_round(session, draft["id"], "ocean", {"sea", "boat"});
//   auto next = rounds.next_solve(other);                                 // {id, cue, ...}
//   rounds.submit_solve(other, next["id"], {"sea", "boat"});
#pragma once

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

class Rounds {
 public:
  // `names`: the pool's images, candidates are drawn from; `seed` (non-zero) seeds the draw.
  Rounds(ConnectionPool& connections, const GameConfig& config,
         const std::vector<std::string>& names, Rival& rival, std::uint64_t seed);
  ~Rounds();
  nlohmann::json qualification_test(const Session& s);
  nlohmann::json submit_qualification(const Session& s, const nlohmann::json& answers);
  nlohmann::json new_round(const Session& s);
  nlohmann::json submit_round(const Session& s, std::int64_t round_id, const std::string& cue,
                              const std::vector<std::string>& associations);
  nlohmann::json next_solve(const Session& s);
  nlohmann::json submit_solve(const Session& s, std::int64_t round_id,
                              const std::vector<std::string>& picks);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A creator's qualification: "qualified", "pending" (qualification rounds not all solved yet),
// "open" (may still create qualification rounds) or "failed", with the means over the
// qualification rounds.
nlohmann::json creator_status(Store& store, const GameRules& rules, std::int64_t user_id);

}  // namespace winokit
