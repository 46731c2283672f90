// The WinoGAViL game: its rules, a whole game through the service, and the HTTP API under
// malformed and hostile input.
#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "test_util.hpp"
#include "winokit/core/error.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/data/winogavil.hpp"
#include "winokit/eval/association.hpp"
#include "winokit/eval/association_solver.hpp"
#include "winokit/game/game.hpp"
#include "winokit/game/server.hpp"
#include "winokit/io/table.hpp"

namespace winokit {
namespace {

using nlohmann::json;

// A rival whose answer is known: the first k candidates in the order shown.
class FirstKRival final : public Rival {
 public:
  std::vector<std::string> pick(const std::string&, const std::vector<std::string>& candidates,
                                int k) override {
    return {candidates.begin(), candidates.begin() + k};
  }
  std::string describe() const override { return "first-k test rival"; }
  bool random_weights() const override { return true; }
};

std::map<std::string, std::filesystem::path> make_pool(const test::TempDir& dir, int n) {
  std::map<std::string, std::filesystem::path> pool;
  for (int i = 0; i < n; ++i) {
    const std::string name = "img" + std::to_string(i);
    pool[name] = dir.write("images/" + name + ".png", "\x89PNG fake " + name);
  }
  return pool;
}

GameConfig fast_config() {
  GameConfig c;
  c.password_cost = PasswordCost::Minimum;
  c.seed = 7;
  return c;
}

// SQLite in the test's folder, or, when WINOKIT_TEST_POSTGRES holds a URL (see
// tests/cli/game_postgres.sh), a PostgreSQL database emptied for the test.
std::unique_ptr<Database> test_database(const test::TempDir& dir) {
  if (const char* url = std::getenv("WINOKIT_TEST_POSTGRES")) {
    auto db = open_database(url);
    db->query("DROP SCHEMA IF EXISTS public CASCADE");
    db->query("CREATE SCHEMA public");
    return db;
  }
  return open_database((dir.path() / "game.db").string());
}

// A second connection to the test's database (what `winokit game admin` does offline).
std::unique_ptr<Database> second_connection(const test::TempDir& dir) {
  if (const char* url = std::getenv("WINOKIT_TEST_POSTGRES")) return open_database(url);
  return open_database((dir.path() / "game.db").string());
}

std::unique_ptr<Game> make_game(const test::TempDir& dir, GameConfig config = fast_config()) {
  return std::make_unique<Game>(test_database(dir), make_pool(dir, 20),
                                std::make_unique<FirstKRival>(), std::move(config));
}

// A new player, signed in.
Session join(Game& game, const std::string& name) {
  return game.authenticate(game.register_user(name, "password1").token);
}

int error_status(const std::function<void()>& f) {
  try {
    f();
  } catch (const GameError& e) {
    return e.status();
  }
  return 0;
}

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
  // Gold: c[1], c[2]; the rival picks c[0], c[1]: Jaccard 1/3, fool-the-AI 66.67 -> 0.07.
  game->submit_round(spy, d["id"], "moon", {c[1], c[2]});
  for (const char* n : {"a_1", "a_2", "a_3"}) {
    const Session s = join(*game, n);
    game->next_solve(s);
    game->submit_solve(s, d["id"], {c[1], c[2]});
  }
  const json me = game->me(spy);
  EXPECT_EQ(me["rounds"][0]["solvable_by_humans"], 100.0);
  EXPECT_EQ(me["rounds"][0]["bonus"], 0.07);
  EXPECT_EQ(me["creator"]["state"], "qualified");  // fool 66.7 > 40 and solvable 100 > 80
  EXPECT_EQ(me["totals"]["bonus"], 0.07);
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
  EXPECT_EQ(error_status([&] { game->new_round(spy); }), 403);
}

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

TEST(Game, NamesAreUniqueRegardlessOfCaseAndNeedALetterOrDigit) {
  test::TempDir dir;
  auto game = make_game(dir);
  game->register_user("alice", "password1");
  for (const char* variant : {"ALICE", "Alice", "aLiCe"})
    EXPECT_EQ(error_status([&] { game->register_user(variant, "password1"); }), 409) << variant;
  for (const char* bad : {"...", "---", "___", "._-", "al ice", "al\xc3\xa9ce"})
    EXPECT_EQ(error_status([&] { game->register_user(bad, "password1"); }), 400) << bad;
  game->register_user("_a_", "password1");
  game->register_user("..7", "password1");
  // Signing in matches the name regardless of case too.
  EXPECT_EQ(game->authenticate(game->login("ALICE", "password1").token).name, "alice");
}

TEST(Game, CaseVariantsAlreadyStoredKeepTheirAccountsUnderANewName) {
  test::TempDir dir;
  {
    auto db = test_database(dir);
    migrate(*db);
    // A database from before names were case-folded: undo migration 3, add two variants.
    db->query("DROP INDEX users_name_folded");
    db->query("DELETE FROM schema_migrations WHERE version = 3");
    for (const char* n : {"bob", "BOB", "Bob"})
      db->query("INSERT INTO users (name, pass_hash, created_at) VALUES (?, 'x', 0)",
                {std::string(n)});
    migrate(*db);
    std::vector<std::string> names;
    for (const auto& r : db->query("SELECT name FROM users ORDER BY id"))
      names.push_back(db_text(r[0]));
    EXPECT_EQ(names, (std::vector<std::string>{"bob", "BOB~2", "Bob~3"}));
  }
}

TEST(Game, AdminRoleGoesOnlyToAnExistingAccount) {
  test::TempDir dir;
  GameConfig c = fast_config();
  c.admins = {"boss"};
  // No account named boss yet: refused, so whoever registers it first gets nothing.
  EXPECT_THROW(make_game(dir, c), UsageError);
  auto game = make_game(dir);
  const AuthResult boss = game->register_user("boss", "password1");
  EXPECT_FALSE(game->authenticate(boss.token).admin);
  EXPECT_EQ(error_status([&] { game->admin_reports(game->authenticate(boss.token)); }), 403);
  EXPECT_THROW(set_game_admin(*second_connection(dir), "nobody", true), UsageError);
  EXPECT_EQ(set_game_admin(*second_connection(dir), "BOSS", true), "boss");
  EXPECT_TRUE(game->authenticate(boss.token).admin);
  EXPECT_EQ(list_game_admins(*second_connection(dir)), (std::vector<std::string>{"boss"}));
  game.reset();
  c.admins = {"Boss"};
  // An existing account: fine (the same database, not emptied as make_game does on PostgreSQL).
  auto again = std::make_unique<Game>(second_connection(dir), make_pool(dir, 20),
                                      std::make_unique<FirstKRival>(), c);
  EXPECT_TRUE(again->authenticate(again->login("boss", "password1").token).admin);
}

TEST(Game, StatusNamesTheModelNotItsPath) {
  struct PathRival : Rival {
    std::vector<std::string> pick(const std::string&, const std::vector<std::string>& c,
                                  int k) override {
      return {c.begin(), c.begin() + k};
    }
    std::string describe() const override { return "/srv/secret/models/clip-vit-b32/"; }
    bool random_weights() const override { return false; }
  };
  test::TempDir dir;
  Game game(test_database(dir), make_pool(dir, 20), std::make_unique<PathRival>(), fast_config());
  EXPECT_EQ(game.status()["rival"], "clip-vit-b32");
  EXPECT_EQ(game.status().dump().find("/srv"), std::string::npos);
}

// ---- HTTP ----
class HttpGame : public ::testing::Test {
 protected:
  void SetUp() override {
    game_ = make_game(dir_);
    ServerOptions o;
    o.port = 0;
    o.threads = 8;
    o.max_body = 4096;
    o.auth_per_minute = 1000;
    o.address_rate = 10000;
    o.address_burst = 10000;
    server_ = std::make_unique<GameServer>(*game_, o);
    std::atomic<int> port{0};
    thread_ = std::thread([&] { server_->run([&](int p) { port = p; }); });
    while (port == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    port_ = port;
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }
  httplib::Client client() const { return httplib::Client("127.0.0.1", port_); }
  struct Player {
    std::string cookie, csrf;
  };
  Player join(const std::string& name) {
    auto c = client();
    auto r = c.Post("/api/register", json({{"name", name}, {"password", "password1"}}).dump(),
                    "application/json");
    EXPECT_EQ(r->status, 201) << r->body;
    Player p;
    const std::string set = r->get_header_value("Set-Cookie");
    EXPECT_NE(set.find("HttpOnly"), std::string::npos);
    EXPECT_NE(set.find("SameSite=Strict"), std::string::npos);
    p.cookie = set.substr(0, set.find(';'));
    p.csrf = json::parse(r->body)["csrf"];
    return p;
  }
  httplib::Result post(const Player& p, const std::string& path, const std::string& body,
                       const std::string& type = "application/json", bool csrf = true) {
    auto c = client();
    httplib::Headers h = {{"Cookie", p.cookie}};
    if (csrf) h.emplace("X-CSRF-Token", p.csrf);
    return c.Post(path.c_str(), h, body, type.c_str());
  }
  httplib::Result get(const Player& p, const std::string& path) {
    auto c = client();
    return c.Get(path.c_str(), {{"Cookie", p.cookie}});
  }
  test::TempDir dir_;
  std::unique_ptr<Game> game_;
  std::unique_ptr<GameServer> server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(HttpGame, PlaysARoundOverHttp) {
  auto c = client();
  auto page = c.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("WinoGAViL"), std::string::npos);
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("default-src 'self'"),
            std::string::npos);
  const Player spy = join("spy"), s1 = join("sol1");
  auto draft = post(spy, "/api/rounds", "{}");
  ASSERT_EQ(draft->status, 200) << draft->body;
  const json d = json::parse(draft->body);
  const auto cands = d["candidates"].get<std::vector<std::string>>();
  auto img = c.Get(("/images/" + cands[0]).c_str());
  EXPECT_EQ(img->status, 200);
  EXPECT_EQ(img->get_header_value("Content-Type"), "image/png");
  const std::string path = "/api/rounds/" + std::to_string(d["id"].get<int>()) + "/submit";
  auto sub =
      post(spy, path, json({{"cue", "ocean"}, {"associations", {cands[2], cands[3]}}}).dump());
  ASSERT_EQ(sub->status, 200) << sub->body;
  EXPECT_EQ(json::parse(sub->body)["fool_the_ai"], 100.0);
  auto task = get(s1, "/api/solve/next");
  EXPECT_EQ(json::parse(task->body)["cue"], "ocean");
  auto solved = post(s1, "/api/solve/" + std::to_string(d["id"].get<int>()),
                     json({{"picks", {cands[2], cands[4]}}}).dump());
  ASSERT_EQ(solved->status, 200) << solved->body;
  EXPECT_NEAR(json::parse(solved->body)["score"].get<double>(), 100.0 / 3, 1e-9);
  auto lb = c.Get("/api/leaderboard");
  EXPECT_EQ(json::parse(lb->body)["solvers"][0]["name"], "sol1");
}

TEST_F(HttpGame, HostileRequestsGetClear4xx) {
  const Player p = join("player");
  auto c = client();
  struct Case {
    int status;
    httplib::Result r;
  };
  std::vector<std::pair<int, httplib::Result>> cases;
  // No CSRF token, a wrong one, a foreign Origin.
  cases.emplace_back(403, post(p, "/api/rounds", "{}", "application/json", false));
  cases.emplace_back(
      403, c.Post("/api/rounds", {{"Cookie", p.cookie}, {"X-CSRF-Token", std::string(32, 'a')}},
                  "{}", "application/json"));
  cases.emplace_back(
      403,
      c.Post("/api/rounds",
             {{"Cookie", p.cookie}, {"X-CSRF-Token", p.csrf}, {"Origin", "http://evil.example"}},
             "{}", "application/json"));
  // Forged, replayed-after-logout and missing sessions.
  Player forged = p;
  forged.cookie = "wk_session=" + std::string(64, 'f');
  cases.emplace_back(401, get(forged, "/api/me"));
  cases.emplace_back(401, get(Player{"wk_session='; DROP TABLE sessions;--", ""}, "/api/me"));
  cases.emplace_back(401, c.Get("/api/me"));
  // Bad bodies: not JSON, not an object, wrong types, wrong content type, too large.
  cases.emplace_back(400, post(p, "/api/rounds", "{not json"));
  cases.emplace_back(400, post(p, "/api/rounds", "[1,2]"));
  cases.emplace_back(415, post(p, "/api/rounds", "{}", "text/plain"));
  cases.emplace_back(413, post(p, "/api/rounds", std::string(100000, ' ')));
  cases.emplace_back(400, c.Post("/api/register",
                                 json({{"name", "x' OR '1'='1"}, {"password", "password1"}}).dump(),
                                 "application/json"));
  cases.emplace_back(400,
                     c.Post("/api/register", json({{"name", 5}, {"password", "password1"}}).dump(),
                            "application/json"));
  cases.emplace_back(400,
                     c.Post("/api/register", json({{"name", "short"}, {"password", "pw"}}).dump(),
                            "application/json"));
  const json d = json::parse(post(p, "/api/rounds", "{}")->body);
  const std::string submit = "/api/rounds/" + std::to_string(d["id"].get<int>()) + "/submit";
  const auto cands = d["candidates"].get<std::vector<std::string>>();
  cases.emplace_back(
      400, post(p, submit,
                json({{"cue", "'; DROP TABLE rounds;--"}, {"associations", {cands[0], cands[1]}}})
                    .dump()));
  cases.emplace_back(
      400,
      post(p, submit, json({{"cue", "sea\u202e"}, {"associations", {cands[0], cands[1]}}}).dump()));
  cases.emplace_back(
      400, post(p, submit, json({{"cue", "sea"}, {"associations", {cands[0], cands[0]}}}).dump()));
  cases.emplace_back(
      400, post(p, submit,
                json({{"cue", "sea"}, {"associations", {cands[0], "../../etc/passwd"}}}).dump()));
  cases.emplace_back(400, post(p, submit, json({{"cue", "sea"}, {"associations", "img0"}}).dump()));
  cases.emplace_back(404,
                     post(p, "/api/rounds/999999999/submit",
                          json({{"cue", "sea"}, {"associations", {cands[0], cands[1]}}}).dump()));
  cases.emplace_back(404, post(p, "/api/rounds/99999999999999999999999/submit", "{}"));
  // An error message quoting a long multi-byte name stays valid JSON (the name is cut).
  std::string long_name(41, 'a');  // byte 64 falls inside a character
  for (int k = 0; k < 12; ++k)
    long_name += "\xc3\xa9";
  cases.emplace_back(
      400, post(p, submit, json({{"cue", "sea"}, {"associations", {cands[0], long_name}}}).dump()));
  cases.emplace_back(404, c.Get("/images/..%2F..%2Fetc%2Fpasswd"));
  cases.emplace_back(404, c.Get("/no/such/page"));
  cases.emplace_back(403, get(p, "/api/admin/reports"));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    ASSERT_TRUE(cases[i].second) << i;
    EXPECT_EQ(cases[i].second->status, cases[i].first) << i << ": " << cases[i].second->body;
    if (cases[i].first != 404 || cases[i].second->body.find("error") != std::string::npos) {
      EXPECT_NE(cases[i].second->body.find("\"error\""), std::string::npos) << i;
      EXPECT_FALSE(json::parse(cases[i].second->body, nullptr, false).is_discarded()) << i;
    }
  }
  // Logout ends the session; replaying its cookie fails.
  EXPECT_EQ(post(p, "/api/logout", "{}")->status, 200);
  EXPECT_EQ(get(p, "/api/me")->status, 401);
}

