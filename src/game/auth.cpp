// Accounts, sessions, password hashing and the admin role (see winokit/game/auth.hpp).
#include "winokit/game/auth.hpp"

#include <sodium.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "winokit/core/error.hpp"
#include "winokit/core/hash.hpp"

namespace winokit {

using nlohmann::json;

namespace {

constexpr std::size_t kTokenBytes = 32, kCsrfBytes = 16;
constexpr std::size_t kMinName = 3, kMaxName = 32, kMinPassword = 8, kMaxPassword = 256;
constexpr std::ptrdiff_t kMaxHashSlots = 8;
constexpr std::ptrdiff_t kHashQueuePerSlot = 2;  // sign-ins waiting for a slot, per slot

// The password-hashing slots with a bounded queue in front: a sign-in that finds the slots
// busy and the queue full is answered at once (Busy: 503 with Retry-After) instead of holding
// an HTTP worker while it waits (160 logins held all 16 workers; /api/status waited 11.8 s).
class HashGate {
 public:
  HashGate(std::ptrdiff_t slots, std::ptrdiff_t queue) : slots_(slots), queue_(queue) {}
  void enter() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (running_ >= slots_) {
      if (waiting_ >= queue_) {
        throw GameError(GameErrorKind::Busy, "busy",
                        "too many sign-ins at once; try again in a moment");
      }
      ++waiting_;
      cv_.wait(lock, [&] { return running_ < slots_; });
      --waiting_;
    }
    ++running_;
  }
  void leave() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --running_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::ptrdiff_t slots_, queue_, running_ = 0, waiting_ = 0;
};

// Holds one of the password-hashing slots for its lifetime.
class SlotGuard {
 public:
  explicit SlotGuard(HashGate& g) : g_(g) { g_.enter(); }
  ~SlotGuard() { g_.leave(); }
  SlotGuard(const SlotGuard&) = delete;
  SlotGuard& operator=(const SlotGuard&) = delete;

 private:
  HashGate& g_;
};

// Failed sign-ins per account: after kFreeFailures, each next attempt must wait 2^(n - free)
// seconds (at most kMaxDelay) after the last failure, whatever address it comes from. A delay,
// never a lock: the owner can always sign in once it has passed, and a success clears it.
class AccountThrottle {
 public:
  static constexpr int kFreeFailures = 5;
  static constexpr std::int64_t kMaxDelaySeconds = 900;
  static constexpr std::size_t kMaxAccounts = 100000;
  // Seconds to wait before this account may try again (0: now).
  std::int64_t wait_seconds(const std::string& account) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = failures_.find(account);
    if (it == failures_.end() || it->second.count < kFreeFailures) return 0;
    const auto left = it->second.until - Clock::now();
    return left <= Clock::duration::zero()
               ? 0
               : std::chrono::duration_cast<std::chrono::seconds>(left).count() + 1;
  }
  void failed(const std::string& account) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failures_.size() >= kMaxAccounts) failures_.clear();  // memory bound; rare
    Entry& e = failures_[account];
    ++e.count;
    const int over = std::min(e.count - kFreeFailures, 20);
    const std::int64_t delay =
        over < 0 ? 0 : std::min<std::int64_t>(std::int64_t{1} << over, kMaxDelaySeconds);
    e.until = Clock::now() + std::chrono::seconds(delay);
  }
  void succeeded(const std::string& account) {
    std::lock_guard<std::mutex> lock(mutex_);
    failures_.erase(account);
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    int count = 0;
    Clock::time_point until;
  };
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> failures_;
};

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

void check_name(const std::string& name) {
  if (name.size() < kMinName || name.size() > kMaxName) {
    throw GameError(GameErrorKind::Invalid, "bad_name", "the name must be 3 to 32 characters");
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) {
      throw GameError(GameErrorKind::Invalid, "bad_name",
                      "the name may use letters, digits, '_', '-', '.'");
    }
  }
  if (std::none_of(name.begin(), name.end(),
                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)); })) {
    throw GameError(GameErrorKind::Invalid, "bad_name",
                    "the name needs at least one letter or digit");
  }
}

