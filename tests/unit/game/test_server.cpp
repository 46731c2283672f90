// The HTTP API under malformed and hostile input, rate limits and proxies
// (winokit/game/server.hpp).
#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "game_test_util.hpp"
#include "winokit/io/files.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/png_writer.hpp"

namespace winokit {
namespace {

using nlohmann::json;

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
  EXPECT_EQ(get(s1, "/api/solve/next")->status, 405);  // a state change: POST only
  EXPECT_EQ(post(s1, "/api/solve/next", "{}", "application/json", false)->status, 403);  // CSRF
  auto task = post(s1, "/api/solve/next", "{}");
  EXPECT_EQ(json::parse(task->body)["cue"], "ocean");
  auto solved = post(s1, "/api/solve/" + std::to_string(d["id"].get<int>()),
                     json({{"picks", {cands[2], cands[4]}}}).dump());
  ASSERT_EQ(solved->status, 200) << solved->body;
  EXPECT_NEAR(json::parse(solved->body)["score"].get<double>(), 100.0 / 3, 1e-9);
  // No reply names an image: ids only (the names are the concepts in WinoGAViL's pools).
  const std::string me = get(spy, "/api/me")->body;
  for (const auto& entry : game_->pool()) {
    for (const std::string& body : {draft->body, sub->body, task->body, solved->body, me})
      EXPECT_EQ(body.find(entry.first), std::string::npos) << entry.first << " in " << body;
  }
  // A name where an id belongs matches no candidate (and the error does not echo it).
  auto draft2 = post(s1, "/api/rounds", "{}");
  ASSERT_EQ(draft2->status, 200) << draft2->body;
  const json d2 = json::parse(draft2->body);
  std::vector<std::string> names2;
  for (const auto& id : d2["candidates"])
    names2.push_back(*game_->image_ids().name_of(id.get<std::string>()));
  auto by_name = post(s1, "/api/rounds/" + std::to_string(d2["id"].get<int>()) + "/submit",
                      json({{"cue", "ocean"}, {"associations", {names2[0], names2[1]}}}).dump());
  EXPECT_EQ(by_name->status, 400) << by_name->body;
  EXPECT_EQ(by_name->body.find(names2[0]), std::string::npos) << by_name->body;
  auto lb = c.Get("/api/leaderboard");
  EXPECT_EQ(json::parse(lb->body)["solvers"][0]["name"], "sol1");
}

// Issue 23, item 2: a second server on a port the first listens on started and shared it
// (SO_REUSEPORT); now it refuses with "address already in use" (exit 2 in the CLI).
TEST_F(HttpGame, ASecondServerOnTheSamePortIsRefused) {
  test::TempDir dir2;
  auto game2 = make_game(dir2);
  ServerOptions o;
  o.port = port_;
  GameServer second(*game2, o);
  bool ready = false;
  try {
    second.run([&](int) {
      ready = true;
      second.stop();
    });
    FAIL() << "a second server listened on port " << port_;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("address already in use"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(ready);
  auto c = client();  // the first one still answers
  EXPECT_EQ(c.Get("/api/status")->status, 200);
}

// Issue 23, items 6 and 7: images come from the file (no copy in the reply object), and the
// page's favicon is a file the CSP allows (img-src 'self'), not an inline data: URL.
TEST_F(HttpGame, ImagesAndTheFaviconAreServedFromFiles) {
  auto c = client();
  auto page = c.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->body.find("data:"), std::string::npos);
  EXPECT_NE(page->body.find("href=\"/favicon.svg\""), std::string::npos);
  auto icon = c.Get("/favicon.svg");
  ASSERT_TRUE(icon);
  EXPECT_EQ(icon->status, 200);
  EXPECT_EQ(icon->get_header_value("Content-Type").rfind("image/svg+xml", 0), 0u);
  EXPECT_NE(icon->body.find("<svg"), std::string::npos);
  const auto& [name, file] = *game_->pool().begin();
  // Images by opaque id only: the name (the concept in WinoGAViL's pools) is not a path.
  const std::string id = game_->image_ids().id_of(name);
  ASSERT_EQ(id.size(), 24u);
  EXPECT_EQ(id.find(name), std::string::npos);
  EXPECT_EQ(c.Get(("/images/" + name).c_str())->status, 404);
  auto img = c.Get(("/images/" + id).c_str());
  ASSERT_TRUE(img);
  EXPECT_EQ(img->status, 200);
  EXPECT_EQ(img->body, read_file(file));
  HttpRequest req;
  req.method = "GET";
  req.path = "/images/" + id;
  const HttpResponse res = server_->handle(req);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.file, file);
  EXPECT_TRUE(res.body.empty());
  // Thumbnails: a JPEG at one of three sizes (the shorter side), far smaller than a large
  // original; another size is a clear 400; an unreadable file a clear 404.
  EXPECT_EQ(c.Get(("/images/" + id + "?w=160").c_str())->status, 404);  // the fixture's fake PNG
  std::vector<std::uint8_t> rgb(600 * 450 * 3);
  std::uint32_t x = 2463534242u;  // xorshift noise: a large PNG, like a photo
  for (auto& v : rgb) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    v = static_cast<std::uint8_t>(x >> 24);
  }
  const std::string png = encode_png_rgb8(rgb, 600, 450);
  std::ofstream(file, std::ios::binary) << png;
  auto thumb = c.Get(("/images/" + id + "?w=160").c_str());
  ASSERT_TRUE(thumb);
  EXPECT_EQ(thumb->status, 200);
  EXPECT_EQ(thumb->get_header_value("Content-Type"), "image/jpeg");
  const DecodedImage small = decode_image(thumb->body, "thumb.jpg");
  EXPECT_EQ(small.width, 213);
  EXPECT_EQ(small.height, 160);
  EXPECT_LT(thumb->body.size() * 4, png.size());
  EXPECT_EQ(c.Get(("/images/" + id + "?w=161").c_str())->status, 400);
  EXPECT_EQ(c.Get(("/images/" + id + "?w=").c_str())->status, 400);
}