TEST_F(HttpGame, RandomBodiesNeverCrashTheServer) {
  const Player p = join("fuzzer");
  Rng rng(99);
  const std::vector<std::string> paths = {
      "/api/register", "/api/login",           "/api/rounds",        "/api/rounds/1/submit",
      "/api/solve/1",  "/api/rounds/1/report", "/api/qualification", "/api/admin/reports/1"};
  const std::vector<std::string> pieces = {"{",           "}",
                                           "[",           "]",
                                           "\"",          ":",
                                           ",",           "null",
                                           "1e999",       "\"cue\"",
                                           "\"picks\"",   "\"associations\"",
                                           "\"name\"",    "\\u0000",
                                           "\xff",        "\xc3\x28",
                                           "\"\\ud800\"", "-0",
                                           "true",        "\"answers\"",
                                           "{\"q1\":[]}", "9999999999999999999"};
  int server_errors = 0;
  for (int i = 0; i < 300; ++i) {
    std::string body;
    const int parts = 1 + static_cast<int>(rng.below(12));
    for (int k = 0; k < parts; ++k)
      body += pieces[rng.below(static_cast<std::uint32_t>(pieces.size()))];
    const std::string& path = paths[rng.below(static_cast<std::uint32_t>(paths.size()))];
    auto r = post(p, path, body);
    ASSERT_TRUE(r) << path << " " << body;
    EXPECT_GE(r->status, 200);
    EXPECT_LT(r->status, 500) << path << " " << body << " -> " << r->body;
    if (r->status >= 500) ++server_errors;
  }
  EXPECT_EQ(server_errors, 0);
  EXPECT_EQ(client().Get("/api/status")->status, 200);
}

