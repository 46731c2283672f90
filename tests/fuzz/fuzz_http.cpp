// libFuzzer target: the game server's request handling (routing, cookies, CSRF, Origin, JSON
// bodies, every API handler) on a real Game over SQLite, without the network. The input is a
// raw HTTP/1.1 request: "METHOD PATH[?QUERY] HTTP/1.1", header lines, a blank line, the body.
// "$COOKIE" and "$CSRF" in it become a signed-in player's session cookie and CSRF token, so
// the fuzzer reaches the handlers behind sign-in. (libmicrohttpd parses the head on the wire.)
//
//   build-fuzz/tests/fuzz/fuzz_http tests/fuzz/corpus/http -max_total_time=60
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "winokit/core/error.hpp"
#include "winokit/game/game.hpp"
#include "winokit/game/server.hpp"

namespace {

using namespace winokit;

class FirstK : public Rival {
 public:
  std::vector<std::string> pick(const std::string&, const std::vector<std::string>& c,
                                int k) override {
    return {c.begin(), c.begin() + std::min<std::size_t>(c.size(), static_cast<std::size_t>(k))};
  }
  std::string describe() const override { return "first-k fuzz rival"; }
  bool random_weights() const override { return true; }
};

struct World {
  std::filesystem::path dir;
  std::unique_ptr<Game> game;
  std::unique_ptr<GameServer> server;
  std::string token, cookie, csrf;

  World() {
    dir = std::filesystem::temp_directory_path() /
          ("winokit-fuzz-http-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir / "images");
    std::map<std::string, std::filesystem::path> pool;
    for (int i = 0; i < 14; ++i) {
      const std::string name = "img" + std::to_string(i);
      const auto p = dir / "images" / (name + ".png");
      std::ofstream(p) << "\x89PNG not really " << name;
      pool[name] = p;
    }
    GameConfig config;
    config.password_cost = PasswordCost::Minimum;
    config.seed = 1;
    config.rules.creator_qualification_rounds = 0;
    config.rules.solves_per_creation = 0;
    game = std::make_unique<Game>(open_database((dir / "game.db").string()), pool,
                                  std::make_unique<FirstK>(), config);
    ServerOptions o;
    o.address_rate = o.address_burst = 1e12;
    o.account_rate = o.account_burst = 1e12;
    o.auth_per_minute = 1e12;
    server = std::make_unique<GameServer>(*game, o);
    sign_in(game->register_user("fuzzer", "password1"));
  }
  void sign_in(const AuthResult& a) {
    token = a.token;
    cookie = "wk_session=" + a.token;
    csrf = a.csrf;
  }
  // An input may have logged the player out: sign in again for the next one. Earlier inputs
  // may also have failed enough sign-ins as "fuzzer" (or "fuzzer2"...) that the account
  // throttle makes the next one wait: that is the server working, so play on as a new player.
  void keep_signed_in() {
    try {
      game->authenticate(token);
      return;
    } catch (const GameError&) {
    }
    try {
      sign_in(game->login(name, "password1"));
    } catch (const GameError&) {
      for (;;) {  // an input may have taken the next name already
        name = "fuzzplayer" + std::to_string(++players);
        try {
          sign_in(game->register_user(name, "password1"));
          return;
        } catch (const GameError&) {
        }
      }
    }
  }
  std::string name = "fuzzer";
  int players = 1;
  ~World() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// A raw request -> HttpRequest, leniently (malformed lines are kept as they come).
HttpRequest parse(std::string text) {
  HttpRequest r;
  r.remote_addr = "127.0.0.1";
  const std::size_t head_end = text.find("\r\n\r\n");
  const std::string head = text.substr(0, head_end);
  r.body = head_end == std::string::npos ? "" : text.substr(head_end + 4);
  std::size_t pos = 0;
  bool first = true;
  while (pos <= head.size()) {
    std::size_t end = head.find("\r\n", pos);
    if (end == std::string::npos) end = head.size();
    const std::string line = head.substr(pos, end - pos);
    pos = end + 2;
    if (first) {
      first = false;
      const std::size_t a = line.find(' ');
      r.method = line.substr(0, a);
      if (a == std::string::npos) continue;
      const std::size_t b = line.find(' ', a + 1);
      std::string target = line.substr(a + 1, b == std::string::npos ? b : b - a - 1);
      const std::size_t q = target.find('?');
      if (q != std::string::npos) {
        std::string query = target.substr(q + 1);
        target.resize(q);
        std::size_t p = 0;
        while (p <= query.size()) {
          std::size_t amp = query.find('&', p);
          if (amp == std::string::npos) amp = query.size();
          const std::string kv = query.substr(p, amp - p);
          const std::size_t eq = kv.find('=');
          r.params.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
          p = amp + 1;
        }
      }
      r.path = target;
      continue;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    r.headers.emplace_back(line.substr(0, colon), value);
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static World world;
  if (size > 64 * 1024) return 0;  // the server caps bodies at 64 KiB before handling
  std::string text(reinterpret_cast<const char*>(data), size);
  replace_all(text, "$COOKIE", world.cookie);
  replace_all(text, "$CSRF", world.csrf);
  const HttpResponse res = world.server->handle(parse(std::move(text)));
  // Whatever comes in: an answer with a status, never a crash, never a 500.
  if (res.status < 200 || res.status >= 500) __builtin_trap();
  world.keep_signed_in();
  return 0;
}
