// The game's played associations as a WinoGAViL CSV (the published layout), the data the
// benchmark reads: `winokit game export` and the server's /api/admin/export.
//
//   std::string csv = winokit::export_game_csv(db, /*min_solvable=*/80);   // db: a Database&
#pragma once

#include <string>

#include "winokit/game/db.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

// Complete, visible associations with solvable-by-humans >= min_solvable, ordered by id.
std::string export_game_csv(Database& db, double min_solvable);

// Whether `db` holds a winokit game's schema; reads only (a foreign database is not altered).
bool is_game_database(Database& db);

}  // namespace winokit
