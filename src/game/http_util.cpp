// Small HTTP helpers of the game server: token buckets, cookies, JSON replies and fields.
#include <algorithm>
#include <cctype>

#include "server_impl.hpp"

namespace winokit::http {

using nlohmann::json;

namespace {
constexpr std::size_t kMaxBuckets = 100000;  // pruned beyond this
constexpr std::size_t kMaxIdDigits = 18;     // fits an int64
constexpr std::size_t kMaxListItems = 64;
}  // namespace

bool RateLimiter::allow(const std::string& key) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  if (buckets_.size() > kMaxBuckets) prune(now);
  auto [it, fresh] = buckets_.try_emplace(key, Bucket{burst_, now});
  Bucket& b = it->second;
  if (!fresh) {
    const double dt = std::chrono::duration<double>(now - b.last).count();
    b.tokens = std::min(burst_, b.tokens + dt * rate_);
    b.last = now;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

void RateLimiter::prune(std::chrono::steady_clock::time_point now) {
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    const double dt = std::chrono::duration<double>(now - it->second.last).count();
    it = it->second.tokens + dt * rate_ >= burst_ ? buckets_.erase(it) : std::next(it);
  }
}

void send_json(HttpResponse& res, int status, const json& body) {
  res.status = status;
  res.headers.emplace_back("Cache-Control", "no-store");
  // Replace, not throw, on invalid UTF-8 (an error message may quote cut user text).
  res.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  res.content_type = "application/json";
}

void send_error(HttpResponse& res, GameErrorKind kind, const std::string& code,
                const std::string& message) {
  send_json(res, http_status(kind), {{"error", {{"code", code}, {"message", message}}}});
}

void add_security_headers(HttpResponse& res) {
  res.headers.emplace_back("X-Content-Type-Options", "nosniff");
  res.headers.emplace_back("X-Frame-Options", "DENY");
  res.headers.emplace_back("Referrer-Policy", "no-referrer");
  res.headers.emplace_back("Content-Security-Policy",
                           "default-src 'self'; img-src 'self'; style-src 'self'; script-src "
                           "'self'; frame-ancestors 'none'");
}

std::string cookie_value(const HttpRequest& req, const std::string& name) {
  const std::string header = req.header("Cookie");
  std::size_t pos = 0;
  while (pos < header.size()) {
    std::size_t end = header.find(';', pos);
    if (end == std::string::npos) end = header.size();
    std::string part = header.substr(pos, end - pos);
    const auto a = part.find_first_not_of(' ');
    if (a != std::string::npos) part = part.substr(a);
    if (part.rfind(name + "=", 0) == 0) return part.substr(name.size() + 1);
    pos = end + 1;
  }
  return {};
}

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string content_type_of(const std::filesystem::path& p) {
  const std::string ext = lower(p.extension().string());
  if (ext == ".png") return "image/png";
  if (ext == ".webp") return "image/webp";
  return "image/jpeg";
}

std::int64_t path_id(const std::vector<std::string>& captures) {
  const std::string& s = captures.at(0);
  if (s.empty() || s.size() > kMaxIdDigits)
    throw GameError(GameErrorKind::NotFound, "not_found", "no such id");
  return std::stoll(s);
}

std::vector<std::string> string_list(const json& body, const char* key) {
  const auto it = body.find(key);
  if (it == body.end() || !it->is_array()) {
    throw GameError(GameErrorKind::Invalid, "bad_request",
                    std::string("'") + key + "' must be a list of image ids");
  }
  if (it->size() > kMaxListItems)
    throw GameError(GameErrorKind::Invalid, "bad_request", std::string("'") + key + "' too long");
  std::vector<std::string> out;
  for (const auto& v : *it) {
    if (!v.is_string())
      throw GameError(GameErrorKind::Invalid, "bad_request",
                      std::string("'") + key + "' holds image ids");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::string string_field(const json& body, const char* key, bool required) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) {
    if (required)
      throw GameError(GameErrorKind::Invalid, "bad_request", std::string("missing '") + key + "'");
    return {};
  }
  if (!it->is_string())
    throw GameError(GameErrorKind::Invalid, "bad_request",
                    std::string("'") + key + "' must be a string");
  return it->get<std::string>();
}

}  // namespace winokit::http
