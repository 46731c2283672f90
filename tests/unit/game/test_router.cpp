// The game server's router (src/game/router.hpp) and the 414 on over-long targets: no
// backtracking regex, so a path of any length is matched in one pass without recursion
// (issue 23, item 1: GET /images/ + 26,000 'A's overflowed a worker's stack).
#include <gtest/gtest.h>

#include <string>

#include "game/router.hpp"
#include "game_test_util.hpp"

namespace winokit {
namespace {

Router::Handler mark(std::string* hit, std::string name) {
  return [hit, name](const HttpRequest&, const std::vector<std::string>&, HttpResponse&) {
    *hit = name;
  };
}

TEST(Router, MatchesLiteralsIdsAndTails) {
  std::string hit;
  Router r;
  r.add("GET", "/", mark(&hit, "index"));
  r.add("GET", "/api/status", mark(&hit, "status"));
  r.add("POST", "/api/rounds/{id}/submit", mark(&hit, "submit"));
  r.add("GET", "/images/*", mark(&hit, "image"));
  auto m = r.match("GET", "/");
  ASSERT_NE(m.handler, nullptr);
  m = r.match("POST", "/api/rounds/42/submit");
  ASSERT_NE(m.handler, nullptr);
  EXPECT_EQ(m.captures, std::vector<std::string>{"42"});
  m = r.match("GET", "/images/a/b.png");
  ASSERT_NE(m.handler, nullptr);
  EXPECT_EQ(m.captures, std::vector<std::string>{"a/b.png"});
  HttpResponse res;
  (*m.handler)(HttpRequest{}, m.captures, res);
  EXPECT_EQ(hit, "image");
  for (const char* miss : {"", "api/status", "/api/status/", "/api/statu", "/api/status/x",
                           "/api/rounds//submit", "/api/rounds/4a/submit", "/api/rounds/42",
                           "/api/rounds/42/submit/", "/images/", "/images", "//"}) {
    for (const char* method : {"GET", "POST"}) {
      m = r.match(method, miss);
      EXPECT_EQ(m.handler, nullptr) << miss;
      EXPECT_FALSE(m.path_known) << miss;
    }
  }
  m = r.match("GET", "/api/rounds/42/submit");  // another method: the path is known (405)
  EXPECT_EQ(m.handler, nullptr);
  EXPECT_TRUE(m.path_known);
}

TEST(Router, MatchesPathsOfAnyLengthWithoutRecursion) {
  Router r;
  std::string hit;
  r.add("GET", "/images/*", mark(&hit, "image"));
  r.add("POST", "/api/solve/{id}", mark(&hit, "solve"));
  const std::string a(4'000'000, 'A'), digits(4'000'000, '7');
  auto m = r.match("GET", "/images/" + a);
  ASSERT_NE(m.handler, nullptr);
  EXPECT_EQ(m.captures[0].size(), a.size());
  m = r.match("POST", "/api/solve/" + digits);
  ASSERT_NE(m.handler, nullptr);
  EXPECT_EQ(m.captures[0].size(), digits.size());
}

class LongTargets : public ::testing::Test {
 protected:
  void SetUp() override {
    game_ = make_game(dir_);
    server_ = std::make_unique<GameServer>(*game_, ServerOptions{});
  }
  HttpResponse get(const std::string& method, const std::string& path) {
    HttpRequest req;
    req.method = method;
    req.path = path;
    req.remote_addr = "127.0.0.1";
    req.headers = {{"Content-Type", "application/json"}};
    req.body = "{}";
    return server_->handle(req);
  }
  test::TempDir dir_;
  std::unique_ptr<Game> game_;
  std::unique_ptr<GameServer> server_;
};

// The targets of the red-team report: each crashed `winokit serve` with SIGSEGV.
TEST_F(LongTargets, OverLongTargetsGet414BeforeRouting) {
  const std::string as(26'000, 'A'), digits(30'000, '9');
  for (const auto& [method, path] :
       std::vector<std::pair<std::string, std::string>>{{"GET", "/images/" + as},
                                                        {"POST", "/api/solve/" + digits},
                                                        {"POST", "/api/rounds/" + digits},
                                                        {"GET", "/" + std::string(1 << 20, 'x')}}) {
    const HttpResponse res = get(method, path);
    EXPECT_EQ(res.status, 414) << path.substr(0, 20);
    EXPECT_NE(res.body.find("uri_too_long"), std::string::npos);
  }
  HttpRequest query;
  query.method = "GET";
  query.path = "/api/status";
  query.params = {{"q", std::string(5000, 'q')}};
  EXPECT_EQ(server_->handle(query).status, 414);
}

TEST_F(LongTargets, TargetsUpToTheLimitAreRouted) {
  const std::size_t room = kMaxTargetBytes - std::string("/images/").size();
  EXPECT_EQ(get("GET", "/images/" + std::string(room, 'A')).status, 404);
  EXPECT_EQ(get("GET", "/images/" + std::string(room + 1, 'A')).status, 414);
  // An id of many digits is "no such id", not a crash or an overflow.
  EXPECT_EQ(get("POST", "/api/solve/" + std::string(4000, '9')).status, 404);
  EXPECT_EQ(get("GET", "/api/solve/12").status, 405);
  EXPECT_EQ(get("GET", "/api/status").status, 200);
}

}  // namespace
}  // namespace winokit
