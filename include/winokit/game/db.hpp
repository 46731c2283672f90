// The game's storage: one small SQL interface over SQLite (the default: a file in WAL mode,
// nothing to install) and PostgreSQL (several server processes sharing one database), with
// versioned migrations. Statements are always prepared, with `?` placeholders.
//
//   auto db = winokit::open_database("game.db");            // or "postgresql://user@host/db"
//   winokit::migrate(*db);                                   // applies what is missing
//   winokit::Transaction tx(*db);
//   auto rows = db->query("SELECT id FROM users WHERE name = ?", {std::string("ana")});
//   tx.commit();                                            // rolled back if not reached
#pragma once

#include <cstdint>
#include <memory>
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
int schema_version(Database& db);

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

// Typed access to a row's columns (NULL reads as 0 / empty).
std::int64_t db_int(const DbValue& v);
double db_real(const DbValue& v);
std::string db_text(const DbValue& v);
bool db_null(const DbValue& v);

}  // namespace winokit