// Origins are compared with their scheme: https://host:port is another site than http://.
TEST_F(HttpGame, OriginMustMatchSchemeHostAndPort) {
  auto reg = [&](const std::string& origin, const std::string& name) {
    HttpRequest r;
    r.method = "POST";
    r.path = "/api/register";
    r.remote_addr = "127.0.0.1";
    r.headers = {{"host", "127.0.0.1:" + std::to_string(port_)},
                 {"Content-Type", "application/json"},
                 {"Origin", origin}};
    r.body = json({{"name", name}, {"password", "password1"}}).dump();
    return server_->handle(r).status;
  };
  const std::string port = std::to_string(port_);
  EXPECT_EQ(reg("https://127.0.0.1:" + port, "or1"), 403);
  EXPECT_EQ(reg("http://127.0.0.1:" + port + "1", "or2"), 403);
  EXPECT_EQ(reg("http://evil.example", "or3"), 403);
  EXPECT_EQ(reg("null", "or4"), 403);
  EXPECT_EQ(reg("http://127.0.0.1:" + port, "or5"), 201);
}

TEST(GameServerLimits, RateLimitsAnswer429) {
  test::TempDir dir;
  auto game = make_game(dir);
  ServerOptions o;
  o.port = 0;
  o.auth_per_minute = 2;
  GameServer server(*game, o);
  std::atomic<int> port{0};
  std::thread t([&] { server.run([&](int p) { port = p; }); });
  while (port == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  httplib::Client c("127.0.0.1", port);
  std::vector<int> statuses;
  for (int i = 0; i < 4; ++i) {
    auto r = c.Post("/api/login", json({{"name", "nobody"}, {"password", "password1"}}).dump(),
                    "application/json");
    statuses.push_back(r->status);
  }
  server.stop();
  t.join();
  EXPECT_EQ(statuses, (std::vector<int>{401, 401, 429, 429}));
}

TEST(GameServerLimits, BehindATrustedProxyEachClientHasItsOwnLimit) {
  test::TempDir dir;
  auto game = make_game(dir);
  ServerOptions o;
  o.port = 0;
  o.auth_per_minute = 1;
  o.trust_proxy = true;
  GameServer server(*game, o);
  std::atomic<int> port{0};
  std::thread t([&] { server.run([&](int p) { port = p; }); });
  while (port == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  httplib::Client c("127.0.0.1", port);
  auto login = [&](const std::string& forwarded) {
    return c
        .Post("/api/login", {{"X-Forwarded-For", forwarded}},
              json({{"name", "nobody"}, {"password", "password1"}}).dump(), "application/json")
        ->status;
  };
  const std::vector<int> statuses = {login("10.0.0.1"), login("10.0.0.2"),
                                     login("6.6.6.6, 10.0.0.1"), login("10.0.0.3")};
  server.stop();
  t.join();
  // The last hop is the proxy's claim: a forged first entry does not buy a fresh bucket.
  EXPECT_EQ(statuses, (std::vector<int>{401, 401, 429, 401}));
}

// Behind a trusted proxy all connections come from the proxy: the cap applies to requests in
// flight per forwarded address (here 2: a third half-sent request from one client gets 429).
TEST(GameServerLimits, BehindATrustedProxyRequestsInFlightAreCappedPerClient) {
  test::TempDir dir;
  auto game = make_game(dir);
  ServerOptions o;
  o.port = 0;
  o.trust_proxy = true;
  o.max_connections_per_address = 2;
  GameServer server(*game, o);
  std::atomic<int> port{0};
  std::thread t([&] { server.run([&](int p) { port = p; }); });
  while (port == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto half_sent = [&](const std::string& client) {  // head in, body never comes
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port.load()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    const std::string head = "POST /api/login HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: " + client +
                             "\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n";
    EXPECT_EQ(::send(fd, head.data(), head.size(), 0), static_cast<ssize_t>(head.size()));
    return fd;
  };
  const int a1 = half_sent("10.0.0.1"), a2 = half_sent("10.0.0.1");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const int a3 = half_sent("10.0.0.1");
  timeval tv{5, 0};
  setsockopt(a3, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[512] = {};
  const ssize_t n = ::recv(a3, buf, sizeof buf - 1, 0);
  EXPECT_GT(n, 0);
  EXPECT_EQ(std::string(buf).rfind("HTTP/1.1 429", 0), 0u) << buf;
  // Another client behind the same proxy is not affected.
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/api/status", {{"X-Forwarded-For", "10.0.0.2"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  for (int fd : {a1, a2, a3})
    ::close(fd);
  server.stop();
  t.join();
}

}  // namespace
}  // namespace winokit

namespace winokit {
namespace {

// The rival's fast single-prompt path picks what the benchmark's zero-shot solver picks.
TEST(GameRival, AgreesWithTheZeroShotSolver) {
  const std::filesystem::path shared = WINOKIT_SHARED_DIR;
  const auto model = shared / "golden/clip/models/tiny-quickgelu-hf";
  if (!std::filesystem::exists(model / "config.json")) GTEST_SKIP() << "no golden checkpoint";
  test::TempDir dir;
  ClipRunOptions o;
  o.use_cache = false;
  const ClipRuntime rt = ClipRuntime::load(model, o);
  const auto pool = scan_image_pool(shared / "golden/clip/images", 12);
  auto rival = make_clip_rival(rt, pool, false);
  std::vector<std::string> names;
  for (const auto& [name, path] : pool)
    names.push_back(name);
  std::string csv = "candidates,cue,associations,ID\n";
  const std::vector<std::string> cues = {"astronaut", "coffee", "rocket", "cat", "noise", "apple"};
  for (std::size_t i = 0; i < cues.size(); ++i) {
    std::vector<std::string> cands(names.begin() + static_cast<std::ptrdiff_t>(i),
                                   names.begin() + static_cast<std::ptrdiff_t>(i + 6));
    csv += csv_escape(json(cands).dump()) + "," + cues[i] + "," +
           csv_escape(json({cands[0], cands[1], cands[2]}).dump()) + "," + std::to_string(i) + "\n";
  }
  const AssociationDataset ds = parse_winogavil(csv, "rival.csv");
  const SolveResult solved = solve_with_images(rt, ds, pool, {});
  for (std::size_t i = 0; i < ds.instances.size(); ++i) {
    const auto& inst = ds.instances[i];
    EXPECT_EQ(rival->pick(inst.cue, inst.candidates, inst.k()), solved.predictions[i]) << inst.cue;
  }
}

}  // namespace
}  // namespace winokit
