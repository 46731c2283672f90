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
  // The locked-out player is told so by the test itself, with the attempts used.
  const json locked = game->qualification_test(q);
  EXPECT_TRUE(locked["locked"].get<bool>());
  EXPECT_EQ(locked["attempts_left"], 0);
  EXPECT_EQ(locked["attempts_used"], 2);
  // Errors name the cue, not the instance id.
  const Session r = join(*game, "third_player");
  try {
    game->submit_qualification(r, {{"q1", {"img0"}}});
    ADD_FAILURE() << "one pick of two was accepted";
  } catch (const GameError& e) {
    EXPECT_NE(std::string(e.what()).find("sky"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("q1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(game->qualification_test(r)["attempts_left"], 2);

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
  // Restored: visible again, but never given back to the player who reported it.
  EXPECT_EQ(game->next_solve(admin)["id"], nullptr);
  const Session third = join(*game, "third");
  game->submit_qualification(third, {{"q1", {"img0", "img1"}}});
  EXPECT_EQ(game->next_solve(third)["id"], d["id"]);
  EXPECT_EQ(error_status([&] { game->admin_review(admin, rep["report"], "remove"); }), 409);
}

// Issue 23, item 6: one account could hide every open association by reporting each. Now a
// report by one player leaves it in play (pending an admin's review); a second reporter (or an
// admin) hides it for everyone.
TEST(Moderation, OneReporterAloneDoesNotHideAnAssociation) {
  test::TempDir dir;
  GameConfig config = fast_config();
  config.rules.solvers_per_association = 10;  // slots left for y: only hiding keeps it away
  auto game = make_game(dir, config);
  const Session spy = join(*game, "spy");
  const json d = game->new_round(spy);
  const auto c = d["candidates"].get<std::vector<std::string>>();
  game->submit_round(spy, d["id"], "tree", {c[2], c[3]});
  const Session a = join(*game, "solver_a"), b = join(*game, "solver_b"),
                z = join(*game, "solver_z");
  ASSERT_EQ(game->next_solve(a)["id"], d["id"]);
  ASSERT_EQ(game->next_solve(b)["id"], d["id"]);
  EXPECT_EQ(game->report(a, d["id"], "spam")["hidden"], false);
  EXPECT_EQ(game->report(a, d["id"], "spam again")["hidden"], false);  // the same reporter
  EXPECT_EQ(game->next_solve(z)["id"], d["id"]);                       // still in play
  EXPECT_EQ(game->report(b, d["id"], "offensive")["hidden"], true);
  const Session y = join(*game, "solver_y");
  EXPECT_EQ(game->next_solve(y)["id"], nullptr);  // hidden for everyone
}

// ... and the HTTP API limits reports per account.
TEST(Moderation, ReportsAreRateLimitedPerAccount) {
  test::TempDir dir;
  auto game = make_game(dir);
  GameServer server(*game, ServerOptions{});
  const AuthResult spy = game->register_user("spy", "password1");
  const json d = game->new_round(game->authenticate(spy.token));
  const auto c = d["candidates"].get<std::vector<std::string>>();
  game->submit_round(game->authenticate(spy.token), d["id"], "tree", {c[2], c[3]});
  HttpRequest req;
  req.method = "POST";
  req.path = "/api/rounds/" + std::to_string(d["id"].get<std::int64_t>()) + "/report";
  req.headers = {{"Cookie", "wk_session=" + spy.token},
                 {"X-CSRF-Token", spy.csrf},
                 {"Content-Type", "application/json"}};
  req.body = R"({"reason": "again"})";
  int limited = 0;
  for (int i = 0; i < 20; ++i)
    limited += server.handle(req).status == 429;
  EXPECT_GE(limited, 10);
}

}  // namespace
}  // namespace winokit
