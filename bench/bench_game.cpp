// Load generator and checker for `winokit serve`, over HTTP on loopback.
//
//   bench_game --port P --players 200 --rounds 2000 --seconds 60 [--solve-rate 300]
//              [--mixed-creators 1] [--ack acks.jsonl]
//   bench_game --port P --verify acks.jsonl
//
// Phases: (1) register the players; (2) spymasters: `--creators` players at a time create
// `--rounds` associations (new round, then the submission that includes the rival's answer);
// (3) every player solves in a loop (next assignment, then the solve submission) for
// `--seconds` or until nothing is left (paced to `--solve-rate` solves per second over all
// players, or unpaced), while `--mixed-creators` spymaster streams keep creating associations
// (their submissions, with the rival, measured under that load). Latencies are measured per
// request on the client;
// throughput is acknowledged solves per second of phase 3. Every acknowledged write is appended
// to the --ack file (flushed line by line) so that --verify can check, after a crash and restart,
// that the server still has each one (through each player's dashboard).
//
// The server should run with --password-cost min (registration is not what is measured),
// --solves-per-creation 0 and --creator-qualification-rounds 0 (so that phase 2 can seed work),
// and limits above the load (--rate-address, --burst-address, --rate-account, --auth-per-minute).
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string host = "127.0.0.1", ack, verify, prefix = "player";
  int port = 8080, players = 200, creators = 8, rounds = 2000, seconds = 60;
  double solve_rate = 0;   // target solves per second over all players (0: as fast as possible)
  int mixed_creators = 0;  // spymaster streams that keep creating during phase 3
};

struct Player {
  std::string name, cookie, csrf;
};

struct Stats {
  std::mutex mutex;
  std::vector<double> ms;
  std::map<std::string, int> errors;
  void add(double v) {
    std::lock_guard<std::mutex> l(mutex);
    ms.push_back(v);
  }
  void error(const std::string& what) {
    std::lock_guard<std::mutex> l(mutex);
    ++errors[what];
  }
  double pct(double p) {
    if (ms.empty()) return 0;
    std::sort(ms.begin(), ms.end());
    const auto i = static_cast<std::size_t>(p * static_cast<double>(ms.size() - 1));
    return ms[i];
  }
};

class AckLog {
 public:
  explicit AckLog(const std::string& path) {
    if (!path.empty()) out_.open(path, std::ios::app);
  }
  void write(const json& j) {
    if (!out_.is_open()) return;
    std::lock_guard<std::mutex> l(mutex_);
    out_ << j.dump() << "\n";
    out_.flush();
  }

 private:
  std::mutex mutex_;
  std::ofstream out_;
};

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

httplib::Headers headers(const Player& p) {
  return {{"Cookie", p.cookie}, {"X-CSRF-Token", p.csrf}};
}

bool sign_in(httplib::Client& c, Player& p, bool create, std::string* why = nullptr) {
  const json body = {{"name", p.name}, {"password", "password-" + p.name}};
  auto r = c.Post(create ? "/api/register" : "/api/login", body.dump(), "application/json");
  if (!r || (r->status != 200 && r->status != 201)) {
    if (why)
      *why = r ? std::to_string(r->status) + " " + r->body.substr(0, 80)
               : httplib::to_string(r.error());
    return false;
  }
  const std::string set = r->get_header_value("Set-Cookie");
  p.cookie = set.substr(0, set.find(';'));
  p.csrf = json::parse(r->body)["csrf"];
  return true;
}

void print_stats(const char* what, Stats& s, double seconds) {
  std::lock_guard<std::mutex> l(s.mutex);
  std::sort(s.ms.begin(), s.ms.end());
  std::printf("%-34s n=%zu  %.1f/s  p50 %.1f ms  p90 %.1f ms  p99 %.1f ms  max %.1f ms", what,
              s.ms.size(), seconds > 0 ? static_cast<double>(s.ms.size()) / seconds : 0.0,
              s.pct(0.5), s.pct(0.9), s.pct(0.99), s.ms.empty() ? 0.0 : s.ms.back());
  int errors = 0;
  for (const auto& [k, v] : s.errors)
    errors += v;
  std::printf("  errors %d", errors);
  for (const auto& [k, v] : s.errors)
    std::printf(" [%s x%d]", k.c_str(), v);
  std::printf("\n");
}

