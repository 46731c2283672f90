#include "winokit/game/game.hpp"

#include <sodium.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <semaphore>
#include <sstream>
#include <thread>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"
#include "winokit/core/rng.hpp"
#include "winokit/eval/association_solver.hpp"
#include "winokit/io/table.hpp"

namespace winokit {

using nlohmann::json;

namespace {

constexpr std::size_t kTokenBytes = 32, kCsrfBytes = 16;
constexpr std::size_t kMinName = 3, kMaxName = 32, kMinPassword = 8, kMaxPassword = 256;
constexpr std::size_t kMaxReason = 500;
constexpr int kAssignRetries = 8;
constexpr int kAssignSpread = 8;                 // open rounds a solver is drawn among
constexpr std::int64_t kStaleSweepSeconds = 30;  // how often unsolved assignments are swept
constexpr std::ptrdiff_t kMaxHashSlots = 8;

// Holds one of the password-hashing slots for its lifetime.
class SlotGuard {
 public:
  explicit SlotGuard(std::counting_semaphore<kMaxHashSlots>& s) : s_(s) { s_.acquire(); }
  ~SlotGuard() { s_.release(); }
  SlotGuard(const SlotGuard&) = delete;
  SlotGuard& operator=(const SlotGuard&) = delete;

 private:
  std::counting_semaphore<kMaxHashSlots>& s_;
};

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  randombytes_buf(raw.data(), raw.size());
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

json parse_list(const std::string& text) {
  if (text.empty()) return json::array();
  return json::parse(text);
}

std::vector<std::string> as_strings(const std::string& text) {
  return parse_list(text).get<std::vector<std::string>>();
}

void check_name(const std::string& name) {
  if (name.size() < kMinName || name.size() > kMaxName) {
    throw GameError(400, "bad_name", "the name must be 3 to 32 characters");
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) throw GameError(400, "bad_name", "the name may use letters, digits, '_', '-', '.'");
  }
  if (std::none_of(name.begin(), name.end(),
                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)); })) {
    throw GameError(400, "bad_name", "the name needs at least one letter or digit");
  }
}

// Grants or revokes the admin role of an existing account (names match regardless of case).
// Returns the account's name as stored; throws UsageError when there is no such account.
std::string set_admin_role(Database& db, const std::string& name, bool admin) {
  const auto rows =
      db.query("UPDATE users SET is_admin = ? WHERE LOWER(name) = LOWER(?) RETURNING name",
               {std::int64_t{admin}, name});
  if (rows.empty()) {
    throw UsageError("no account named '" + name +
                     "': the admin role goes to an existing account (register it first)");
  }
  return db_text(rows[0][0]);
}

// Picks must be distinct candidates, `k` of them.
void check_picks(const std::vector<std::string>& picks, const std::vector<std::string>& candidates,
                 std::size_t k, const std::string& what) {
  std::set<std::string> seen;
  for (const auto& p : picks) {
    if (std::find(candidates.begin(), candidates.end(), p) == candidates.end()) {
      throw GameError(400, "bad_pick", what + ": '" + p.substr(0, 64) + "' is not a candidate");
    }
    if (!seen.insert(p).second) throw GameError(400, "bad_pick", what + ": picked twice");
  }
  if (picks.size() != k) {
    throw GameError(400, "bad_pick",
                    what + ": select exactly " + std::to_string(k) + " images (got " +
                        std::to_string(picks.size()) + ")");
  }
}

}  // namespace

// ---- the rival ----
namespace {

class ClipRival final : public Rival {
 public:
  static constexpr int kPromptRows = 8;  // "A/An <cue>" is a handful of tokens
  ClipRival(const ClipRuntime& rt, const std::map<std::string, std::filesystem::path>& pool,
            bool random_weights)
      : rt_(rt), random_(random_weights) {
    std::vector<ImageRequest> requests;
    std::vector<std::string> names;
    for (const auto& [name, path] : pool) {
      requests.push_back(image_file_request(path.string(), name));
      names.push_back(name);
    }
    const auto embeds = embed_images(rt_, requests);
    dim_ = rt_.model->config().embed_dim;
    for (std::size_t i = 0; i < names.size(); ++i) {
      images_[names[i]].assign(embeds.begin() + static_cast<std::ptrdiff_t>(i * dim_),
                               embeds.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim_));
    }
  }
  std::vector<std::string> pick(const std::string& cue, const std::vector<std::string>& candidates,
                                int k) override {
    // One short prompt straight through the text tower, on a small fixed GEMM row budget (one
    // compiled kernel; rows are independent, so the embedding equals the batched path's).
    const std::vector<int> ids =
        rt_.tokenizer->encode(cue_prompt(cue, "{A} {cue}"), rt_.model->config().context_length);
    EncodeOptions enc;
    enc.gemm_rows = std::max<int>(kPromptRows, static_cast<int>(ids.size()));
    std::vector<float> text;
    {
      std::lock_guard<std::mutex> lock(mutex_);  // one forward pass at a time
      text = rt_.model->encode_texts({ids}, enc).embeds;
    }
    std::vector<double> scores;
    for (const auto& c : candidates) {
      const auto it = images_.find(c);
      scores.push_back(it == images_.end() ? -INFINITY
                                           : clip_score(text.data(), it->second.data(), dim_, 1.0));
    }
    return select_top_k(candidates, scores, k);
  }
  std::string describe() const override { return rt_.source; }
  bool random_weights() const override { return random_; }

