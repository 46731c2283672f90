// SQLite and PostgreSQL behind one interface, and the game's versioned schema.
#include <libpq-fe.h>
#include <sqlite3.h>

#include <chrono>
#include <map>
#include <stdexcept>

#include "winokit/core/error.hpp"
#include "winokit/game/db.hpp"

namespace winokit {

std::int64_t db_int(const DbValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return static_cast<std::int64_t>(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return s->empty() ? 0 : std::stoll(*s);
  return 0;
}
double db_real(const DbValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* s = std::get_if<std::string>(&v)) return s->empty() ? 0 : std::stod(*s);
  return 0;
}
std::string db_text(const DbValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return std::to_string(*d);
  return {};
}
bool db_null(const DbValue& v) {
  return std::holds_alternative<std::nullptr_t>(v);
}

namespace {

// ---- SQLite ----
class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(const std::string& path, SqliteSync sync, bool read_only) : path_(path) {
    const int flags =
        (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
        SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw IoError(path + ": cannot open the SQLite database: " + msg);
    }
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    if (read_only) return;
    exec_plain("PRAGMA journal_mode=WAL");
    exec_plain(sync == SqliteSync::Full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    exec_plain("PRAGMA foreign_keys=ON");
  }
  ~SqliteDatabase() override {
    for (auto& [sql, stmt] : cache_)
      sqlite3_finalize(stmt);
    sqlite3_close(db_);
  }

  std::vector<DbRow> query(const std::string& sql, const std::vector<DbValue>& params) override {
    sqlite3_stmt* stmt = prepare(sql);
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int at = static_cast<int>(i + 1);
      const DbValue& p = params[i];
      if (const auto* v = std::get_if<std::int64_t>(&p)) {
        sqlite3_bind_int64(stmt, at, *v);
      } else if (const auto* d = std::get_if<double>(&p)) {
        sqlite3_bind_double(stmt, at, *d);
      } else if (const auto* s = std::get_if<std::string>(&p)) {
        sqlite3_bind_text(stmt, at, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
      } else {
        sqlite3_bind_null(stmt, at);
      }
    }
    std::vector<DbRow> rows;
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        const std::string msg = sqlite3_errmsg(db_);
        const int ext = sqlite3_extended_errcode(db_);
        sqlite3_reset(stmt);
        if ((ext & 0xff) == SQLITE_CONSTRAINT) throw DbConstraintError(msg);
        throw IoError(path_ + ": SQLite: " + msg);
      }
      const int cols = sqlite3_column_count(stmt);
      DbRow row;
      row.reserve(static_cast<std::size_t>(cols));
      for (int c = 0; c < cols; ++c) {
        switch (sqlite3_column_type(stmt, c)) {
          case SQLITE_INTEGER:
            row.emplace_back(std::int64_t{sqlite3_column_int64(stmt, c)});
            break;
          case SQLITE_FLOAT:
            row.emplace_back(sqlite3_column_double(stmt, c));
            break;
          case SQLITE_NULL:
            row.emplace_back(nullptr);
            break;
          default: {
            const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
            row.emplace_back(std::string(text ? text : "",
                                         static_cast<std::size_t>(sqlite3_column_bytes(stmt, c))));
          }
        }
      }
      rows.push_back(std::move(row));
    }
    sqlite3_reset(stmt);
    return rows;
  }
  void begin() override { exec_plain("BEGIN IMMEDIATE"); }
  void commit() override { exec_plain("COMMIT"); }
  void rollback() override { exec_plain("ROLLBACK"); }
  std::string kind() const override { return "sqlite"; }
  std::string serial_primary_key() const override { return "INTEGER PRIMARY KEY AUTOINCREMENT"; }

 private:
  static constexpr int kBusyTimeoutMs = 10000;
  void exec_plain(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      throw IoError(path_ + ": SQLite: " + msg + " (" + sql + ")");
    }
  }
  sqlite3_stmt* prepare(const std::string& sql) {
    const auto it = cache_.find(sql);
    if (it != cache_.end()) return it->second;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr) !=
        SQLITE_OK) {
      throw IoError(path_ + ": SQLite cannot prepare: " + sqlite3_errmsg(db_));
    }
    cache_.emplace(sql, stmt);
    return stmt;
  }
  std::string path_;
  sqlite3* db_ = nullptr;
  std::map<std::string, sqlite3_stmt*> cache_;
};

