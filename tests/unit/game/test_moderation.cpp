// Moderation through the game: the solvers' qualification test, then reports and their
// review (winokit/game/moderation.hpp).
#include <gtest/gtest.h>

#include "game_test_util.hpp"

namespace winokit {
namespace {

using nlohmann::json;

TEST(Game, SolverQualificationTestAndReportsWithReview) {
  test::TempDir dir;
  GameConfig config = fast_config();
  config.qualification =
      parse_winogavil(
          "candidates,cue,associations,ID\n"
          "\"[\"\"img0\"\",\"\"img1\"\",\"\"img2\"\",\"\"img3\"\",\"\"img4\"\"]\",sky,"
          "\"[\"\"img0\"\",\"\"img1\"\"]\",q1\n",
          "q.csv")
          .instances;
  config.qualification_attempts = 2;
  auto game = make_game(dir, config);
  const Session p = join(*game, "player");
  EXPECT_EQ(error_status([&] { game->new_round(p); }), 403);
  EXPECT_EQ(error_status([&] { game->next_solve(p); }), 403);
  const json test = game->qualification_test(p);
  EXPECT_FALSE(test["instances"][0].contains("associations"));
  EXPECT_EQ(game->submit_qualification(p, {{"q1", {"img2", "img3"}}})["passed"], false);
  EXPECT_EQ(game->submit_qualification(p, {{"q1", {"img0", "img1"}}})["passed"], true);
  EXPECT_EQ(error_status([&] { game->submit_qualification(p, {{"q1", {"img0", "img1"}}}); }), 409);
  const Session q = join(*game, "other");
  EXPECT_EQ(error_status([&] { game->submit_qualification(q, {{"q1", {"img0"}}}); }), 400);
  game->submit_qualification(q, {{"q1", {"img3", "img4"}}});
  game->submit_qualification(q, {{"q1", {"img3", "img4"}}});
  EXPECT_EQ(error_status([&] { game->submit_qualification(q, {{"q1", {"img0", "img1"}}}); }), 403);

  // Report: hidden at once, not handed to solvers, restored or removed by an admin only.
  const json d = game->new_round(p);
  const auto c = d["candidates"].get<std::vector<std::string>>();
  game->submit_round(p, d["id"], "tree", {c[2], c[3]});
  const AuthResult admin_auth = game->register_user("admin", "password1");
  EXPECT_EQ(admin_auth.user["admin"], false);  // registering a name never makes an admin
  set_game_admin(*second_connection(dir), "ADMIN", true);
  const Session admin = game->authenticate(admin_auth.token);  // live: no new session needed
  EXPECT_TRUE(admin.admin);
  game->submit_qualification(admin, {{"q1", {"img0", "img1"}}});
  EXPECT_EQ(error_status([&] { game->report(q, d["id"], "never shown to q"); }), 403);
  const json rep = game->report(admin, d["id"], "offensive");
  EXPECT_EQ(game->next_solve(admin)["id"], nullptr);
  EXPECT_EQ(error_status([&] { game->admin_reports(p); }), 403);
  const json pending = game->admin_reports(admin);
  ASSERT_EQ(pending["reports"].size(), 1u);
  EXPECT_EQ(pending["reports"][0]["reason"], "offensive");
  game->admin_review(admin, rep["report"], "restore");
  EXPECT_EQ(game->next_solve(admin)["id"], d["id"]);
  EXPECT_EQ(error_status([&] { game->admin_review(admin, rep["report"], "remove"); }), 409);
}

}  // namespace
}  // namespace winokit