 private:
  ClipRuntime rt_;
  bool random_;
  int dim_ = 0;
  std::map<std::string, std::vector<float>> images_;
  std::mutex mutex_;
};

}  // namespace

std::unique_ptr<Rival> make_clip_rival(const ClipRuntime& runtime,
                                       const std::map<std::string, std::filesystem::path>& pool,
                                       bool random_weights) {
  return std::make_unique<ClipRival>(runtime, pool, random_weights);
}

std::map<std::string, std::filesystem::path> scan_image_pool(const std::filesystem::path& dir,
                                                             std::size_t min_images) {
  if (!std::filesystem::is_directory(dir)) throw IoError(dir.string() + ": not a folder");
  std::map<std::string, std::filesystem::path> pool;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::string ext = entry.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (ext != ".png" && ext != ".jpg" && ext != ".jpeg" && ext != ".webp") continue;
    pool.emplace(entry.path().stem().string(), entry.path());
  }
  if (pool.size() < min_images) {
    throw IoError(dir.string() + ": holds " + std::to_string(pool.size()) +
                  " images; the game needs at least " + std::to_string(min_images));
  }
  return pool;
}

// ---- the game ----
// Database connections shared by the request threads: SQLite has one (its writes serialise
// anyway); PostgreSQL several, so transactions overlap and commits are grouped.
class DbPool {
 public:
  class Lease {
   public:
    Lease(DbPool& pool, Database* db) : pool_(pool), db_(db) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { pool_.give_back(db_); }
    Database& operator*() const { return *db_; }

   private:
    DbPool& pool_;
    Database* db_;
  };
  void add(std::unique_ptr<Database> db) {
    free_.push_back(db.get());
    all_.push_back(std::move(db));
  }
  Lease acquire() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return !free_.empty(); });
    Database* db = free_.back();
    free_.pop_back();
    return Lease(*this, db);
  }
  std::size_t size() const { return all_.size(); }

 private:
  void give_back(Database* db) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      free_.push_back(db);
    }
    cv_.notify_one();
  }
  std::vector<std::unique_ptr<Database>> all_;
  std::vector<Database*> free_;
  std::mutex mutex_;
  std::condition_variable cv_;
};

struct Game::Impl {
  DbPool pool_;
  std::string db_kind;
  std::map<std::string, std::filesystem::path> pool;
  std::vector<std::string> names;
  std::unique_ptr<Rival> rival;
  GameConfig config;
  std::mutex rng_mutex;  // candidate sampling
  Rng rng{0};
  std::string dummy_hash;  // verified for unknown names (same cost as a real one)
  // Argon2id takes 64 MiB per interactive hash: at most this many at once, so a burst of
  // sign-ins cannot take the machine's memory.
  std::counting_semaphore<kMaxHashSlots> hash_slots{
      std::clamp<std::ptrdiff_t>(std::thread::hardware_concurrency(), 1, kMaxHashSlots)};

  std::pair<unsigned long long, std::size_t> password_limits() const {
    switch (config.password_cost) {
      case PasswordCost::Moderate:
        return {crypto_pwhash_OPSLIMIT_MODERATE, crypto_pwhash_MEMLIMIT_MODERATE};
      case PasswordCost::Minimum:
        return {crypto_pwhash_OPSLIMIT_MIN, crypto_pwhash_MEMLIMIT_MIN};
      case PasswordCost::Interactive:
        break;
    }
    return {crypto_pwhash_OPSLIMIT_INTERACTIVE, crypto_pwhash_MEMLIMIT_INTERACTIVE};
  }

  AuthResult new_session(Database& db, std::int64_t user_id) {
    AuthResult a;
    a.token = random_hex(kTokenBytes);
    a.csrf = random_hex(kCsrfBytes);
    const std::int64_t now = now_seconds();
    db.query(
        "INSERT INTO sessions (token_hash, user_id, csrf, created_at, expires_at) VALUES "
        "(?, ?, ?, ?, ?)",
        {sha256_hex(a.token), user_id, a.csrf, now, now + config.session_seconds});
    return a;
  }

  json user_json(Database& db, std::int64_t user_id) {
    const auto rows =
        db.query("SELECT id, name, is_admin, solver_qualified FROM users WHERE id = ?", {user_id});
    if (rows.empty()) throw GameError(404, "no_user", "no such user");
    return {{"id", db_int(rows[0][0])},
            {"name", db_text(rows[0][1])},
            {"admin", db_int(rows[0][2]) != 0},
            {"solver_qualified", db_int(rows[0][3]) != 0}};
  }

  bool solver_qualified(Database& db, std::int64_t user_id) {
    const auto rows = db.query("SELECT solver_qualified FROM users WHERE id = ?", {user_id});
    return !rows.empty() && db_int(rows[0][0]) != 0;
  }