int verify(const Options& o) {
  std::ifstream in(o.verify);
  std::map<std::string, std::set<long long>> rounds, solves;
  std::string line;
  std::size_t acked = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;  // a line cut by the kill was never acknowledged
    ++acked;
    (j["kind"] == "round" ? rounds : solves)[j["player"]].insert(j["id"].get<long long>());
  }
  std::set<std::string> names;
  for (const auto& [n, s] : rounds)
    names.insert(n);
  for (const auto& [n, s] : solves)
    names.insert(n);
  httplib::Client c(o.host, o.port);
  std::size_t missing = 0;
  for (const auto& name : names) {
    Player p{name, "", ""};
    if (!sign_in(c, p, false)) {
      std::printf("missing player %s\n", name.c_str());
      missing += rounds[name].size() + solves[name].size();
      continue;
    }
    auto r = c.Get("/api/me", headers(p));
    const json me = json::parse(r->body);
    std::set<long long> have_rounds, have_solves;
    for (const auto& x : me["rounds"])
      have_rounds.insert(x["id"].get<long long>());
    for (const auto& x : me["solves"])
      have_solves.insert(x["round"].get<long long>());
    for (long long id : rounds[name])
      if (!have_rounds.count(id)) {
        std::printf("lost round %lld of %s\n", id, name.c_str());
        ++missing;
      }
    for (long long id : solves[name])
      if (!have_solves.count(id)) {
        std::printf("lost solve of round %lld by %s\n", id, name.c_str());
        ++missing;
      }
  }
  std::printf("verify: %zu acknowledged writes of %zu players checked, %zu missing\n", acked,
              names.size(), missing);
  return missing == 0 && acked > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--host")
      o.host = v;
    else if (a == "--port")
      o.port = std::stoi(v);
    else if (a == "--players")
      o.players = std::stoi(v);
    else if (a == "--creators")
      o.creators = std::stoi(v);
    else if (a == "--rounds")
      o.rounds = std::stoi(v);
    else if (a == "--seconds")
      o.seconds = std::stoi(v);
    else if (a == "--ack")
      o.ack = v;
    else if (a == "--verify")
      o.verify = v;
    else if (a == "--prefix")
      o.prefix = v;
    else if (a == "--solve-rate")
      o.solve_rate = std::stod(v);
    else if (a == "--mixed-creators")
      o.mixed_creators = std::stoi(v);
    else {
      std::cerr << "unknown option " << a << "\n";
      return 2;
    }
  }
  if (!o.verify.empty()) return verify(o);
  AckLog acks(o.ack);
  std::vector<Player> players(static_cast<std::size_t>(o.players));
  Stats reg;
  {
    const auto t0 = Clock::now();
    std::vector<std::thread> ts;
    std::atomic<int> next{0};
    for (int t = 0; t < 8; ++t) {
      ts.emplace_back([&] {
        httplib::Client c(o.host, o.port);
        c.set_tcp_nodelay(true);
        for (int i; (i = next++) < o.players;) {
          Player& p = players[static_cast<std::size_t>(i)];
          p.name = o.prefix + std::to_string(i);
          const auto t1 = Clock::now();
          std::string why;
          if (sign_in(c, p, true, &why) || sign_in(c, p, false, &why)) {
            reg.add(ms_since(t1));
          } else {
            reg.error(why);
          }
        }
      });
    }
    for (auto& t : ts)
      t.join();
    print_stats("register (Argon2id per account)", reg,
                std::chrono::duration<double>(Clock::now() - t0).count());
  }

  // Spymasters: `threads` streams create rounds until `more()` says stop. Each cue is a new word
  // (letters only), so every rival answer runs the text tower instead of coming from the
  // embedding cache.
  std::atomic<int> created{0}, cue_counter{0};
  auto spymasters = [&](int threads, const std::function<bool()>& more, Stats& draft,
                        Stats& submit) {
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        httplib::Client c(o.host, o.port);
        c.set_keep_alive(true);
        c.set_tcp_nodelay(true);
        for (int k = t; more(); k += threads) {
          const Player& p = players[static_cast<std::size_t>(k % o.players)];
          auto t1 = Clock::now();
          auto r = c.Post("/api/rounds", headers(p), "{}", "application/json");
          if (!r || r->status != 200) {
            draft.error(r ? std::to_string(r->status) : httplib::to_string(r.error()));
            if (!r) return;
            continue;
          }
          draft.add(ms_since(t1));
          const json d = json::parse(r->body);
          const auto cands = d["candidates"].get<std::vector<std::string>>();
          std::string cue = "q";
          for (int v = ++cue_counter; v > 0; v /= 26)
            cue += static_cast<char>('a' + v % 26);
          const json body = {{"cue", cue}, {"associations", {cands[0], cands[1]}}};
          t1 = Clock::now();
          r = c.Post(
              ("/api/rounds/" + std::to_string(d["id"].get<long long>()) + "/submit").c_str(),
              headers(p), body.dump(), "application/json");
          if (!r || r->status != 200) {
            submit.error(r ? std::to_string(r->status) + " " + r->body.substr(0, 60)
                           : httplib::to_string(r.error()));
            if (!r) return;
            continue;
          }
          submit.add(ms_since(t1));
          acks.write({{"kind", "round"}, {"player", p.name}, {"id", d["id"]}});
          ++created;
        }
      });
    }
    for (auto& t : ts)
      t.join();
  };

  // Phase 2: spymasters seed the work.
  Stats draft, submit;
  {
    const auto t0 = Clock::now();
    spymasters(
        o.creators, [&] { return created < o.rounds; }, draft, submit);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    print_stats("spymaster: new round", draft, s);
    print_stats("spymaster: submit (with the rival)", submit, s);
  }

  // Phase 3: every player solves.
  Stats next_stats, solve, mixed_draft, mixed_submit;
  {
    const auto t0 = Clock::now();
    const auto deadline = t0 + std::chrono::seconds(o.seconds);
    std::vector<std::thread> ts;
    for (int t = 0; t < o.players; ++t) {
      ts.emplace_back([&, t] {
        httplib::Client c(o.host, o.port);
        c.set_keep_alive(true);
        c.set_tcp_nodelay(true);
        const Player& p = players[static_cast<std::size_t>(t)];
        // Paced players: each solves once per `players / solve_rate` seconds, staggered.
        const auto period = std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(o.solve_rate > 0 ? o.players / o.solve_rate : 0));
        auto slot = t0 + period * t / o.players;
        while (Clock::now() < deadline) {
          if (o.solve_rate > 0) {
            std::this_thread::sleep_until(slot);
            slot += period;
          }
          auto t1 = Clock::now();
          auto r = c.Post("/api/solve/next", headers(p), "{}", "application/json");
          if (!r || r->status != 200) {
            next_stats.error(r ? std::to_string(r->status) : httplib::to_string(r.error()));
            if (!r) return;
            continue;
          }
          next_stats.add(ms_since(t1));
          const json task = json::parse(r->body);
          if (task["id"].is_null()) return;  // nothing left for this player
          const auto cands = task["candidates"].get<std::vector<std::string>>();
          const int k = task["k"];
          const json body = {{"picks", std::vector<std::string>(cands.begin(), cands.begin() + k)}};
          t1 = Clock::now();
          r = c.Post(("/api/solve/" + std::to_string(task["id"].get<long long>())).c_str(),
                     headers(p), body.dump(), "application/json");
          if (!r || r->status != 200) {
            solve.error(r ? std::to_string(r->status) + " " + r->body.substr(0, 60)
                          : httplib::to_string(r.error()));
            if (!r) return;
            continue;
          }
          solve.add(ms_since(t1));
          acks.write({{"kind", "solve"}, {"player", p.name}, {"id", task["id"]}});
        }
      });
    }
    // Spymasters keep creating while the players solve (--mixed-creators streams).
    std::atomic<bool> solving{true};
    std::thread mixed([&] {
      if (o.mixed_creators > 0) {
        spymasters(
            o.mixed_creators, [&] { return solving && Clock::now() < deadline; }, mixed_draft,
            mixed_submit);
      }
    });
    for (auto& t : ts)
      t.join();
    solving = false;
    mixed.join();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    print_stats("solver: next assignment", next_stats, s);
    print_stats("solver: submit", solve, s);
    if (o.mixed_creators > 0) {
      print_stats("spymaster submit, during solving", mixed_submit, s);
    }
    std::printf("phase 3: %d players for %.1f s%s\n", o.players, s,
                o.solve_rate > 0
                    ? (", paced at " + std::to_string(o.solve_rate) + " solves/s").c_str()
                    : ", unpaced");
  }
  int errors = 0;
  for (Stats* s : {&reg, &draft, &submit, &next_stats, &solve, &mixed_draft, &mixed_submit})
    for (const auto& [k, v] : s->errors)
      errors += v;
  return errors == 0 ? 0 : 1;
}