// ---- PostgreSQL ----
class PostgresDatabase final : public Database {
 public:
  explicit PostgresDatabase(const std::string& url) : conn_(PQconnectdb(url.c_str())) {
    if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) {
      const std::string msg = conn_ ? PQerrorMessage(conn_) : "out of memory";
      PQfinish(conn_);
      conn_ = nullptr;
      throw IoError("PostgreSQL: cannot connect: " + msg);
    }
    PQclear(PQexec(conn_, "SET client_min_messages TO WARNING"));
  }
  ~PostgresDatabase() override { PQfinish(conn_); }

  std::vector<DbRow> query(const std::string& sql, const std::vector<DbValue>& params) override {
    // `?` -> $1, $2, ... (the game's SQL has no `?` inside string literals).
    std::string pg;
    int n = 0;
    for (char c : sql) {
      if (c == '?') {
        pg += "$" + std::to_string(++n);
      } else {
        pg += c;
      }
    }
    std::vector<std::string> text(params.size());
    std::vector<const char*> values(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (db_null(params[i])) {
        values[i] = nullptr;
        continue;
      }
      text[i] = std::holds_alternative<double>(params[i]) ? double_text(std::get<double>(params[i]))
                                                          : db_text(params[i]);
      values[i] = text[i].c_str();
    }
    // Named prepared statements, one per SQL text, prepared on first use.
    auto it = prepared_.find(sql);
    if (it == prepared_.end()) {
      const std::string name = "s" + std::to_string(prepared_.size());
      PGresult* p =
          PQprepare(conn_, name.c_str(), pg.c_str(), static_cast<int>(params.size()), nullptr);
      const bool ok = PQresultStatus(p) == PGRES_COMMAND_OK;
      const std::string msg = PQresultErrorMessage(p);
      PQclear(p);
      if (!ok) throw IoError("PostgreSQL cannot prepare: " + msg);
      it = prepared_.emplace(sql, name).first;
    }
    PGresult* r = PQexecPrepared(conn_, it->second.c_str(), static_cast<int>(params.size()),
                                 values.data(), nullptr, nullptr, 0);
    const auto status = PQresultStatus(r);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      const std::string msg = PQresultErrorMessage(r);
      const bool constraint = state != nullptr && std::string(state).rfind("23", 0) == 0;
      PQclear(r);
      if (constraint) throw DbConstraintError(msg);
      throw IoError("PostgreSQL: " + msg);
    }
    std::vector<DbRow> rows;
    const int nrows = PQntuples(r), ncols = PQnfields(r);
    for (int i = 0; i < nrows; ++i) {
      DbRow row;
      for (int c = 0; c < ncols; ++c) {
        if (PQgetisnull(r, i, c)) {
          row.emplace_back(nullptr);
          continue;
        }
        const std::string v = PQgetvalue(r, i, c);
        switch (PQftype(r, c)) {
          case kInt8:
          case kInt4:
          case kInt2:
            row.emplace_back(std::int64_t{std::stoll(v)});
            break;
          case kFloat4:
          case kFloat8:
          case kNumeric:
            row.emplace_back(std::stod(v));
            break;
          default:
            row.emplace_back(v);
        }
      }
      rows.push_back(std::move(row));
    }
    PQclear(r);
    return rows;
  }
  void begin() override { plain("BEGIN"); }
  void commit() override { plain("COMMIT"); }
  void rollback() override { plain("ROLLBACK"); }
  std::string kind() const override { return "postgresql"; }
  std::string serial_primary_key() const override { return "BIGSERIAL PRIMARY KEY"; }

 private:
  // Type OIDs of pg_type (stable across PostgreSQL versions).
  static constexpr Oid kInt8 = 20, kInt2 = 21, kInt4 = 23, kFloat4 = 700, kFloat8 = 701,
                       kNumeric = 1700;
  static std::string double_text(double d) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    return buf;
  }
  void plain(const char* sql) {
    PGresult* r = PQexec(conn_, sql);
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    const std::string msg = PQresultErrorMessage(r);
    PQclear(r);
    if (!ok) throw IoError(std::string("PostgreSQL: ") + msg);
  }
  PGconn* conn_;
  std::map<std::string, std::string> prepared_;  // SQL -> statement name
};

struct Migration {
  int version;
  std::vector<std::string> statements;  // "{serial}" becomes the database's serial key
};