std::pair<unsigned long long, std::size_t> password_limits(PasswordCost cost) {
  switch (cost) {
    case PasswordCost::Moderate:
      return {crypto_pwhash_OPSLIMIT_MODERATE, crypto_pwhash_MEMLIMIT_MODERATE};
    case PasswordCost::Minimum:
      return {crypto_pwhash_OPSLIMIT_MIN, crypto_pwhash_MEMLIMIT_MIN};
    case PasswordCost::Interactive:
      break;
  }
  return {crypto_pwhash_OPSLIMIT_INTERACTIVE, crypto_pwhash_MEMLIMIT_INTERACTIVE};
}

}  // namespace

struct Auth::Impl {
  ConnectionPool& connections;
  const GameConfig& config;
  std::string dummy_hash;  // verified for unknown names (same cost as a real one)
  // Argon2id takes 64 MiB per interactive hash: at most this many at once, so a burst of
  // sign-ins cannot take the machine's memory.
  HashGate hash_slots{
      std::clamp<std::ptrdiff_t>(std::thread::hardware_concurrency(), 1, kMaxHashSlots),
      kHashQueuePerSlot* std::clamp<std::ptrdiff_t>(std::thread::hardware_concurrency(), 1,
                                                    kMaxHashSlots)};
  AccountThrottle throttle;

  Impl(ConnectionPool& c, const GameConfig& g) : connections(c), config(g) {}

  AuthResult new_session(Store& store, std::int64_t user_id) {
    AuthResult a;
    a.token = random_hex(kTokenBytes);
    a.csrf = random_hex(kCsrfBytes);
    const std::int64_t now = store_now();
    store.run(Stmt::insert_session,
              {sha256_hex(a.token), user_id, a.csrf, now, now + config.session_seconds});
    return a;
  }
};

Auth::Auth(ConnectionPool& connections, const GameConfig& config)
    : impl_(std::make_unique<Impl>(connections, config)) {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
  const auto [ops, mem] = password_limits(config.password_cost);
  char hash[crypto_pwhash_STRBYTES];
  const std::string filler = random_hex(kCsrfBytes);
  if (crypto_pwhash_str(hash, filler.data(), filler.size(), ops, mem) != 0) {
    throw std::runtime_error("out of memory while preparing the password hasher");
  }
  impl_->dummy_hash = hash;
}

Auth::~Auth() = default;

AuthResult Auth::register_user(const std::string& name, const std::string& password) {
  check_name(name);
  if (password.size() < kMinPassword || password.size() > kMaxPassword) {
    throw GameError(GameErrorKind::Invalid, "bad_password", "the password must be 8 to 256 bytes");
  }
  const auto [ops, mem] = password_limits(impl_->config.password_cost);
  char hash[crypto_pwhash_STRBYTES];
  {
    // Argon2id, outside the database lock: hashing is slow on purpose.
    SlotGuard slot(impl_->hash_slots);
    if (crypto_pwhash_str(hash, password.data(), password.size(), ops, mem) != 0) {
      throw GameError(GameErrorKind::Busy, "busy", "out of memory while hashing; try again");
    }
  }
  auto lease = impl_->connections.acquire();
  Database& db = *lease;
  Store store(db);
  Transaction tx(db);
  const bool solver = impl_->config.qualification.empty();
  std::int64_t id = 0;
  try {
    const auto rows = store.run(Stmt::insert_user, {name, std::string(hash), std::int64_t{0},
                                                    std::int64_t{solver}, store_now()});
    id = db_int(rows.at(0)[0]);
  } catch (const DbConstraintError&) {
    throw GameError(GameErrorKind::Conflict, "name_taken", "this name is taken");
  }
  AuthResult a = impl_->new_session(store, id);
  a.user = user_json(store, id);
  tx.commit();
  return a;
}

