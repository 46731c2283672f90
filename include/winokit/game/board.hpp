// The game's boards: a player's dashboard (their account, creator qualification, rounds,
// solves, totals and qualification test result) and the public leaderboard of spymasters and
// solvers.
//
//   winokit::Board board(connections, config);
//   nlohmann::json mine = board.me(session);
//   nlohmann::json top = board.leaderboard();   // {spymasters: [...], solvers: [...]}
#pragma once

#include <nlohmann/json.hpp>

#include "winokit/game/db.hpp"
#include "winokit/game/game.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

class Board {
 public:
  Board(ConnectionPool& connections, const GameConfig& config)
      : connections_(connections), config_(config) {}
  nlohmann::json me(const Session& s);
  nlohmann::json leaderboard();

 private:
  ConnectionPool& connections_;
  const GameConfig& config_;
};

}  // namespace winokit
