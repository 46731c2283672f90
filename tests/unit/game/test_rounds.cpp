// Rounds through the game: a whole round from cue to export, the bonus, a creator's
// qualification (winokit/game/rounds.hpp).
#include <gtest/gtest.h>

#include <thread>

#include "game_test_util.hpp"

namespace winokit {
namespace {

using nlohmann::json;

TEST(Game, AWholeRoundFromCueToExport) {
  test::TempDir dir;
  auto game = make_game(dir);
  const Session spy = join(*game, "spy");
  std::vector<Session> solvers;
  for (const char* n : {"sol1", "sol2", "sol3", "sol4"})
    solvers.push_back(join(*game, n));
  EXPECT_EQ(error_status([&] { game->register_user("spy", "password2"); }), 409);
  EXPECT_EQ(error_status([&] { game->login("spy", "wrong-password"); }), 401);
  EXPECT_EQ(game->authenticate(game->login("spy", "password1").token).user_id, spy.user_id);

  const json draft = game->new_round(spy);
  const auto cands = draft["candidates"].get<std::vector<std::string>>();
  const std::set<std::size_t> counts = {5, 6, 10, 12};
  EXPECT_TRUE(counts.count(cands.size()));
  EXPECT_EQ(game->new_round(spy)["id"], draft["id"]);  // the draft comes back, not a new draw
  const std::int64_t id = draft["id"];
  // The rival picks the first k; the spymaster chose the last two: fool-the-AI 100.
  const std::vector<std::string> gold = {cands[cands.size() - 2], cands[cands.size() - 1]};
  EXPECT_EQ(error_status([&] { game->submit_round(spy, id, "sea", {cands[0]}); }), 400);  // k = 1
  EXPECT_EQ(error_status([&] { game->submit_round(solvers[0], id, "sea", gold); }), 404);
  const json res = game->submit_round(spy, id, "Sea", gold);
  EXPECT_EQ(res["cue"], "sea");
  EXPECT_EQ(res["model_picks"], json({cands[0], cands[1]}));
  EXPECT_EQ(res["model_score"], 0.0);
  EXPECT_EQ(res["fool_the_ai"], 100.0);
  EXPECT_EQ(error_status([&] { game->submit_round(spy, id, "sea", gold); }), 409);
  // Alternate roles: nothing to solve yet, so the spymaster may create again... but first
  // others' rounds: sol4 creates one, then spy owes a solve.
  const json d4 = game->new_round(solvers[3]);
  const auto c4 = d4["candidates"].get<std::vector<std::string>>();
  game->submit_round(solvers[3], d4["id"], "night", {c4[0], c4[1]});
  EXPECT_EQ(error_status([&] { game->new_round(spy); }), 409);  // solve_first

  // The creator is never a solver; three others are, each once.
  EXPECT_EQ(error_status([&] { game->submit_solve(spy, id, gold); }), 403);
  std::vector<double> scores;
  for (int s = 0; s < 3; ++s) {
    const json task = game->next_solve(solvers[static_cast<std::size_t>(s)]);
    ASSERT_EQ(task["id"], id) << s;
    EXPECT_FALSE(task.contains("associations"));  // no answer before solving
    EXPECT_FALSE(task.contains("model_picks"));
    EXPECT_EQ(task["k"], 2);
    // Solver 0 is right, solver 1 half right, solver 2 wrong.
    std::vector<std::string> picks = s == 0   ? gold
                                     : s == 1 ? std::vector<std::string>{gold[0], cands[0]}
                                              : std::vector<std::string>{cands[0], cands[1]};
    const json r = game->submit_solve(solvers[static_cast<std::size_t>(s)], id, picks);
    scores.push_back(r["score"]);
    EXPECT_EQ(
        error_status([&] { game->submit_solve(solvers[static_cast<std::size_t>(s)], id, picks); }),
        409);
  }
  EXPECT_EQ(scores, (std::vector<double>{100, 100.0 / 3, 0}));
  // A fourth solver is not given this association.
  EXPECT_EQ(error_status([&] { game->submit_solve(solvers[3], id, gold); }), 403);
  const json me = game->me(spy);
  ASSERT_EQ(me["rounds"].size(), 1u);
  EXPECT_EQ(me["rounds"][0]["state"], "complete");
  EXPECT_NEAR(me["rounds"][0]["solvable_by_humans"].get<double>(), 400.0 / 9, 1e-9);
  EXPECT_EQ(me["rounds"][0]["bonus"], 0.0);  // solvable below 80: no bonus
  const json lb = game->leaderboard();
  EXPECT_EQ(lb["spymasters"][0]["name"], "spy");
  EXPECT_EQ(lb["solvers"][0]["name"], "sol1");

  // Export: nothing at 80, the round at 40; the CSV is what `winokit winogavil` reads.
  const std::string none = game->export_csv(80);
  EXPECT_EQ(std::count(none.begin(), none.end(), '\n'), 1);
  const AssociationDataset ds = parse_winogavil(game->export_csv(40), "export.csv");
  ASSERT_EQ(ds.instances.size(), 1u);
  EXPECT_EQ(ds.instances[0].cue, "sea");
  EXPECT_EQ(ds.instances[0].associations, gold);
  EXPECT_EQ(ds.instances[0].candidates, cands);
  EXPECT_NEAR(*ds.instances[0].fool_the_ai, 100, 1e-9);
  // The published scale: solvers' Jaccard on 0-1 (the game keeps percentages).
  EXPECT_NEAR(*ds.instances[0].solvers_jaccard_mean, 0.4444, 1e-9);
  EXPECT_EQ(ds.instances[0].id, std::to_string(id));
}

TEST(Game, BonusForASolvableAssociationThatFoolsTheRival) {
  test::TempDir dir;
  auto game = make_game(dir);
  const Session spy = join(*game, "spy");
  const json d = game->new_round(spy);
  const auto c = d["candidates"].get<std::vector<std::string>>();
  // Gold: c[1], c[2]; the rival picks c[0], c[1]: Jaccard 1/3, fool-the-AI 100 - int(33.33) =
  // 67 as the official backend stores it (not 66.67) -> the [67, 80) tier, 0.18.
  const json sub = game->submit_round(spy, d["id"], "moon", {c[1], c[2]});
  EXPECT_EQ(sub["model_score"], 33.0);
  EXPECT_EQ(sub["fool_the_ai"], 67.0);
  for (const char* n : {"a_1", "a_2", "a_3"}) {
    const Session s = join(*game, n);
    game->next_solve(s);
    game->submit_solve(s, d["id"], {c[1], c[2]});
  }
  const json me = game->me(spy);
  EXPECT_EQ(me["rounds"][0]["solvable_by_humans"], 100.0);
  EXPECT_EQ(me["rounds"][0]["fool_the_ai"], 67.0);
  EXPECT_EQ(me["rounds"][0]["bonus"], 0.18);
  EXPECT_EQ(me["creator"]["state"], "qualified");  // fool 67 > 40 and solvable 100 > 80
  EXPECT_EQ(me["totals"]["bonus"], 0.18);
}

TEST(Game, CreatorQualificationFailsAnEasyAssociation) {
  test::TempDir dir;
  auto game = make_game(dir);
  const Session spy = join(*game, "spy");
  const json d = game->new_round(spy);
  const auto c = d["candidates"].get<std::vector<std::string>>();
  game->submit_round(spy, d["id"], "moon", {c[0], c[1]});  // the rival gets it: fool 0
  for (const char* n : {"b_1", "b_2", "b_3"}) {
    const Session s = join(*game, n);
    game->next_solve(s);
    game->submit_solve(s, d["id"], {c[0], c[1]});
    if (std::string(n) == "b_1") {
      EXPECT_EQ(error_status([&] { game->new_round(spy); }), 409);  // pending qualification
    }
  }
  EXPECT_EQ(game->me(spy)["creator"]["state"], "failed");
  // A failed attempt is not final: the next round is a new qualification attempt (new images).
  const json retry = game->new_round(spy);
  EXPECT_TRUE(retry["qualification"].get<bool>());
  EXPECT_EQ(retry["creator"]["state"], "failed");
  EXPECT_EQ(retry["creator"]["attempt"], 2);
  const auto c2 = retry["candidates"].get<std::vector<std::string>>();
  game->submit_round(spy, retry["id"], "moon", {c2[1], c2[2]});  // fool 67
  EXPECT_EQ(game->me(spy)["creator"]["state"], "pending");
  // Waiting: nothing to solve for the spymaster, who is told what unblocks it.
  const json wait = game->next_solve(spy);
  EXPECT_EQ(wait["id"], nullptr);
  EXPECT_EQ(wait["next"], "wait");
  EXPECT_NE(wait["message"].get<std::string>().find("0 of 3 solvers"), std::string::npos)
      << wait["message"];
  for (const char* n : {"c_1", "c_2", "c_3"}) {
    const Session s = join(*game, n);
    EXPECT_EQ(game->next_solve(s)["id"], retry["id"]);
    game->submit_solve(s, retry["id"], {c2[1], c2[2]});
  }
  EXPECT_EQ(game->me(spy)["creator"]["state"], "qualified");
  const json next = game->next_solve(spy);
  EXPECT_EQ(next["next"], "create");
}

TEST(Game, AWaitingSpymasterIsToldHowManyPlayersMustJoin) {
  test::TempDir dir;
  auto game = make_game(dir);
  const Session spy = join(*game, "spy");
  const json d = game->new_round(spy);
  const auto c = d["candidates"].get<std::vector<std::string>>();
  game->submit_round(spy, d["id"], "moon", {c[1], c[2]});
  join(*game, "only_one");
  const json wait = game->next_solve(spy);
  EXPECT_EQ(wait["next"], "wait");
  EXPECT_NE(wait["message"].get<std::string>().find("2 more players must join"), std::string::npos)
      << wait["message"];
  EXPECT_EQ(error_status([&] { game->new_round(spy); }), 409);
}

// Issue 23, item 6: simultaneous "new round" requests of one player on several connections
// (PostgreSQL made up to 3 drafts of 14) all get the same single draft.
TEST(Game, SimultaneousNewRoundsOfOnePlayerShareOneDraft) {
  test::TempDir dir;
  std::vector<std::unique_ptr<Database>> connections;
  connections.push_back(test_database(dir));  // empties a PostgreSQL test database first
  for (int i = 0; i < 3; ++i)
    connections.push_back(second_connection(dir));
  Game game(std::move(connections), make_pool(dir, 20), std::make_unique<FirstKRival>(),
            fast_config());
  const Session spy = join(game, "spy");
  constexpr int kRequests = 14;
  std::vector<std::int64_t> ids(kRequests, -1);
  std::vector<std::thread> clients;
  for (int i = 0; i < kRequests; ++i) {
    clients.emplace_back([&, i] {
      try {
        ids[static_cast<std::size_t>(i)] = game.new_round(spy)["id"];
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    });
  }
  for (auto& t : clients)
    t.join();
  for (const std::int64_t id : ids)
    EXPECT_EQ(id, ids[0]);
}

}  // namespace
}  // namespace winokit