  // "qualified", "pending" (qualification rounds not all solved yet), "open" (may still create
  // qualification rounds) or "failed", with the means over the qualification rounds.
  json creator_status(Database& db, std::int64_t user_id) {
    const int needed = config.rules.creator_qualification_rounds;
    const auto rows = db.query(
        "SELECT state, fool_score, solvable_score FROM rounds WHERE creator_id = ? AND state <> "
        "'draft' AND removed = 0 ORDER BY id LIMIT ?",
        {user_id, std::int64_t{needed}});
    json j = {{"needed_rounds", needed}, {"rounds", rows.size()}};
    if (needed <= 0) {
      j["state"] = "qualified";
      return j;
    }
    if (static_cast<int>(rows.size()) < needed) {
      j["state"] = "open";
      return j;
    }
    double fool = 0, solvable = 0;
    for (const auto& r : rows) {
      if (db_text(r[0]) != "complete") {
        j["state"] = "pending";
        return j;
      }
      fool += db_real(r[1]);
      solvable += db_real(r[2]);
    }
    fool /= needed;
    solvable /= needed;
    j["fool_the_ai"] = fool;
    j["solvable_by_humans"] = solvable;
    j["state"] =
        fool > config.rules.creator_min_fool && solvable > config.rules.creator_min_solvable
            ? "qualified"
            : "failed";
    return j;
  }

  // Rounds this user may solve now: open, visible, not theirs, not taken by them, a free slot.
  std::vector<DbRow> solvable_rounds(Database& db, std::int64_t user_id, int limit) {
    return db.query(
        "SELECT r.id FROM rounds r WHERE r.state = 'open' AND r.hidden = 0 AND r.removed = 0 AND "
        "r.creator_id <> ? AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.round_id = r.id "
        "AND a.solver_id = ?) AND (SELECT COUNT(*) FROM assignments a2 WHERE a2.round_id = r.id) "
        "< ? ORDER BY r.id LIMIT ?",
        {user_id, user_id, std::int64_t{config.rules.solvers_per_association},
         std::int64_t{limit}});
  }

  // Frees assignments left unsolved past the timeout; at most every kStaleSweepSeconds.
  void free_stale_assignments(Database& db) {
    const std::int64_t now = now_seconds();
    std::int64_t last = last_sweep.load();
    if (now - last < kStaleSweepSeconds || !last_sweep.compare_exchange_strong(last, now)) return;
    db.query("DELETE FROM assignments WHERE solved_at IS NULL AND assigned_at < ?",
             {now - config.assignment_timeout_seconds});
  }
  std::atomic<std::int64_t> last_sweep{0};

  json round_for_solver(Database& db, std::int64_t round_id) {
    const auto rows =
        db.query("SELECT id, cue, candidates, associations FROM rounds WHERE id = ?", {round_id});
    const auto& r = rows.at(0);
    return {{"id", db_int(r[0])},
            {"cue", db_text(r[1])},
            {"candidates", parse_list(db_text(r[2]))},
            {"k", as_strings(db_text(r[3])).size()}};
  }
};

Game::Game(std::unique_ptr<Database> db, std::map<std::string, std::filesystem::path> pool,
           std::unique_ptr<Rival> rival, GameConfig config)
    : Game(one_connection(std::move(db)), std::move(pool), std::move(rival), std::move(config)) {}

std::vector<std::unique_ptr<Database>> Game::one_connection(std::unique_ptr<Database> db) {
  std::vector<std::unique_ptr<Database>> v;
  v.push_back(std::move(db));
  return v;
}

Game::Game(std::vector<std::unique_ptr<Database>> connections,
           std::map<std::string, std::filesystem::path> pool, std::unique_ptr<Rival> rival,
           GameConfig config)
    : impl_(std::make_unique<Impl>()) {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
  if (connections.empty()) throw UsageError("the game needs a database connection");
  impl_->db_kind = connections.front()->kind();
  for (auto& c : connections)
    impl_->pool_.add(std::move(c));
  impl_->pool = std::move(pool);
  for (const auto& [name, path] : impl_->pool)
    impl_->names.push_back(name);
  impl_->rival = std::move(rival);
  impl_->config = std::move(config);
  std::uint64_t seed = impl_->config.seed;
  if (seed == 0) randombytes_buf(&seed, sizeof seed);
  impl_->rng = Rng(derive_seed(seed, "game/candidates"));
  {
    const auto [ops, mem] = impl_->password_limits();
    char hash[crypto_pwhash_STRBYTES];
    const std::string filler = random_hex(kCsrfBytes);
    if (crypto_pwhash_str(hash, filler.data(), filler.size(), ops, mem) != 0) {
      throw std::runtime_error("out of memory while preparing the password hasher");
    }
    impl_->dummy_hash = hash;
  }
  const auto max_n = *std::max_element(impl_->config.rules.candidate_counts.begin(),
                                       impl_->config.rules.candidate_counts.end());
  if (impl_->names.size() < static_cast<std::size_t>(max_n)) {
    throw UsageError("the image pool holds " + std::to_string(impl_->names.size()) +
                     " images; rounds need up to " + std::to_string(max_n));
  }
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  migrate(db);
  for (const auto& admin : impl_->config.admins)
    set_admin_role(db, admin, true);
}

Game::~Game() = default;

const std::map<std::string, std::filesystem::path>& Game::pool() const {
  return impl_->pool;
}
const GameConfig& Game::config() const {
  return impl_->config;
}

