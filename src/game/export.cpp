// The WinoGAViL CSV export (see winokit/game/export.hpp).
#include "winokit/game/export.hpp"

#include <cstdio>
#include <sstream>

#include "winokit/core/error.hpp"
#include "winokit/game/rules.hpp"
#include "winokit/game/store.hpp"
#include "winokit/io/table.hpp"

namespace winokit {

using nlohmann::json;

std::string export_game_csv(Database& db, double min_solvable) {
  Store store(db);
  std::ostringstream out;
  out << "candidates,cue,associations,score_fool_the_ai,num_associations,num_candidates,"
         "solvers_jaccard_mean,solvers_jaccard_std,ID\n";
  // The published scales: score_fool_the_ai an integer on 0-100 (100 - int(100 J), as the
  // official backend stores it), solvers' Jaccard mean and std on 0-1 (the rounds store them
  // as percentages).
  constexpr double kPercent = 100.0;
  auto num4 = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", v);
    return std::string(buf);
  };
  for (const auto& r : store.run(Stmt::select_export_rounds, {min_solvable})) {
    const auto candidates = stored_strings(r[1]);
    const auto associations = stored_strings(r[3]);
    out << csv_escape(json(candidates).dump()) << ',' << csv_escape(db_text(r[2])) << ','
        << csv_escape(json(associations).dump()) << ','
        << static_cast<long long>(official_fool_the_ai(db_real(r[4]))) << ',' << associations.size()
        << ',' << candidates.size() << ',' << num4(db_real(r[5]) / kPercent) << ','
        << num4(db_real(r[6]) / kPercent) << ',' << db_int(r[0]) << '\n';
  }
  return out.str();
}

bool is_game_database(Database& db) {
  try {
    const auto rows = Store(db).run(Stmt::select_schema_version);
    return !rows.empty() && db_int(rows[0][0]) > 0;
  } catch (const IoError&) {
    return false;
  }
}

}  // namespace winokit
