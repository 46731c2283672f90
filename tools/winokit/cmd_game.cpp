// winokit serve: the WinoGAViL game server; winokit game export: its played associations as a
// WinoGAViL CSV.
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "commands.hpp"
#include "common.hpp"
#include "winokit/core/error.hpp"
#include "winokit/game/auth.hpp"
#include "winokit/game/export.hpp"
#include "winokit/game/game.hpp"
#include "winokit/game/image_pool.hpp"
#include "winokit/game/server.hpp"
#include "winokit/io/files.hpp"
#include "winokit/model/compute.hpp"
#include "winokit/model/tokenizer.hpp"

namespace winokit::cli {

namespace {

constexpr std::uint64_t kDefaultRivalSeed = 1;

struct ServeFlags {
  std::string images, db = "winokit-game.db", qualification, blocklist, bonus_tiers;
  std::string password_cost = "interactive", sync = "normal";
  std::vector<std::string> admins;
  std::uint64_t rival_seed = kDefaultRivalSeed, seed = 0;
  int creator_rounds = 1, solves_per_creation = 1, attempts = 3, connections = 8;
  ServerOptions server;
  ModelFlags model;
};

int run_serve(const ServeFlags& f) {
  // SIGINT / SIGTERM stop the server cleanly: blocked here, before any thread starts (threads
  // inherit the mask), and taken by one watcher thread (stop() is not async-signal-safe).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const ServerOptions& so = f.server;
  if (so.threads < 1 || so.io_threads < 1 || so.max_connections < 1 ||
      so.max_connections_per_address < 1 || so.max_queue < 1 || so.request_seconds < 1) {
    throw UsageError(
        "--http-threads, --io-threads, --max-connections, --max-connections-per-address, "
        "--max-queue and --request-seconds must be positive");
  }
  if (so.host.find_first_not_of("0123456789.:abcdefABCDEF") != std::string::npos &&
      so.host != "localhost") {
    throw UsageError("--host must be a numeric IPv4 or IPv6 address, not '" + so.host + "'");
  }
  GameConfig config;
  if (!f.qualification.empty()) config.qualification = load_winogavil(f.qualification).instances;
  if (!f.blocklist.empty()) config.blocklist = parse_blocklist(read_file(f.blocklist));
  if (!f.bonus_tiers.empty()) {
    try {
      config.rules.bonus_tiers = GameRules::parse_bonus_tiers(f.bonus_tiers);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--bonus-tiers: ") + e.what());
    }
  }
  config.rules.creator_qualification_rounds = f.creator_rounds;
  config.rules.solves_per_creation = f.solves_per_creation;
  config.qualification_attempts = f.attempts;
  config.admins = {f.admins.begin(), f.admins.end()};
  config.seed = f.seed;
  if (f.password_cost == "interactive")
    config.password_cost = PasswordCost::Interactive;
  else if (f.password_cost == "moderate")
    config.password_cost = PasswordCost::Moderate;
  else if (f.password_cost == "min")
    config.password_cost = PasswordCost::Minimum;
  else
    throw UsageError("--password-cost is interactive, moderate or min");
  if (f.sync != "normal" && f.sync != "full") throw UsageError("--sync is normal or full");
  const auto max_n =
      *std::max_element(config.rules.candidate_counts.begin(), config.rules.candidate_counts.end());
  auto pool = scan_image_pool(f.images, static_cast<std::size_t>(max_n));
  for (const auto& inst : config.qualification) {
    for (const auto& c : inst.candidates) {
      if (!pool.count(c)) {
        throw InputError({f.qualification, inst.line, "candidates"},
                         "image '" + c + "' is not in " + f.images);
      }
    }
  }
  // --admin NAME: checked before the pool is encoded (which can take minutes with a real
  // model), with the message the game gives.
  if (!f.admins.empty()) {
    const bool exists =
        f.db.rfind("postgres", 0) == 0 ||
        std::filesystem::exists(f.db.rfind("sqlite:", 0) == 0 ? f.db.substr(7) : f.db);
    std::unique_ptr<Database> db =
        exists ? open_database(f.db, SqliteSync::Normal, false) : nullptr;
    if (!db || !is_game_database(*db)) {
      throw UsageError("no account named '" + f.admins.front() +
                       "': the admin role goes to an existing account (register it first)");
    }
    Transaction tx(*db);  // only a look: set, then rolled back
    for (const auto& name : f.admins)
      set_game_admin(*db, name, true);
  }
  const bool random = f.model.model.empty();
  std::unique_ptr<VlModel> model;
  if (random) {
    set_compute_threads(f.model.threads);
    model = random_demo_model(f.rival_seed, f.model.options());
  } else {
    model = f.model.open("serve", Ability::PairScores);
  }
  const std::string family = model->family(), head = model->head();
  std::cerr << "winokit serve: encoding " << pool.size() << " images with the rival ("
            << model->name() << ", " << family << ")...\n";
  const auto embed_start = std::chrono::steady_clock::now();
  auto rival = make_model_rival(std::move(model), pool, random);
  const std::string rival_name =
      rival->describe() + " (" + family + (head.empty() ? "" : ", " + head + " head") + ")";
  if (!pool.empty()) {
    std::fprintf(
        stderr, "winokit serve: rival ready for %zu images in %.1f s\n", pool.size(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - embed_start).count());
  }
  // SQLite: one connection (its writes serialise anyway). PostgreSQL: a pool, so requests'
  // transactions overlap and the server groups their commits.
  std::vector<std::unique_ptr<Database>> connections;
  const SqliteSync sync = f.sync == "full" ? SqliteSync::Full : SqliteSync::Normal;
  connections.push_back(open_database(f.db, sync));
  if (f.connections < 1) throw UsageError("--db-connections must be at least 1");
  if (connections.front()->kind() == "postgresql") {
    for (int i = 1; i < f.connections; ++i)
      connections.push_back(open_database(f.db, sync));
  }
  Game game(std::move(connections), std::move(pool), std::move(rival), std::move(config));
  GameServer server(game, f.server);
  std::thread watcher([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    server.stop();
  });
  watcher.detach();
  server.run([&](int port) {
    std::cout << "winokit serve: listening on http://" << f.server.host << ":" << port
              << "/ (database " << f.db << ", rival " << rival_name << ")" << std::endl;
  });
  std::cout << "winokit serve: stopped" << std::endl;
  return 0;
}

struct ExportFlags {
  std::string db = "winokit-game.db", out;
  double min_solvable = 80;
};

// Opens an existing game database (never creates one).
std::unique_ptr<Database> open_game_database(const std::string& url, bool read_only) {
  if (url.rfind("postgres", 0) != 0 &&
      !std::filesystem::exists(url.rfind("sqlite:", 0) == 0 ? url.substr(7) : url)) {
    throw IoError(url + ": no such database");
  }
  auto db = open_database(url, SqliteSync::Normal, read_only);
  // Read-only check (schema_version() would create its table in a foreign database).
  if (!is_game_database(*db)) throw InputError({url, 0, ""}, "not a winokit game database");
  return db;
}

struct AdminFlags {
  std::string db = "winokit-game.db";
  std::vector<std::string> grant, revoke;
  bool list = false;
};

int run_admin(const AdminFlags& f) {
  if (f.grant.empty() && f.revoke.empty() && !f.list) {
    throw UsageError("say what to do: --grant NAME, --revoke NAME or --list");
  }
  auto db = open_game_database(f.db, /*read_only=*/false);
  {
    // All or nothing, and said only once it happened: a missing name rolls every change back
    // and nothing is reported as granted.
    std::vector<std::string> done;
    Transaction tx(*db);
    for (const auto& name : f.grant)
      done.push_back("granted the admin role to " + set_game_admin(*db, name, true));
    for (const auto& name : f.revoke)
      done.push_back("revoked the admin role of " + set_game_admin(*db, name, false));
    tx.commit();
    for (const auto& line : done)
      std::cerr << line << "\n";
  }
  if (f.list) {
    for (const auto& name : list_game_admins(*db))
      std::cout << name << "\n";
  }
  return 0;
}

int run_export(const ExportFlags& f) {
  auto db = open_game_database(f.db, /*read_only=*/true);
  const std::string csv = export_game_csv(*db, f.min_solvable);
  auto rows_of = [](const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) - 1;
  };
  const std::size_t rows = rows_of(csv);
  auto associations = [](std::size_t n) {
    return std::to_string(n) + (n == 1 ? " association" : " associations");
  };
  if (f.out.empty()) {
    std::cout << csv;
  } else {
    write_file_atomic(f.out, csv);
    std::cerr << "winokit: wrote " << associations(rows) << " to " << f.out << "\n";
  }
  if (rows == 0) {
    // Nothing passed the bar: say how many played associations exist, so the user knows whether
    // to lower --min-solvable or to play more rounds.
    const std::size_t played = rows_of(export_game_csv(*db, -1.0));
    std::cerr << "winokit: " << (played ? "0" : "no") << " associations reach --min-solvable "
              << f.min_solvable << "; " << played << (played == 1 ? " exists" : " exist")
              << (played ? " (completed, not removed): lower --min-solvable to export them"
                         : ": no round is complete yet (a round completes when enough players "
                           "have solved it)")
              << "\n";
  }
  return 0;
}

}  // namespace