AuthResult Game::register_user(const std::string& name, const std::string& password) {
  check_name(name);
  if (password.size() < kMinPassword || password.size() > kMaxPassword) {
    throw GameError(400, "bad_password", "the password must be 8 to 256 bytes");
  }
  const auto [ops, mem] = impl_->password_limits();
  char hash[crypto_pwhash_STRBYTES];
  {
    // Argon2id, outside the database lock: hashing is slow on purpose.
    SlotGuard slot(impl_->hash_slots);
    if (crypto_pwhash_str(hash, password.data(), password.size(), ops, mem) != 0) {
      throw GameError(503, "busy", "out of memory while hashing; try again");
    }
  }
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  Transaction tx(db);
  const bool solver = impl_->config.qualification.empty();
  std::int64_t id = 0;
  try {
    const auto rows = db.query(
        "INSERT INTO users (name, pass_hash, is_admin, solver_qualified, created_at) VALUES (?, "
        "?, ?, ?, ?) RETURNING id",
        {name, std::string(hash), std::int64_t{0}, std::int64_t{solver}, now_seconds()});
    id = db_int(rows.at(0)[0]);
  } catch (const DbConstraintError&) {
    throw GameError(409, "name_taken", "this name is taken");
  }
  AuthResult a = impl_->new_session(db, id);
  a.user = impl_->user_json(db, id);
  tx.commit();
  return a;
}

AuthResult Game::login(const std::string& name, const std::string& password) {
  // (+24: an account renamed NAME~ID when names became unique regardless of case)
  if (name.size() > kMaxName + 24 || password.size() > kMaxPassword) {
    throw GameError(401, "bad_login", "wrong name or password");
  }
  std::string hash;
  std::int64_t id = 0;
  {
    auto lease = impl_->pool_.acquire();
    Database& db = *lease;
    const auto rows =
        db.query("SELECT id, pass_hash FROM users WHERE LOWER(name) = LOWER(?)", {name});
    if (!rows.empty()) {
      id = db_int(rows[0][0]);
      hash = db_text(rows[0][1]);
    }
  }
  // An unknown name costs the same hash verification as a wrong password, so response times
  // do not tell which names exist.
  const bool known = !hash.empty();
  const std::string& check = known ? hash : impl_->dummy_hash;
  bool verified = false;
  {
    SlotGuard slot(impl_->hash_slots);
    verified = crypto_pwhash_str_verify(check.c_str(), password.data(), password.size()) == 0;
  }
  if (!verified || !known) throw GameError(401, "bad_login", "wrong name or password");
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  Transaction tx(db);
  db.query("DELETE FROM sessions WHERE expires_at < ?", {now_seconds()});
  AuthResult a = impl_->new_session(db, id);
  a.user = impl_->user_json(db, id);
  tx.commit();
  return a;
}

void Game::logout(const std::string& token) {
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  db.query("DELETE FROM sessions WHERE token_hash = ?", {sha256_hex(token)});
}

Session Game::authenticate(const std::string& token) {
  if (token.size() != 2 * kTokenBytes) throw GameError(401, "no_session", "please log in");
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  const auto rows = db.query(
      "SELECT s.user_id, u.name, s.csrf, u.is_admin, s.expires_at FROM sessions s JOIN users u "
      "ON u.id = s.user_id WHERE s.token_hash = ?",
      {sha256_hex(token)});
  if (rows.empty() || db_int(rows[0][4]) < now_seconds()) {
    throw GameError(401, "no_session", "please log in");
  }
  return {db_int(rows[0][0]), db_text(rows[0][1]), db_text(rows[0][2]), db_int(rows[0][3]) != 0};
}

json Game::status() const {
  // The model's name, not where it lives on the server: a checkpoint folder's last component.
  std::string rival = impl_->rival->describe();
  if (rival.find('/') != std::string::npos) {
    std::filesystem::path p(rival);
    if (!p.has_filename()) p = p.parent_path();
    rival = p.filename().string();
  }
  return {{"rival", rival},
          {"rival_random_weights", impl_->rival->random_weights()},
          {"images", impl_->pool.size()},
          {"database", impl_->db_kind},
          {"qualification_instances", impl_->config.qualification.size()},
          {"rules",
           {{"candidate_counts", impl_->config.rules.candidate_counts},
            {"min_associations", impl_->config.rules.min_associations},
            {"max_associations", impl_->config.rules.max_associations},
            {"solvers_per_association", impl_->config.rules.solvers_per_association},
            {"bonus_min_solvable", impl_->config.rules.bonus_min_solvable},
            {"solves_per_creation", impl_->config.rules.solves_per_creation}}}};
}

