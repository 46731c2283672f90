// The game's rules: cue validation, the bonus tiers, scores (winokit/game/rules.hpp).
#include <gtest/gtest.h>

#include "game_test_util.hpp"

namespace winokit {
namespace {

using nlohmann::json;

TEST(GameRules, CuesAreOneWordNotACandidateNotBlocked) {
  GameRules r;
  const std::vector<std::string> cands = {"ice cream", "dog", "boxes"};
  const auto& block = default_blocklist();
  EXPECT_EQ(r.check_cue("Winter", cands, block), "winter");
  EXPECT_EQ(r.check_cue("well-known", cands, block), "well-known");
  EXPECT_EQ(r.check_cue("Ärger", cands, block), "ärger");
  for (const char* bad :
       {"", "two words", "sea\xe2\x80\x8b",
        "a\xe2\x80\xae"
        "b",
        "ice", "dogs", "box", "'; DROP TABLE users;--", "abc1", "-dash", "dash-", "\xff\xfe",
        "shit", "sea\n", "\xf0\x9f\x98\x80", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}) {
    EXPECT_THROW(r.check_cue(bad, cands, block), GameError) << bad;
  }
}

// Issue 23, item 6: look-alikes passed the cue rules: "nazi" with a Cyrillic а, or fullwidth,
// and a candidate's name in other scripts' letters. Compared after NFKC and confusable folding.
TEST(GameRules, LookAlikeLettersAreFoldedForTheBlocklistAndTheCandidates) {
  GameRules r;
  const std::set<std::string> block = {"nazi"};
  const std::vector<std::string> cands = {"img", "ice cream"};
  auto code_of = [&](const std::string& cue) {
    try {
      r.check_cue(cue, cands, block);
    } catch (const GameError& e) {
      return e.code();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(code_of("n\xd0\xb0zi"), "cue_blocked");  // Cyrillic а
  EXPECT_EQ(code_of("\xef\xbd\x8e\xef\xbd\x81\xef\xbd\x9a\xef\xbd\x89"),
            "cue_blocked");                                 // ｎａｚｉ
  EXPECT_EQ(code_of("N\xd0\x90ZI"), "cue_blocked");         // Cyrillic А
  EXPECT_EQ(code_of("\xd1\x96mg"), "cue_names_candidate");  // Cyrillic і
  EXPECT_EQ(code_of("\xef\xbd\x89\xef\xbd\x8d\xef\xbd\x87"), "cue_names_candidate");  // ｉｍｇ
  EXPECT_EQ(code_of("cr\xd0\xb5\xd0\xb0m"), "cue_names_candidate");                   // cr(е)(а)m
  EXPECT_EQ(code_of("winter"), "accepted");
  EXPECT_EQ(code_of("\xd0\xb7\xd0\xb8\xd0\xbc\xd0\xb0"), "accepted");  // зима: Russian
}

TEST(GameRules, BonusTiersAtTheirBoundaries) {
  GameRules r;
  EXPECT_EQ(r.bonus(49.99, 100), 0);
  EXPECT_EQ(r.bonus(50, 100), 0.03);
  EXPECT_EQ(r.bonus(59.99, 80), 0.03);
  EXPECT_EQ(r.bonus(60, 80), 0.07);
  EXPECT_EQ(r.bonus(66.99, 80), 0.07);
  EXPECT_EQ(r.bonus(67, 80), 0.18);
  EXPECT_EQ(r.bonus(79.99, 80), 0.18);
  EXPECT_EQ(r.bonus(80, 80), 0.27);
  EXPECT_EQ(r.bonus(100, 79.99), 0);  // not solvable enough: no bonus
  const auto t = GameRules::parse_bonus_tiers("10:1,20:2.5");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].bonus, 2.5);
  EXPECT_THROW(GameRules::parse_bonus_tiers("20:1,10:2"), std::invalid_argument);
  EXPECT_THROW(GameRules::parse_bonus_tiers("x"), std::invalid_argument);
  EXPECT_THROW(GameRules::parse_bonus_tiers("10:1x"), std::invalid_argument);
  EXPECT_DOUBLE_EQ(jaccard_score({"a", "b"}, {"b", "c"}), 100.0 / 3);
  double m = 0, sd = 0;
  mean_and_std({100, 50, 0}, m, sd);
  EXPECT_DOUBLE_EQ(m, 50);
  EXPECT_NEAR(sd, 40.824829, 1e-6);  // population standard deviation
}

// The official backend (WinoGAViL-backend, clip_server.py): model = int(J * 100), fool-the-AI =
// 100 - model; the published CSVs hold 67 for a rival Jaccard of 1/3.
TEST(GameRules, FoolTheAiIsTruncatedAsTheOfficialBackend) {
  EXPECT_EQ(official_model_score({"a", "b"}, {"b", "c"}), 33);                     // J = 1/3
  EXPECT_EQ(fool_the_ai_score({"a", "b"}, {"b", "c"}), 67.0);                      // not 66.67
  EXPECT_EQ(fool_the_ai_score({"a", "b", "c"}, {"c", "d", "e"}), 80.0);            // J = 1/5
  EXPECT_EQ(fool_the_ai_score({"a", "b", "c"}, {"b", "c", "d"}), 50.0);            // J = 2/4
  EXPECT_EQ(fool_the_ai_score({"a", "b", "c", "d"}, {"b", "c", "d", "e"}), 40.0);  // 3/5
  EXPECT_EQ(fool_the_ai_score({"a", "b"}, {"a", "b"}), 0.0);
  EXPECT_EQ(fool_the_ai_score({"a", "b"}, {"c", "d"}), 100.0);
  // 2/7 = 28.57 -> 28 -> 72; 5/7 = 71.43 -> 71 -> 29: truncation, not rounding.
  EXPECT_EQ(fool_the_ai_score({"a", "b", "c", "d"}, {"c", "d", "e", "f", "g"}), 72.0);
  EXPECT_EQ(fool_the_ai_score({"a", "b", "c", "d", "e", "f"}, {"a", "b", "c", "d", "e", "g"}),
            29.0);
  // The tier the published 67 falls in: [67, 80) pays 0.18, where 66.67 would pay 0.07.
  GameRules r;
  EXPECT_EQ(r.bonus(fool_the_ai_score({"a", "b"}, {"b", "c"}), 100), 0.18);
  // Values stored unrounded by older versions read back the official way.
  EXPECT_EQ(official_fool_the_ai(100 - 100.0 / 3), 67.0);
  EXPECT_EQ(official_fool_the_ai(100 - 200.0 / 7), 72.0);
  EXPECT_EQ(official_fool_the_ai(80.0), 80.0);
  EXPECT_EQ(official_fool_the_ai(100 - 100.0 * 3 / 5), 40.0);
}

}  // namespace
}  // namespace winokit