void add_game(CLI::App& app, int& exit_code) {
  auto s = std::make_shared<ServeFlags>();
  CLI::App* serve = app.add_subcommand("serve", "Run the WinoGAViL game server");
  serve->add_option("--images", s->images, "Folder of the image pool (PNG/JPEG/WebP)")->required();
  serve->add_option("--db", s->db, "SQLite file (WAL) or postgresql://... URL")
      ->capture_default_str();
  serve
      ->add_option("--db-connections", s->connections,
                   "PostgreSQL connections per server process (SQLite uses one)")
      ->capture_default_str();
  serve->add_option("--host", s->server.host, "Address to listen on")->capture_default_str();
  serve->add_option("--port", s->server.port, "Port (0: any free port)")->capture_default_str();
  serve->add_option("--http-threads", s->server.threads, "Worker threads running requests")
      ->capture_default_str();
  serve->add_option("--io-threads", s->server.io_threads, "Event loops serving the connections")
      ->capture_default_str();
  serve
      ->add_option("--max-connections", s->server.max_connections,
                   "Open connections in total (more are closed at once)")
      ->capture_default_str();
  serve
      ->add_option("--max-connections-per-address", s->server.max_connections_per_address,
                   "Open connections per client address; with --trust-proxy, requests in flight "
                   "per forwarded address")
      ->capture_default_str();
  serve
      ->add_option("--request-seconds", s->server.request_seconds,
                   "Deadline for a request's complete head and body (then the connection is "
                   "closed)")
      ->capture_default_str();
  serve
      ->add_option("--max-queue", s->server.max_queue,
                   "Complete requests waiting for a worker (more get 503)")
      ->capture_default_str();
  serve->add_option("--admin", s->admins,
                    "Give an existing account the admin role (repeatable; see `game admin`)");
  serve->add_option("--qualification", s->qualification,
                    "Solver qualification instances (WinoGAViL CSV); none: no test");
  serve->add_option("--qualification-attempts", s->attempts, "Attempts at the test")
      ->capture_default_str();
  serve
      ->add_option("--creator-qualification-rounds", s->creator_rounds,
                   "Associations that qualify a spymaster")
      ->capture_default_str();
  serve
      ->add_option("--solves-per-creation", s->solves_per_creation,
                   "Solves owed after each created association")
      ->capture_default_str();
  serve->add_option("--blocklist", s->blocklist, "Blocked cue words, one per line");
  serve->add_option("--bonus-tiers", s->bonus_tiers,
                    "Bonus table MIN_FOOL:BONUS,... (default 50:0.03,60:0.07,67:0.18,80:0.27)");
  serve
      ->add_option("--password-cost", s->password_cost,
                   "Argon2id cost: interactive, moderate, or min (tests only)")
      ->capture_default_str();
  serve
      ->add_option("--sync", s->sync,
                   "SQLite synchronous: normal (survives a killed process) or full (also power "
                   "loss)")
      ->capture_default_str();
  serve->add_option("--rate-account", s->server.account_rate, "Requests per second per account")
      ->capture_default_str();
  serve->add_option("--rate-address", s->server.address_rate, "Requests per second per address")
      ->capture_default_str();
  serve->add_option("--burst-address", s->server.address_burst, "Burst per address")
      ->capture_default_str();
  serve
      ->add_option("--auth-per-minute", s->server.auth_per_minute,
                   "Register/login attempts per minute per address")
      ->capture_default_str();
  serve->add_flag("--secure-cookie", s->server.secure_cookie, "Mark the cookie Secure (HTTPS)");
  serve->add_flag("--trust-proxy", s->server.trust_proxy,
                  "Behind a reverse proxy: rate-limit by the X-Forwarded-For address it appends");
  serve->add_option("--public-origin", s->server.public_origin,
                    "The origin players use (https://game.example.org): other Host headers are "
                    "refused (default: an IP address or localhost only)");
  serve->add_option("--rival-seed", s->rival_seed, "Seed of the random-weight rival")
      ->capture_default_str();
  serve->add_option("--seed", s->seed, "Seed of candidate sampling (0: random)");
  s->model.add_to(*serve, /*required=*/false);
  serve->callback([s, &exit_code] { exit_code = guarded([&] { return run_serve(*s); }); });

  auto e = std::make_shared<ExportFlags>();
  CLI::App* game = app.add_subcommand("game", "Work with a game database");
  game->require_subcommand(1);
  CLI::App* ex = game->add_subcommand(
      "export", "Played associations as a WinoGAViL CSV (evaluate it with `winokit winogavil`)");
  ex->add_option("--db", e->db, "SQLite file or postgresql://... URL")->capture_default_str();
  ex->add_option("--min-solvable", e->min_solvable,
                 "Minimum solvable-by-humans score (0-100; the CSV writes solvers' Jaccard on the "
                 "published 0-1 scale)")
      ->capture_default_str();
  ex->add_option("--out", e->out, "Output CSV (default: standard output)");
  ex->callback([e, &exit_code] { exit_code = guarded([&] { return run_export(*e); }); });

  auto a = std::make_shared<AdminFlags>();
  CLI::App* ad = game->add_subcommand(
      "admin", "Grant or revoke the admin role of existing accounts (offline or while serving)");
  ad->add_option("--db", a->db, "SQLite file or postgresql://... URL")->capture_default_str();
  ad->add_option("--grant", a->grant, "Account name to make an admin (repeatable)");
  ad->add_option("--revoke", a->revoke, "Account name to take the role from (repeatable)");
  ad->add_flag("--list", a->list, "Print the admins' names");
  ad->callback([a, &exit_code] { exit_code = guarded([&] { return run_admin(*a); }); });
}

}  // namespace winokit::cli