json Game::me(const Session& s) {
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  json j = impl_->user_json(db, s.user_id);
  j["creator"] = impl_->creator_status(db, s.user_id);
  json rounds = json::array();
  double fool = 0, solvable = 0, bonus = 0;
  int complete = 0;
  for (const auto& r :
       db.query("SELECT id, state, cue, candidates, associations, model_picks, model_score, "
                "fool_score, solves, solvable_score, bonus, hidden, removed FROM rounds WHERE "
                "creator_id = ? AND state <> 'draft' ORDER BY id DESC",
                {s.user_id})) {
    json round = {{"id", db_int(r[0])},
                  {"state", db_text(r[1])},
                  {"cue", db_text(r[2])},
                  {"candidates", parse_list(db_text(r[3]))},
                  {"associations", parse_list(db_text(r[4]))},
                  {"model_picks", parse_list(db_text(r[5]))},
                  {"model_score", db_real(r[6])},
                  {"fool_the_ai", db_real(r[7])},
                  {"solves", db_int(r[8])},
                  {"hidden", db_int(r[11]) != 0},
                  {"removed", db_int(r[12]) != 0}};
    if (db_text(r[1]) == "complete") {
      round["solvable_by_humans"] = db_real(r[9]);
      round["bonus"] = db_real(r[10]);
      if (db_int(r[12]) == 0) {
        ++complete;
        fool += db_real(r[7]);
        solvable += db_real(r[9]);
        bonus += db_real(r[10]);
      }
    }
    rounds.push_back(round);
  }
  json solves = json::array();
  double solver_total = 0;
  for (const auto& r : db.query(
           "SELECT a.round_id, r.cue, a.score, a.picks, r.associations FROM assignments a JOIN "
           "rounds r ON r.id = a.round_id WHERE a.solver_id = ? AND a.solved_at IS NOT NULL "
           "ORDER BY a.solved_at DESC",
           {s.user_id})) {
    solves.push_back({{"round", db_int(r[0])},
                      {"cue", db_text(r[1])},
                      {"score", db_real(r[2])},
                      {"picks", parse_list(db_text(r[3]))},
                      {"associations", parse_list(db_text(r[4]))}});
    solver_total += db_real(r[2]);
  }
  j["rounds"] = rounds;
  j["solves"] = solves;
  j["totals"] = {
      {"complete_rounds", complete},
      {"bonus", bonus},
      {"mean_fool_the_ai", complete ? json(fool / complete) : json(nullptr)},
      {"mean_solvable_by_humans", complete ? json(solvable / complete) : json(nullptr)},
      {"solves", solves.size()},
      {"mean_solver_score",
       solves.empty() ? json(nullptr) : json(solver_total / static_cast<double>(solves.size()))}};
  const auto q = db.query(
      "SELECT score, passed, attempts FROM qualification_results WHERE user_id = ?", {s.user_id});
  j["qualification"] = {{"instances", impl_->config.qualification.size()},
                        {"attempts_allowed", impl_->config.qualification_attempts}};
  if (!q.empty()) {
    j["qualification"]["score"] = db_real(q[0][0]);
    j["qualification"]["passed"] = db_int(q[0][1]) != 0;
    j["qualification"]["attempts"] = db_int(q[0][2]);
  }
  return j;
}

json Game::qualification_test(const Session& s) {
  json items = json::array();
  for (const auto& inst : impl_->config.qualification) {
    items.push_back({{"id", inst.id},
                     {"cue", inst.cue},
                     {"candidates", inst.candidates},
                     {"k", inst.associations.size()}});
  }
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  return {{"instances", items},
          {"solver_qualified", impl_->solver_qualified(db, s.user_id)},
          {"pass_mark", impl_->config.rules.solver_min_score}};
}

json Game::submit_qualification(const Session& s, const json& answers) {
  const auto& insts = impl_->config.qualification;
  if (insts.empty()) throw GameError(409, "no_test", "this game has no qualification test");
  if (!answers.is_object()) throw GameError(400, "bad_request", "answers must be an object");
  std::vector<double> scores;
  for (const auto& inst : insts) {
    const auto it = answers.find(inst.id);
    if (it == answers.end() || !it->is_array()) {
      throw GameError(400, "bad_request", "no answer for instance '" + inst.id + "'");
    }
    std::vector<std::string> picks;
    for (const auto& p : *it) {
      if (!p.is_string()) throw GameError(400, "bad_request", "picks are image names");
      picks.push_back(p.get<std::string>());
    }
    check_picks(picks, inst.candidates, inst.associations.size(), "instance " + inst.id);
    scores.push_back(jaccard_score(picks, inst.associations));
  }
  double mean = 0, sd = 0;
  mean_and_std(scores, mean, sd);
  const bool passed = mean >= impl_->config.rules.solver_min_score;
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  Transaction tx(db);
  const auto prev =
      db.query("SELECT attempts, passed FROM qualification_results WHERE user_id = ?", {s.user_id});
  const std::int64_t attempts = prev.empty() ? 0 : db_int(prev[0][0]);
  if (!prev.empty() && db_int(prev[0][1]) != 0) {
    throw GameError(409, "already_qualified", "you have already qualified");
  }
  if (attempts >= impl_->config.qualification_attempts) {
    throw GameError(403, "no_attempts_left", "no qualification attempts left");
  }
  if (prev.empty()) {
    db.query(
        "INSERT INTO qualification_results (user_id, score, passed, attempts, taken_at) "
        "VALUES (?, ?, ?, 1, ?)",
        {s.user_id, mean, std::int64_t{passed}, now_seconds()});
  } else {
    db.query(
        "UPDATE qualification_results SET score = ?, passed = ?, attempts = attempts + 1, "
        "taken_at = ? WHERE user_id = ?",
        {mean, std::int64_t{passed}, now_seconds(), s.user_id});
  }
  if (passed) db.query("UPDATE users SET solver_qualified = 1 WHERE id = ?", {s.user_id});
  tx.commit();
  return {{"score", mean},
          {"passed", passed},
          {"scores", scores},
          {"attempts_left", impl_->config.qualification_attempts - attempts - 1}};
}