// Issue 23, item 6: a DNS-rebinding page (a name of the attacker's resolving to this server)
// sends its own Host; the server answers only for its own.
TEST_F(HttpGame, HostMustBeThisServers) {
  auto c = client();
  EXPECT_EQ(c.Get("/api/status", {{"Host", "evil.example:" + std::to_string(port_)}})->status, 403);
  EXPECT_EQ(c.Get("/", {{"Host", "evil.example"}})->status, 403);
  EXPECT_EQ(c.Get("/api/status", {{"Host", "localhost:" + std::to_string(port_)}})->status, 200);
  EXPECT_EQ(c.Get("/api/status", {{"Host", "[::1]:" + std::to_string(port_)}})->status, 200);
  EXPECT_EQ(c.Get("/api/status")->status, 200);  // 127.0.0.1:port
  ServerOptions o;
  o.public_origin = "https://game.example.org";
  GameServer named(*game_, o);
  HttpRequest req;
  req.method = "GET";
  req.path = "/api/status";
  req.headers = {{"Host", "game.example.org"}};
  EXPECT_EQ(named.handle(req).status, 200);
  req.headers = {{"Host", "127.0.0.1:8080"}};
  EXPECT_EQ(named.handle(req).status, 403);
  req.method = "POST";
  req.path = "/api/register";
  req.body = R"({"name": "zed", "password": "password1"})";
  req.headers = {{"Host", "game.example.org"},
                 {"Origin", "http://game.example.org"},
                 {"Content-Type", "application/json"}};
  EXPECT_EQ(named.handle(req).status, 403);  // the scheme differs from the public origin
  req.headers[1].second = "https://game.example.org";
  EXPECT_EQ(named.handle(req).status, 201) << named.handle(req).body;
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
