// The game's facade: owns the connections, the pool, the rival and the configuration, and
// delegates each request to its use case (see winokit/game/game.hpp).
#include "winokit/game/game.hpp"

#include <sodium.h>

#include <algorithm>
#include <iterator>
#include <mutex>
#include <utility>

#include "winokit/core/error.hpp"
#include "winokit/game/auth.hpp"
#include "winokit/game/board.hpp"
#include "winokit/game/export.hpp"
#include "winokit/game/moderation.hpp"
#include "winokit/game/rounds.hpp"
#include "winokit/game/store.hpp"

namespace winokit {

using nlohmann::json;

namespace {

std::vector<std::unique_ptr<Database>> one_connection(std::unique_ptr<Database> db) {
  std::vector<std::unique_ptr<Database>> v;
  v.push_back(std::move(db));
  return v;
}

}  // namespace

struct Game::Impl {
  ConnectionPool connections;
  std::string db_kind;
  std::map<std::string, std::filesystem::path> pool;
  std::vector<std::string> names;
  std::unique_ptr<Rival> rival;
  GameConfig config;
  std::unique_ptr<Auth> auth;
  std::unique_ptr<Rounds> rounds;
  std::unique_ptr<Moderation> moderation;
  std::unique_ptr<Board> board;
  ImageIds image_ids;
  std::mutex thumbs_mutex;
  std::map<std::pair<std::string, int>, std::shared_ptr<const std::string>> thumbs;
  std::size_t thumbs_bytes = 0;
};

namespace {

constexpr std::size_t kThumbnailCacheBytes = 64u << 20;

// The key of the images' ids, made once per database (every server process on it agrees); a
// seeded game (tests) derives it from the seed so that its ids are reproducible.
std::string image_key(Database& db, std::uint64_t seed) {
  unsigned char raw[32];
  if (seed != 0) {
    const std::string label = "winokit image ids " + std::to_string(seed);
    crypto_generichash(raw, sizeof raw, reinterpret_cast<const unsigned char*>(label.data()),
                       label.size(), nullptr, 0);
  } else {
    randombytes_buf(raw, sizeof raw);
  }
  std::string hex;
  for (unsigned char c : raw) {
    hex += "0123456789abcdef"[c >> 4];
    hex += "0123456789abcdef"[c & 15];
  }
  Store store(db);
  store.run(Stmt::insert_setting, {std::string("image_key"), hex});
  return db_text(store.run(Stmt::select_setting, {std::string("image_key")}).at(0).at(0));
}

}  // namespace

Game::Game(std::unique_ptr<Database> db, std::map<std::string, std::filesystem::path> pool,
           std::unique_ptr<Rival> rival, GameConfig config)
    : Game(one_connection(std::move(db)), std::move(pool), std::move(rival), std::move(config)) {}

Game::Game(std::vector<std::unique_ptr<Database>> connections,
           std::map<std::string, std::filesystem::path> pool, std::unique_ptr<Rival> rival,
           GameConfig config)
    : impl_(std::make_unique<Impl>()) {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
  if (connections.empty()) throw UsageError("the game needs a database connection");
  Impl& im = *impl_;
  im.db_kind = connections.front()->kind();
  for (auto& c : connections)
    im.connections.add(std::move(c));
  im.pool = std::move(pool);
  for (const auto& [name, path] : im.pool)
    im.names.push_back(name);
  im.rival = std::move(rival);
  im.config = std::move(config);
  std::uint64_t seed = im.config.seed;
  if (seed == 0) randombytes_buf(&seed, sizeof seed);
  im.auth = std::make_unique<Auth>(im.connections, im.config);
  im.rounds = std::make_unique<Rounds>(im.connections, im.config, im.names, *im.rival, seed);
  im.moderation = std::make_unique<Moderation>(im.connections);
  im.board = std::make_unique<Board>(im.connections, im.config);
  const auto max_n = *std::max_element(im.config.rules.candidate_counts.begin(),
                                       im.config.rules.candidate_counts.end());
  if (im.names.size() < static_cast<std::size_t>(max_n)) {
    throw UsageError("the image pool holds " + std::to_string(im.names.size()) +
                     " images; rounds need up to " + std::to_string(max_n));
  }
  auto lease = im.connections.acquire();
  Database& db = *lease;
  migrate(db);
  im.image_ids = ImageIds(im.names, image_key(db, im.config.seed));
  for (const auto& admin : im.config.admins)
    set_game_admin(db, admin, true);
}

Game::~Game() = default;

const std::map<std::string, std::filesystem::path>& Game::pool() const {
  return impl_->pool;
}
const GameConfig& Game::config() const {
  return impl_->config;
}
const ImageIds& Game::image_ids() const {
  return impl_->image_ids;
}

std::shared_ptr<const std::string> Game::thumbnail(const std::string& name, int side) {
  if (std::find(std::begin(kThumbnailSides), std::end(kThumbnailSides), side) ==
      std::end(kThumbnailSides)) {
    throw GameError(GameErrorKind::Invalid, "bad_size", "w is 160, 320 or 640");
  }
  const auto it = impl_->pool.find(name);
  if (it == impl_->pool.end())
    throw GameError(GameErrorKind::NotFound, "not_found", "no such image");
  const auto key = std::make_pair(name, side);
  {
    std::lock_guard<std::mutex> lock(impl_->thumbs_mutex);
    const auto hit = impl_->thumbs.find(key);
    if (hit != impl_->thumbs.end()) return hit->second;
  }
  std::shared_ptr<const std::string> jpeg;
  try {
    jpeg = std::make_shared<const std::string>(image_thumbnail(it->second, side));
  } catch (const Error&) {
    throw GameError(GameErrorKind::NotFound, "bad_image", "this image cannot be read");
  }
  // Never more bytes than the original (a small or flat image): then the file itself.
  std::error_code ec;
  const auto original = std::filesystem::file_size(it->second, ec);
  if (!ec && jpeg->size() >= original) jpeg = nullptr;
  std::lock_guard<std::mutex> lock(impl_->thumbs_mutex);
  if (jpeg && impl_->thumbs_bytes + jpeg->size() > kThumbnailCacheBytes) {
    impl_->thumbs.clear();  // rare: a pool of thousands of images; they are made again
    impl_->thumbs_bytes = 0;
  }
  if (impl_->thumbs.emplace(key, jpeg).second && jpeg) impl_->thumbs_bytes += jpeg->size();
  return jpeg;
}

AuthResult Game::register_user(const std::string& name, const std::string& password) {
  return impl_->auth->register_user(name, password);
}
AuthResult Game::login(const std::string& name, const std::string& password) {
  return impl_->auth->login(name, password);
}
void Game::logout(const std::string& token) {
  impl_->auth->logout(token);
}
Session Game::authenticate(const std::string& token) {
  return impl_->auth->authenticate(token);
}

json Game::status() const {
  // The model's name, not where it lives on the server: a checkpoint folder's last component.
  std::string rival = impl_->rival->describe();
  if (rival.find('/') != std::string::npos) {
    std::filesystem::path p(rival);
    if (!p.has_filename()) p = p.parent_path();
    rival = p.filename().string();
  }
  const GameRules& rules = impl_->config.rules;
  return {{"rival", rival},
          {"rival_random_weights", impl_->rival->random_weights()},
          {"images", impl_->pool.size()},
          {"database", impl_->db_kind},
          {"qualification_instances", impl_->config.qualification.size()},
          {"rules",
           {{"candidate_counts", rules.candidate_counts},
            {"min_associations", rules.min_associations},
            {"max_associations", rules.max_associations},
            {"solvers_per_association", rules.solvers_per_association},
            {"bonus_min_solvable", rules.bonus_min_solvable},
            {"solves_per_creation", rules.solves_per_creation}}}};
}

json Game::me(const Session& s) {
  return impl_->board->me(s);
}
json Game::qualification_test(const Session& s) {
  return impl_->rounds->qualification_test(s);
}
json Game::submit_qualification(const Session& s, const json& answers) {
  return impl_->rounds->submit_qualification(s, answers);
}
json Game::new_round(const Session& s) {
  return impl_->rounds->new_round(s);
}
json Game::submit_round(const Session& s, std::int64_t round_id, const std::string& cue,
                        const std::vector<std::string>& associations) {
  return impl_->rounds->submit_round(s, round_id, cue, associations);
}
json Game::next_solve(const Session& s) {
  return impl_->rounds->next_solve(s);
}
json Game::submit_solve(const Session& s, std::int64_t round_id,
                        const std::vector<std::string>& picks) {
  return impl_->rounds->submit_solve(s, round_id, picks);
}
json Game::report(const Session& s, std::int64_t round_id, const std::string& reason) {
  return impl_->moderation->report(s, round_id, reason);
}
json Game::admin_reports(const Session& s) {
  return impl_->moderation->admin_reports(s);
}
json Game::admin_review(const Session& s, std::int64_t report_id, const std::string& action) {
  return impl_->moderation->admin_review(s, report_id, action);
}
json Game::leaderboard() {
  return impl_->board->leaderboard();
}
std::string Game::export_csv(double min_solvable) {
  auto lease = impl_->connections.acquire();
  return export_game_csv(*lease, min_solvable);
}

}  // namespace winokit