json Game::new_round(const Session& s) {
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  if (!impl_->solver_qualified(db, s.user_id)) {
    throw GameError(403, "not_qualified", "pass the qualification test first");
  }
  const json creator = impl_->creator_status(db, s.user_id);
  const std::string cstate = creator["state"];
  if (cstate == "failed") {
    throw GameError(403, "creator_not_qualified",
                    "your qualification associations did not reach the spymaster bar "
                    "(fool-the-AI above " +
                        std::to_string(static_cast<int>(impl_->config.rules.creator_min_fool)) +
                        " and solvable-by-humans above " +
                        std::to_string(static_cast<int>(impl_->config.rules.creator_min_solvable)) +
                        "); you can keep solving");
  }
  if (cstate == "pending") {
    throw GameError(409, "qualification_pending",
                    "your qualification associations are still being solved; solve others' "
                    "meanwhile");
  }
  const auto draft = db.query(
      "SELECT id, candidates FROM rounds WHERE creator_id = ? AND state = 'draft'", {s.user_id});
  if (!draft.empty()) {
    return {{"id", db_int(draft[0][0])},
            {"candidates", parse_list(db_text(draft[0][1]))},
            {"qualification", cstate != "qualified"}};
  }
  // Players alternate roles: solve before creating again, when something is open to them.
  const auto created = db.query(
      "SELECT COUNT(*) FROM rounds WHERE creator_id = ? AND state <> 'draft'", {s.user_id});
  const auto solved =
      db.query("SELECT COUNT(*) FROM assignments WHERE solver_id = ? AND solved_at IS NOT NULL",
               {s.user_id});
  const std::int64_t owed =
      db_int(created[0][0]) * impl_->config.rules.solves_per_creation - db_int(solved[0][0]);
  if (owed > 0) {
    impl_->free_stale_assignments(db);
    if (!impl_->solvable_rounds(db, s.user_id, 1).empty()) {
      throw GameError(409, "solve_first",
                      "solve " + std::to_string(owed) + " association(s) of other players first");
    }
  }
  const auto& counts = impl_->config.rules.candidate_counts;
  std::vector<std::string> names = impl_->names;
  int n = 0;
  {
    std::lock_guard<std::mutex> rng_lock(impl_->rng_mutex);
    n = counts[impl_->rng.below(static_cast<std::uint32_t>(counts.size()))];
    partial_shuffle(names, static_cast<std::size_t>(n), impl_->rng);
  }
  names.resize(static_cast<std::size_t>(n));
  const bool qualification = cstate != "qualified";
  const auto rows = db.query(
      "INSERT INTO rounds (creator_id, candidates, created_at, state, qualification) VALUES (?, "
      "?, ?, 'draft', ?) RETURNING id",
      {s.user_id, json(names).dump(), now_seconds(), std::int64_t{qualification}});
  return {{"id", db_int(rows.at(0)[0])}, {"candidates", names}, {"qualification", qualification}};
}

json Game::submit_round(const Session& s, std::int64_t round_id, const std::string& cue,
                        const std::vector<std::string>& associations) {
  std::vector<std::string> candidates;
  {
    auto lease = impl_->pool_.acquire();
    Database& db = *lease;
    const auto rows =
        db.query("SELECT creator_id, state, candidates FROM rounds WHERE id = ?", {round_id});
    if (rows.empty() || db_int(rows[0][0]) != s.user_id) {
      throw GameError(404, "no_round", "no such round of yours");
    }
    if (db_text(rows[0][1]) != "draft") {
      throw GameError(409, "already_submitted", "this round was already submitted");
    }
    candidates = as_strings(db_text(rows[0][2]));
  }
  const auto& rules = impl_->config.rules;
  const std::string clean = rules.check_cue(cue, candidates, impl_->config.blocklist);
  const auto k = associations.size();
  if (static_cast<int>(k) < rules.min_associations ||
      static_cast<int>(k) > rules.max_associations) {
    throw GameError(400, "bad_pick",
                    "select " + std::to_string(rules.min_associations) + " to " +
                        std::to_string(rules.max_associations) + " images");
  }
  check_picks(associations, candidates, k, "associations");
  // The rival answers outside the lock: it runs the text tower.
  const auto picks = impl_->rival->pick(clean, candidates, static_cast<int>(k));
  const double model = jaccard_score(picks, associations);
  const double fool = 100 - model;
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  Transaction tx(db);
  const auto rows =
      db.query("SELECT state FROM rounds WHERE id = ? AND creator_id = ?", {round_id, s.user_id});
  if (rows.empty() || db_text(rows[0][0]) != "draft") {
    throw GameError(409, "already_submitted", "this round was already submitted");
  }
  db.query(
      "UPDATE rounds SET state = 'open', cue = ?, associations = ?, model_picks = ?, model_score "
      "= ?, fool_score = ?, submitted_at = ? WHERE id = ?",
      {clean, json(associations).dump(), json(picks).dump(), model, fool, now_seconds(), round_id});
  tx.commit();
  return {{"id", round_id},       {"cue", clean},         {"associations", associations},
          {"model_picks", picks}, {"model_score", model}, {"fool_the_ai", fool}};
}

json Game::next_solve(const Session& s) {
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  if (!impl_->solver_qualified(db, s.user_id)) {
    throw GameError(403, "not_qualified", "pass the qualification test first");
  }
  impl_->free_stale_assignments(db);
  for (int attempt = 0; attempt < kAssignRetries; ++attempt) {
    Transaction tx(db);
    // An assignment already held comes back (reloading the page does not skip it).
    const auto held = db.query(
        "SELECT a.round_id FROM assignments a JOIN rounds r ON r.id = a.round_id WHERE "
        "a.solver_id = ? AND a.solved_at IS NULL AND r.hidden = 0 AND r.removed = 0 ORDER BY "
        "a.round_id LIMIT 1",
        {s.user_id});
    if (!held.empty()) {
      json j = impl_->round_for_solver(db, db_int(held[0][0]));
      tx.commit();
      return j;
    }
    // The oldest open round (associations complete soonest); after losing a race for its slot,
    // one of the next oldest, spread over players so that the retries do not collide again.
    const auto open = impl_->solvable_rounds(db, s.user_id, kAssignSpread);
    if (open.empty()) {
      tx.commit();
      return {{"id", nullptr}, {"message", "nothing to solve right now"}};
    }
    const auto pick =
        attempt == 0 ? 0 : static_cast<std::size_t>(s.user_id + attempt) % open.size();
    const std::int64_t round_id = db_int(open[pick][0]);
    std::set<std::int64_t> taken;
    for (const auto& r : db.query("SELECT slot FROM assignments WHERE round_id = ?", {round_id}))
      taken.insert(db_int(r[0]));
    std::int64_t slot = 1;
    while (taken.count(slot))
      ++slot;
    try {
      db.query(
          "INSERT INTO assignments (round_id, slot, solver_id, assigned_at) VALUES (?, ?, ?, ?)",
          {round_id, slot, s.user_id, now_seconds()});
    } catch (const DbConstraintError&) {
      continue;  // another connection took the slot: roll back and look again
    }
    json j = impl_->round_for_solver(db, round_id);
    tx.commit();
    return j;
  }
  throw GameError(503, "busy", "too much contention; try again");
}

