// The game's moderation: a player reports an association they were shown (it is hidden at
// once), and an admin reviews the pending reports, restoring or removing the association.
//
//   winokit::Moderation moderation(connections);
//   moderation.report(session, round_id, "offensive cue");   // {report, hidden}
//   auto pending = moderation.admin_reports(admin);          // {reports: [...]}
//   moderation.admin_review(admin, report_id, "restore");    // or "remove"
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "winokit/game/db.hpp"
#include "winokit/game/game.hpp"

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

class Moderation {
 public:
  explicit Moderation(ConnectionPool& connections) : connections_(connections) {}
  nlohmann::json report(const Session& s, std::int64_t round_id, const std::string& reason);
  nlohmann::json admin_reports(const Session& s);
  nlohmann::json admin_review(const Session& s, std::int64_t report_id, const std::string& action);

 private:
  ConnectionPool& connections_;
};

}  // namespace winokit
