// The game's storage, the low level under the store (game/store.hpp, which holds every SQL
// statement of the game's logic): one small SQL interface over SQLite (the default: a file in
// WAL mode, nothing to install) and PostgreSQL (several server processes sharing one database),
// versioned migrations, and the pool of connections the request threads share. Statements are
// always prepared, with `?` placeholders.
//
//   auto db = winokit::open_database("game.db");            // or "postgresql://user@host/db"
//   winokit::migrate(*db);                                   // applies what is missing
//   winokit::Transaction tx(*db);
//   auto rows = db->query("SELECT id FROM users WHERE name = ?", {std::string("ana")});
//   tx.commit();                                            // rolled back if not reached
//
//   winokit::ConnectionPool pool;                            // shared by request threads
//   pool.add(std::move(db));
//   { auto lease = pool.acquire(); Database& conn = *lease; }  // given back at scope end
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "winokit/core/layer.hpp"
WINOKIT_LAYER(game);

namespace winokit {

using DbValue = std::variant<std::nullptr_t, std::int64_t, double, std::string>;
using DbRow = std::vector<DbValue>;

// A unique or foreign-key constraint refused a write (the caller decides what it means).
class DbConstraintError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Database {
 public:
  virtual ~Database() = default;
  // Runs one statement with `?` parameters; returns its rows (none for writes).
  virtual std::vector<DbRow> query(const std::string& sql,
                                   const std::vector<DbValue>& params = {}) = 0;
  virtual void begin() = 0;
  virtual void commit() = 0;
  virtual void rollback() = 0;
  virtual std::string kind() const = 0;  // "sqlite" or "postgresql"
  // The SQL spelling of an auto-increment primary key column.
  virtual std::string serial_primary_key() const = 0;
};

enum class SqliteSync { Normal, Full };

// "postgresql://..." or "postgres://..." opens PostgreSQL (libpq); "sqlite:PATH" or a plain
// path opens SQLite in WAL mode with a busy timeout. `sync`: NORMAL survives a killed process
// (the durability the game promises); FULL also survives power loss, at the cost of an fsync
// per commit.
// `read_only`: open an existing SQLite file without changing it (no journal-mode switch), as
// `winokit game export` does.
std::unique_ptr<Database> open_database(const std::string& url,
                                        SqliteSync sync = SqliteSync::Normal,
                                        bool read_only = false);

// Applies every migration newer than the database's version, each in its own transaction, and
// returns the version reached.
int migrate(Database& db);

class Transaction {
 public:
  explicit Transaction(Database& db) : db_(db) { db_.begin(); }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (!done_) {
      try {
        db_.rollback();
      } catch (...) {
      }
    }
  }
  void commit() {
    db_.commit();
    done_ = true;
  }

 private:
  Database& db_;
  bool done_ = false;
};

// Database connections shared by the request threads: SQLite has one (its writes serialise
// anyway); PostgreSQL several, so transactions overlap and commits are grouped. acquire()
// waits for a free connection and lends it until the Lease goes out of scope.
class ConnectionPool {
 public:
  class Lease {
   public:
    Lease(ConnectionPool& pool, Database* db) : pool_(pool), db_(db) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { pool_.give_back(db_); }
    Database& operator*() const { return *db_; }

   private:
    ConnectionPool& pool_;
    Database* db_;
  };
  void add(std::unique_ptr<Database> db);
  Lease acquire();
  std::size_t size() const { return all_.size(); }

 private:
  void give_back(Database* db);
  std::vector<std::unique_ptr<Database>> all_;
  std::vector<Database*> free_;
  std::mutex mutex_;
  std::condition_variable cv_;
};

// Typed access to a row's columns (NULL reads as 0 / empty).
std::int64_t db_int(const DbValue& v);
double db_real(const DbValue& v);
std::string db_text(const DbValue& v);
bool db_null(const DbValue& v);

}  // namespace winokit