json Game::submit_solve(const Session& s, std::int64_t round_id,
                        const std::vector<std::string>& picks) {
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  Transaction tx(db);
  // Lock the round's row first (a no-op write; PostgreSQL row lock, SQLite already holds the
  // write lock): two last solvers in two server processes must not both miss completing it.
  db.query("UPDATE rounds SET solves = solves WHERE id = ?", {round_id});
  const auto rows = db.query(
      "SELECT r.creator_id, r.state, r.candidates, r.associations, r.fool_score, r.hidden, "
      "r.removed FROM rounds r WHERE r.id = ?",
      {round_id});
  if (rows.empty() || db_text(rows[0][1]) == "draft") {
    throw GameError(404, "no_round", "no such association");
  }
  const auto& r = rows[0];
  if (db_int(r[0]) == s.user_id) {
    throw GameError(403, "own_round", "you cannot solve your own association");
  }
  const auto a = db.query("SELECT solved_at FROM assignments WHERE round_id = ? AND solver_id = ?",
                          {round_id, s.user_id});
  if (a.empty()) throw GameError(403, "not_assigned", "this association is not assigned to you");
  if (!db_null(a[0][0])) throw GameError(409, "already_solved", "you already solved it");
  if (db_int(r[5]) != 0 || db_int(r[6]) != 0) {
    throw GameError(410, "hidden", "this association was reported and is under review");
  }
  const auto candidates = as_strings(db_text(r[2]));
  const auto gold = as_strings(db_text(r[3]));
  check_picks(picks, candidates, gold.size(), "picks");
  const double score = jaccard_score(picks, gold);
  db.query(
      "UPDATE assignments SET picks = ?, score = ?, solved_at = ? WHERE round_id = ? AND "
      "solver_id = ?",
      {json(picks).dump(), score, now_seconds(), round_id, s.user_id});
  db.query("UPDATE rounds SET solves = solves + 1 WHERE id = ?", {round_id});
  const auto solved = db.query(
      "SELECT score FROM assignments WHERE round_id = ? AND solved_at IS NOT NULL ORDER BY slot",
      {round_id});
  json j = {{"round", round_id}, {"score", score}, {"picks", picks}, {"associations", gold}};
  if (static_cast<int>(solved.size()) >= impl_->config.rules.solvers_per_association) {
    std::vector<double> scores;
    for (const auto& row : solved)
      scores.push_back(db_real(row[0]));
    double mean = 0, sd = 0;
    mean_and_std(scores, mean, sd);
    const double bonus = impl_->config.rules.bonus(db_real(r[4]), mean);
    db.query(
        "UPDATE rounds SET state = 'complete', solvable_score = ?, solvable_std = ?, bonus "
        "= ? WHERE id = ?",
        {mean, sd, bonus, round_id});
    j["association_complete"] = true;
  }
  tx.commit();
  return j;
}

json Game::report(const Session& s, std::int64_t round_id, const std::string& reason) {
  if (reason.size() > kMaxReason) throw GameError(400, "bad_reason", "the reason is too long");
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  Transaction tx(db);
  const auto rows = db.query("SELECT state, creator_id FROM rounds WHERE id = ?", {round_id});
  if (rows.empty() || db_text(rows[0][0]) == "draft") {
    throw GameError(404, "no_round", "no such association");
  }
  // Only someone who has seen it (its creator, a player it was given to, an admin) may report
  // an association: ids cannot be enumerated to hide everything.
  const bool seen = s.admin || db_int(rows[0][1]) == s.user_id ||
                    !db.query("SELECT 1 FROM assignments WHERE round_id = ? AND solver_id = ?",
                              {round_id, s.user_id})
                         .empty();
  if (!seen) throw GameError(403, "not_seen", "you can only report associations you were shown");
  db.query("UPDATE rounds SET hidden = 1 WHERE id = ?", {round_id});
  const auto id = db.query(
      "INSERT INTO reports (round_id, reporter_id, reason, created_at, state) VALUES (?, ?, ?, ?, "
      "'pending') RETURNING id",
      {round_id, s.user_id, reason, now_seconds()});
  tx.commit();
  return {{"report", db_int(id.at(0)[0])}, {"hidden", true}};
}

