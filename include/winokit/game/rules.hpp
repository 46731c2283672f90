// The WinoGAViL game's rules, as published (Bitton et al., 2022), free of storage and HTTP: cue
// validation, the bonus table, qualification decisions and the scores of a round.
//
//   winokit::GameRules rules;                                    // the published defaults
//   rules.check_cue("ocean", candidates, blocklist);             // throws GameError if invalid
//   double bonus = rules.bonus(/*fool*/ 72.0, /*solvable*/ 86.7); // 0.18
//
// Scores are on a 0-100 scale: a solver's score is 100 x the Jaccard index of their picks and
// the gold associations; the model's score is that index as the official game backend computes
// it, int(J * 100) truncated to an integer (WinoGAViL-backend, clip_server.py, get_jaccard), and
// fool-the-AI = 100 - model score (so a rival Jaccard of 1/3 gives 67, as in the published
// CSVs, not 66.67); the association's solvable-by-humans score is the mean of its three
// solvers' scores.
#pragma once

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

// What kind of refusal a GameError is: a domain code, free of any protocol. The HTTP server
// (game/server.hpp, http_status) maps each kind to a status in one table.
enum class GameErrorKind {
  Invalid,         // malformed or out-of-rules input
  Unauthorized,    // no valid session, or a wrong name or password
  Forbidden,       // signed in, but not allowed to do this
  NotFound,        // no such thing (or none of yours)
  WrongMethod,     // the thing exists but not this operation on it
  Conflict,        // the state does not allow it (now, or any more)
  Gone,            // it existed but is withdrawn (under review)
  TooLarge,        // the request is larger than allowed
  WrongMediaType,  // the request's format is not the one expected
  RateLimited,     // too many requests; slow down
  Busy,            // the service is saturated; try again
  Internal,        // an unexpected failure
};

// A refused game request: a domain kind, a stable machine code ("no_round") and a message for
// people.
class GameError : public std::runtime_error {
 public:
  GameError(GameErrorKind kind, std::string code, const std::string& message)
      : std::runtime_error(message), kind_(kind), code_(std::move(code)) {}
  GameErrorKind kind() const noexcept { return kind_; }
  const std::string& code() const noexcept { return code_; }

 private:
  GameErrorKind kind_;
  std::string code_;
};

struct BonusTier {
  double min_fool = 0;  // fool-the-AI at least this (and below the next tier's minimum)
  double bonus = 0;
};

struct GameRules {
  std::vector<int> candidate_counts = {5, 6, 10, 12};
  int min_associations = 2, max_associations = 5;
  int solvers_per_association = 3;
  // Bonus tiers for a spymaster whose association is solvable-by-humans at least
  // `bonus_min_solvable`: fool-the-AI in [50,60) 0.03, [60,67) 0.07, [67,80) 0.18, >= 80 0.27.
  double bonus_min_solvable = 80;
  std::vector<BonusTier> bonus_tiers = {{50, 0.03}, {60, 0.07}, {67, 0.18}, {80, 0.27}};
  // Qualification: solvers need a mean score >= this on the test instances; creators need
  // fool-the-AI > `creator_min_fool` and solvable-by-humans > `creator_min_solvable` (means over
  // their first `creator_qualification_rounds` associations once all are solved).
  double solver_min_score = 80;
  double creator_min_fool = 40, creator_min_solvable = 80;
  int creator_qualification_rounds = 1;
  // After creating an association a player solves this many others' (when any are open to them)
  // before creating again: players alternate roles.
  int solves_per_creation = 1;
  int max_cue_bytes = 40;

  // Throws GameError (Invalid) unless `cue` is one word of letters (a hyphen or apostrophe inside
  // allowed), not a candidate's name or a word of one, and not in the blocklist; compares
  // case-insensitively. Returns the cue lower-cased.
  std::string check_cue(const std::string& cue, const std::vector<std::string>& candidates,
                        const std::set<std::string>& blocklist) const;
  double bonus(double fool_the_ai, double solvable_by_humans) const;
  // "50:0.03,60:0.07,67:0.18,80:0.27"; throws std::invalid_argument when malformed.
  static std::vector<BonusTier> parse_bonus_tiers(const std::string& text);
};

// 100 x |a ∩ b| / |a ∪ b|.
double jaccard_score(const std::vector<std::string>& a, const std::vector<std::string>& b);
// The rival's score as the official backend stores it: int(|a ∩ b| / |a ∪ b| * 100), the
// quotient and product in double precision and truncated toward zero as Python's int() does.
int official_model_score(const std::vector<std::string>& picks,
                         const std::vector<std::string>& associations);
// fool-the-AI as the official backend stores it: 100 - official_model_score (an integer).
double fool_the_ai_score(const std::vector<std::string>& picks,
                         const std::vector<std::string>& associations);
// A stored fool-the-AI in the official form: integers as they are; a value stored unrounded by
// an older winokit (100 - 100 J) becomes 100 - int(100 J).
double official_fool_the_ai(double stored);
// Mean and population standard deviation (ddof = 0, numpy's default).
void mean_and_std(const std::vector<double>& v, double& mean, double& stddev);

// One word per line, '#' comments; lower-cased.
std::set<std::string> parse_blocklist(const std::string& text);
// A short built-in list of slurs and obscenities (the default when no --blocklist is given).
const std::set<std::string>& default_blocklist();

}  // namespace winokit