AuthResult Auth::login(const std::string& name, const std::string& password) {
  // (+24: an account renamed NAME~ID when names became unique regardless of case)
  if (name.size() > kMaxName + 24 || password.size() > kMaxPassword) {
    throw GameError(GameErrorKind::Unauthorized, "bad_login", "wrong name or password");
  }
  // Names are unique regardless of case: one throttle per account, however it is spelt.
  std::string account = name;
  for (auto& c : account)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (const std::int64_t wait = impl_->throttle.wait_seconds(account); wait > 0) {
    throw GameError(
        GameErrorKind::RateLimited, "account_throttled",
        "too many failed sign-ins for this account; try again in " + std::to_string(wait) + " s");
  }
  std::string hash;
  std::int64_t id = 0;
  {
    auto lease = impl_->connections.acquire();
    Store store(*lease);
    const auto rows = store.run(Stmt::select_login, {name});
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
  if (!verified || !known) {
    impl_->throttle.failed(account);
    // Registering tells whether a name is taken anyway, so signing in may say it too: a new
    // player who pressed Enter on the sign-in form is offered to create the account.
    if (!known) {
      throw GameError(GameErrorKind::Unauthorized, "no_account", "no such account: create one?");
    }
    throw GameError(GameErrorKind::Unauthorized, "bad_login", "wrong name or password");
  }
  impl_->throttle.succeeded(account);
  auto lease = impl_->connections.acquire();
  Database& db = *lease;
  Store store(db);
  Transaction tx(db);
  store.run(Stmt::delete_expired_sessions, {store_now()});
  AuthResult a = impl_->new_session(store, id);
  a.user = user_json(store, id);
  tx.commit();
  return a;
}

void Auth::logout(const std::string& token) {
  auto lease = impl_->connections.acquire();
  Store store(*lease);
  store.run(Stmt::delete_session, {sha256_hex(token)});
}

Session Auth::authenticate(const std::string& token) {
  if (token.size() != 2 * kTokenBytes) {
    throw GameError(GameErrorKind::Unauthorized, "no_session", "please log in");
  }
  auto lease = impl_->connections.acquire();
  Store store(*lease);
  const auto rows = store.run(Stmt::select_session, {sha256_hex(token)});
  if (rows.empty() || db_int(rows[0][4]) < store_now()) {
    throw GameError(GameErrorKind::Unauthorized, "no_session", "please log in");
  }
  return {db_int(rows[0][0]), db_text(rows[0][1]), db_text(rows[0][2]), db_int(rows[0][3]) != 0};
}

json user_json(Store& store, std::int64_t user_id) {
  const auto rows = store.run(Stmt::select_user, {user_id});
  if (rows.empty()) throw GameError(GameErrorKind::NotFound, "no_user", "no such user");
  return {{"id", db_int(rows[0][0])},
          {"name", db_text(rows[0][1])},
          {"admin", db_int(rows[0][2]) != 0},
          {"solver_qualified", db_int(rows[0][3]) != 0}};
}

bool solver_qualified(Store& store, std::int64_t user_id) {
  const auto rows = store.run(Stmt::select_solver_qualified, {user_id});
  return !rows.empty() && db_int(rows[0][0]) != 0;
}

std::string set_game_admin(Database& db, const std::string& name, bool admin) {
  Store store(db);
  const auto rows = store.run(Stmt::set_admin_by_name, {std::int64_t{admin}, name});
  if (rows.empty()) {
    throw UsageError("no account named '" + name +
                     "': the admin role goes to an existing account (register it first)");
  }
  return db_text(rows[0][0]);
}

std::vector<std::string> list_game_admins(Database& db) {
  Store store(db);
  std::vector<std::string> out;
  for (const auto& r : store.run(Stmt::list_admins))
    out.push_back(db_text(r[0]));
  return out;
}

}  // namespace winokit