// Versioned schema: append migrations, never edit a released one.
const std::vector<Migration>& migrations() {
  static const std::vector<Migration> list = {
      {1,
       {"CREATE TABLE users (id {serial}, name TEXT NOT NULL UNIQUE, pass_hash TEXT NOT NULL, "
        "is_admin INTEGER NOT NULL DEFAULT 0, solver_qualified INTEGER NOT NULL DEFAULT 0, "
        "created_at BIGINT NOT NULL)",
        "CREATE TABLE sessions (token_hash TEXT PRIMARY KEY, user_id BIGINT NOT NULL REFERENCES "
        "users(id), csrf TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)",
        "CREATE TABLE rounds (id {serial}, creator_id BIGINT NOT NULL REFERENCES users(id), "
        "candidates TEXT NOT NULL, created_at BIGINT NOT NULL, state TEXT NOT NULL, cue TEXT, "
        "associations TEXT, model_picks TEXT, model_score DOUBLE PRECISION, fool_score DOUBLE "
        "PRECISION, submitted_at BIGINT, solves INTEGER NOT NULL DEFAULT 0, solvable_score "
        "DOUBLE PRECISION, solvable_std DOUBLE PRECISION, bonus DOUBLE PRECISION, hidden INTEGER "
        "NOT NULL DEFAULT 0, removed INTEGER NOT NULL DEFAULT 0, qualification INTEGER NOT NULL "
        "DEFAULT 0)",
        "CREATE INDEX rounds_open ON rounds (state, hidden, removed)",
        "CREATE INDEX rounds_creator ON rounds (creator_id)",
        "CREATE TABLE assignments (round_id BIGINT NOT NULL REFERENCES rounds(id), slot INTEGER "
        "NOT NULL, solver_id BIGINT NOT NULL REFERENCES users(id), assigned_at BIGINT NOT NULL, "
        "picks TEXT, score DOUBLE PRECISION, solved_at BIGINT, PRIMARY KEY (round_id, slot), "
        "UNIQUE (round_id, solver_id))",
        "CREATE INDEX assignments_solver ON assignments (solver_id)",
        "CREATE TABLE reports (id {serial}, round_id BIGINT NOT NULL REFERENCES rounds(id), "
        "reporter_id BIGINT NOT NULL REFERENCES users(id), reason TEXT NOT NULL, created_at "
        "BIGINT NOT NULL, state TEXT NOT NULL, reviewed_by BIGINT, reviewed_at BIGINT)",
        "CREATE TABLE qualification_results (user_id BIGINT PRIMARY KEY REFERENCES users(id), "
        "score DOUBLE PRECISION NOT NULL, passed INTEGER NOT NULL, attempts INTEGER NOT NULL, "
        "taken_at BIGINT NOT NULL)"}},
      {2,
       {"CREATE INDEX assignments_unsolved ON assignments (assigned_at) WHERE solved_at IS NULL",
        "CREATE INDEX reports_pending ON reports (state)"}},
      // Names are unique regardless of case: earlier case-variants of a name keep their
      // account under NAME~ID ('~' cannot be registered), the first keeps the name.
      {3,
       {"UPDATE users SET name = name || '~' || CAST(id AS TEXT) WHERE id NOT IN (SELECT "
        "MIN(id) FROM users GROUP BY LOWER(name))",
        "CREATE UNIQUE INDEX users_name_folded ON users (LOWER(name))"}},
      // Settings a game keeps across restarts and shares between server processes: the key
      // of the images' opaque ids.
      {4, {"CREATE TABLE game_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)"}},
  };
  return list;
}

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::unique_ptr<Database> open_database(const std::string& url, SqliteSync sync, bool read_only) {
  if (url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0) {
    return std::make_unique<PostgresDatabase>(url);
  }
  std::string path = url.rfind("sqlite:", 0) == 0 ? url.substr(7) : url;
  if (path.empty()) throw UsageError("empty database path");
  return std::make_unique<SqliteDatabase>(path, sync, read_only);
}

void ConnectionPool::add(std::unique_ptr<Database> db) {
  free_.push_back(db.get());
  all_.push_back(std::move(db));
}

ConnectionPool::Lease ConnectionPool::acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return !free_.empty(); });
  Database* db = free_.back();
  free_.pop_back();
  return Lease(*this, db);
}

void ConnectionPool::give_back(Database* db) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(db);
  }
  cv_.notify_one();
}

namespace {

// The newest migration applied (0: none); creates the bookkeeping table when missing.
int schema_version(Database& db) {
  db.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
      "applied_at BIGINT NOT NULL)");
  const auto rows = db.query("SELECT MAX(version) FROM schema_migrations");
  return rows.empty() ? 0 : static_cast<int>(db_int(rows[0][0]));
}

}  // namespace

int migrate(Database& db) {
  int version = schema_version(db);
  for (const auto& m : migrations()) {
    if (m.version <= version) continue;
    Transaction tx(db);
    // Another server process may have migrated meanwhile.
    if (schema_version(db) >= m.version) continue;
    for (std::string sql : m.statements) {
      const auto at = sql.find("{serial}");
      if (at != std::string::npos) sql.replace(at, 8, db.serial_primary_key());
      db.query(sql);
    }
    db.query("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
             {std::int64_t{m.version}, now_seconds()});
    tx.commit();
    version = m.version;
  }
  return version;
}

}  // namespace winokit