json Game::admin_reports(const Session& s) {
  if (!s.admin) throw GameError(403, "not_admin", "admins only");
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  json out = json::array();
  for (const auto& r :
       db.query("SELECT p.id, p.round_id, p.reason, p.created_at, u.name, r.cue, r.candidates, "
                "r.associations, c.name FROM reports p JOIN users u ON u.id = p.reporter_id JOIN "
                "rounds r ON r.id = p.round_id JOIN users c ON c.id = r.creator_id WHERE p.state = "
                "'pending' ORDER BY p.id")) {
    out.push_back({{"id", db_int(r[0])},
                   {"round", db_int(r[1])},
                   {"reason", db_text(r[2])},
                   {"created_at", db_int(r[3])},
                   {"reporter", db_text(r[4])},
                   {"cue", db_text(r[5])},
                   {"candidates", parse_list(db_text(r[6]))},
                   {"associations", parse_list(db_text(r[7]))},
                   {"creator", db_text(r[8])}});
  }
  return {{"reports", out}};
}

json Game::admin_review(const Session& s, std::int64_t report_id, const std::string& action) {
  if (!s.admin) throw GameError(403, "not_admin", "admins only");
  if (action != "restore" && action != "remove") {
    throw GameError(400, "bad_action", "action is 'restore' or 'remove'");
  }
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  Transaction tx(db);
  const auto rows = db.query("SELECT round_id, state FROM reports WHERE id = ?", {report_id});
  if (rows.empty()) throw GameError(404, "no_report", "no such report");
  if (db_text(rows[0][1]) != "pending") throw GameError(409, "reviewed", "already reviewed");
  const std::int64_t round_id = db_int(rows[0][0]);
  const std::string state = action == "restore" ? "restored" : "removed";
  db.query(
      "UPDATE reports SET state = ?, reviewed_by = ?, reviewed_at = ? WHERE round_id = ? AND "
      "state = 'pending'",
      {state, s.user_id, now_seconds(), round_id});
  if (action == "restore") {
    db.query("UPDATE rounds SET hidden = 0 WHERE id = ?", {round_id});
  } else {
    db.query("UPDATE rounds SET removed = 1 WHERE id = ?", {round_id});
  }
  tx.commit();
  return {{"round", round_id}, {"state", state}};
}

json Game::leaderboard() {
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  json spymasters = json::array(), solvers = json::array();
  for (const auto& r : db.query(
           "SELECT u.name, COUNT(*), AVG(r.fool_score), AVG(r.solvable_score), SUM(r.bonus) FROM "
           "rounds r JOIN users u ON u.id = r.creator_id WHERE r.state = 'complete' AND "
           "r.removed = 0 GROUP BY u.name ORDER BY SUM(r.bonus) DESC, AVG(r.fool_score) DESC, "
           "u.name LIMIT 100")) {
    spymasters.push_back({{"name", db_text(r[0])},
                          {"associations", db_int(r[1])},
                          {"mean_fool_the_ai", db_real(r[2])},
                          {"mean_solvable_by_humans", db_real(r[3])},
                          {"bonus", db_real(r[4])}});
  }
  for (const auto& r : db.query(
           "SELECT u.name, COUNT(*), AVG(a.score) FROM assignments a JOIN users u ON u.id = "
           "a.solver_id WHERE a.solved_at IS NOT NULL GROUP BY u.name ORDER BY AVG(a.score) DESC, "
           "COUNT(*) DESC, u.name LIMIT 100")) {
    solvers.push_back(
        {{"name", db_text(r[0])}, {"solves", db_int(r[1])}, {"mean_score", db_real(r[2])}});
  }
  return {{"spymasters", spymasters}, {"solvers", solvers}};
}

std::string export_game_csv(Database& db, double min_solvable) {
  std::ostringstream out;
  out << "candidates,cue,associations,score_fool_the_ai,num_associations,num_candidates,"
         "solvers_jaccard_mean,solvers_jaccard_std,ID\n";
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return std::string(buf);
  };
  // The published scales: score_fool_the_ai on 0-100, solvers' Jaccard mean and std on 0-1 (the
  // rounds store them as percentages).
  constexpr double kPercent = 100.0;
  auto num4 = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", v);
    return std::string(buf);
  };
  for (const auto& r : db.query(
           "SELECT id, candidates, cue, associations, fool_score, solvable_score, solvable_std "
           "FROM rounds WHERE state = 'complete' AND hidden = 0 AND removed = 0 AND "
           "solvable_score >= ? ORDER BY id",
           {min_solvable})) {
    const auto candidates = as_strings(db_text(r[1]));
    const auto associations = as_strings(db_text(r[3]));
    out << csv_escape(json(candidates).dump()) << ',' << csv_escape(db_text(r[2])) << ','
        << csv_escape(json(associations).dump()) << ',' << num(db_real(r[4])) << ','
        << associations.size() << ',' << candidates.size() << ',' << num4(db_real(r[5]) / kPercent)
        << ',' << num4(db_real(r[6]) / kPercent) << ',' << db_int(r[0]) << '\n';
  }
  return out.str();
}

std::string Game::export_csv(double min_solvable) {
  auto lease = impl_->pool_.acquire();
  Database& db = *lease;
  return export_game_csv(db, min_solvable);
}

std::string set_game_admin(Database& db, const std::string& name, bool admin) {
  return set_admin_role(db, name, admin);
}

std::vector<std::string> list_game_admins(Database& db) {
  std::vector<std::string> out;
  for (const auto& r : db.query("SELECT name FROM users WHERE is_admin = 1 ORDER BY name"))
    out.push_back(db_text(r[0]));
  return out;
}

}  // namespace winokit
