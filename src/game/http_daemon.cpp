// The game server's network side: libmicrohttpd callbacks (request heads and bodies, caps,
// the worker queue), the deadline sweeper, and run() (binding the port, starting and stopping).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "server_impl.hpp"
#include "winokit/core/error.hpp"

namespace winokit {

using namespace http;

namespace {

constexpr unsigned kListenBacklog = 1024;
constexpr std::size_t kMaxCollected = 200;  // headers or query parameters kept per request
constexpr std::size_t kConnectionMemory = 64 * 1024;

MHD_Result collect(void* cls, MHD_ValueKind, const char* key, const char* value) {
  auto* out = static_cast<std::vector<std::pair<std::string, std::string>>*>(cls);
  if (out->size() < kMaxCollected) out->emplace_back(key ? key : "", value ? value : "");
  return MHD_YES;
}

// A response whose body is a file: libmicrohttpd sends it from the descriptor (sendfile), so
// a slow reader holds the kernel's socket buffer, not a copy of the image.
MHD_Response* file_response(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return nullptr;
  }
  MHD_Response* r = MHD_create_response_from_fd64(static_cast<std::uint64_t>(st.st_size), fd);
  if (r == nullptr) ::close(fd);
  return r;  // closes fd when destroyed
}

MHD_Result send(MHD_Connection* c, const HttpResponse& given) {
  const HttpResponse* r = &given;
  HttpResponse missing;
  MHD_Response* response = nullptr;
  if (!given.file.empty()) {
    response = file_response(given.file);
    if (response == nullptr) {  // gone since the pool was read
      send_error(missing, GameErrorKind::NotFound, "not_found", "no such image");
      add_security_headers(missing);
      r = &missing;
    }
  }
  if (response == nullptr) {
    response = MHD_create_response_from_buffer(r->body.size(), const_cast<char*>(r->body.data()),
                                               MHD_RESPMEM_MUST_COPY);
  }
  if (response == nullptr) return MHD_NO;
  for (const auto& [k, v] : r->headers)
    MHD_add_response_header(response, k.c_str(), v.c_str());
  if (!r->content_type.empty())
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type.c_str());
  const MHD_Result ok = MHD_queue_response(c, static_cast<unsigned>(r->status), response);
  MHD_destroy_response(response);
  return ok;
}

MHD_Result refuse(MHD_Connection* c, bool& answered, GameErrorKind kind, const std::string& code,
                  const std::string& message) {
  HttpResponse res;
  send_error(res, kind, code, message);
  res.headers.emplace_back("Connection", "close");
  answered = true;
  return send(c, res);
}

std::string address_text(const sockaddr* a) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a)->sin_addr, buf, sizeof buf);
  } else if (a->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, buf, sizeof buf);
  }
  return buf;
}

// A listening socket on host:port, bound here rather than by libmicrohttpd so that a busy port
// is told apart (EADDRINUSE) and no SO_REUSEPORT lets a second server share it. SO_REUSEADDR
// only lets a restart bind over connections in TIME_WAIT.
int listen_socket(const ServerOptions& o) {
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  const std::string host = o.host == "localhost" ? "127.0.0.1" : o.host;
  if (o.port < 0 || o.port > 65535) throw UsageError("the port must be 0 to 65535");
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(o.port));
    addr_len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(o.port));
    addr_len = sizeof(sockaddr_in6);
  } else {
    throw UsageError("--host must be a numeric IPv4 or IPv6 address, not '" + o.host + "'");
  }
  const std::string where = o.host + ":" + std::to_string(o.port);
  const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw IoError("cannot open a socket for " + where + ": " + std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (addr.ss_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), addr_len) != 0 ||
      ::listen(fd, static_cast<int>(kListenBacklog)) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EADDRINUSE) {
      throw UsageError("cannot listen on " + where +
                       ": address already in use (another server? pick another --port)");
    }
    throw IoError("cannot listen on " + where + ": " + std::strerror(err));
  }
  return fd;
}

// The port a socket is bound to (the one the kernel chose for port 0).
int bound_port(int fd, int fallback) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return fallback;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return fallback;
}

}  // namespace

GameServer::Impl::Connection* GameServer::Impl::connection_of(MHD_Connection* c) {
  const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info ? static_cast<Connection*>(info->socket_context) : nullptr;
}

MHD_Result GameServer::Impl::on_request(void* cls, MHD_Connection* c, const char* url,
                                        const char* method, const char*, const char* upload_data,
                                        size_t* upload_size, void** con_cls) {
  auto* self = static_cast<Impl*>(cls);
  auto* st = static_cast<Request*>(*con_cls);
  if (st == nullptr) {  // the head is in: set up, check what can be checked before the body
    st = new Request;
    *con_cls = st;
    st->mhd = c;
    st->connection = self->connection_of(c);
    st->req.method = method ? method : "";
    st->req.path = url ? url : "";
    MHD_get_connection_values(c, MHD_HEADER_KIND, collect, &st->req.headers);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect, &st->req.params);
    const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info && info->client_addr) st->req.remote_addr = address_text(info->client_addr);
    if (self->options.trust_proxy) {
      const std::string key = self->client_address(st->req);
      std::lock_guard<std::mutex> lock(self->registry_mutex);
      int& n = self->in_flight[key];
      if (n >= self->options.max_connections_per_address) {
        if (n == 0) self->in_flight.erase(key);
        return refuse(c, st->answered, GameErrorKind::RateLimited, "too_many_connections",
                      "too many requests in flight from this address");
      }
      ++n;
      st->forwarded = key;
    }
    const std::string length = st->req.header("Content-Length");
    if (!length.empty()) {
      errno = 0;
      char* end = nullptr;
      const unsigned long long n = std::strtoull(length.c_str(), &end, 10);
      if (errno != 0 || *end != '\0' || n > self->options.max_body) {
        st->too_large = true;
        return refuse(c, st->answered, GameErrorKind::TooLarge, "too_large",
                      "the request body is too large");
      }
    }
    return MHD_YES;
  }
  if (st->answered) {  // an early refusal: drop whatever body still comes
    *upload_size = 0;
    return MHD_YES;
  }
  if (*upload_size > 0) {
    if (!st->too_large && st->req.body.size() + *upload_size <= self->options.max_body) {
      st->req.body.append(upload_data, *upload_size);
    } else {
      // Over the cap (a chunked body has no length up front): keep nothing, and answer 413
      // now if libmicrohttpd lets us, else once the body ends (the deadline bounds that).
      st->too_large = true;
      std::string().swap(st->req.body);
      if (refuse(c, st->answered, GameErrorKind::TooLarge, "too_large",
                 "the request body is too large") != MHD_YES)
        st->answered = false;
    }
    *upload_size = 0;
    return MHD_YES;
  }
  if (st->too_large)
    return refuse(c, st->answered, GameErrorKind::TooLarge, "too_large",
                  "the request body is too large");
  if (st->done.load()) {
    st->answered = true;
    return send(c, st->res);
  }
  if (st->queued) return MHD_YES;
  if (st->connection) {
    std::lock_guard<std::mutex> lock(self->registry_mutex);
    st->connection->request_complete = true;
  }
  {
    std::lock_guard<std::mutex> lock(self->queue_mutex);
    if (!self->stopping &&
        self->queue.size() < static_cast<std::size_t>(std::max(1, self->options.max_queue))) {
      st->queued = true;
      MHD_suspend_connection(c);
      self->queue.push_back(st);
    }
  }
  if (!st->queued)
    return refuse(c, st->answered, GameErrorKind::Busy, "busy", "the server is busy; try again");
  self->queue_cv.notify_one();
  return MHD_YES;
}

void GameServer::Impl::on_completed(void* cls, MHD_Connection* c, void** con_cls,
                                    MHD_RequestTerminationCode) {
  auto* self = static_cast<Impl*>(cls);
  auto* st = static_cast<Request*>(*con_cls);
  *con_cls = nullptr;
  std::lock_guard<std::mutex> lock(self->registry_mutex);
  if (Connection* conn = self->connection_of(c)) {  // the next request's deadline starts now
    conn->started = std::chrono::steady_clock::now();
    conn->request_complete = false;
  }
  if (st == nullptr) return;
  if (!st->forwarded.empty()) {
    const auto it = self->in_flight.find(st->forwarded);
    if (it != self->in_flight.end() && --it->second <= 0) self->in_flight.erase(it);
  }
  delete st;
}

void GameServer::Impl::on_connection(void* cls, MHD_Connection* c, void** socket_context,
                                     MHD_ConnectionNotificationCode code) {
  auto* self = static_cast<Impl*>(cls);
  std::lock_guard<std::mutex> lock(self->registry_mutex);
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    auto conn = std::make_unique<Connection>();
    const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    conn->fd = info ? info->connect_fd : -1;
    conn->started = std::chrono::steady_clock::now();
    *socket_context = conn.get();
    self->connections.emplace(conn.get(), std::move(conn));
  } else {
    self->connections.erase(static_cast<Connection*>(*socket_context));
    *socket_context = nullptr;
  }
}

void GameServer::Impl::work() {
  for (;;) {
    Request* st = nullptr;
    {
      std::unique_lock<std::mutex> lock(queue_mutex);
      queue_cv.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty()) return;
      st = queue.front();
      queue.pop_front();
    }
    MHD_Connection* c = st->mhd;  // st is not touched once done is set
    st->res = handle(st->req);
    st->done.store(true);
    MHD_resume_connection(c);
  }
}

// Closes connections whose request head and body did not arrive within the deadline
// (libmicrohttpd's own timeout only counts inactivity: a client trickling a byte at a time
// would never meet it). shutdown() wakes the connection's event loop, which closes it.
void GameServer::Impl::sweep() {
  const auto limit = std::chrono::seconds(std::max(1, options.request_seconds));
  std::unique_lock<std::mutex> lock(run_mutex);
  while (!stop_requested) {
    run_cv.wait_for(lock, std::chrono::milliseconds(200));
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> reg(registry_mutex);
    for (auto& [key, conn] : connections) {
      if (conn->request_complete || conn->cut || conn->fd < 0) continue;
      if (now - conn->started > limit) {
        ::shutdown(conn->fd, SHUT_RDWR);
        conn->cut = true;
      }
    }
  }
}

void GameServer::run(const std::function<void(int)>& on_ready) {
  Impl& im = *impl_;
  const ServerOptions& o = im.options;
  if (o.threads < 1 || o.io_threads < 1 || o.max_connections < 1 ||
      o.max_connections_per_address < 1 || o.request_seconds < 1) {
    throw UsageError("server threads, connection caps and the request deadline must be positive");
  }
  const int listen_fd = listen_socket(o);
  unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
  // Without a proxy, libmicrohttpd caps connections per socket address; behind one every
  // connection comes from the proxy, and requests in flight are capped per forwarded address.
  const unsigned per_ip = o.trust_proxy ? 0u : static_cast<unsigned>(o.max_connections_per_address);
  {
    std::lock_guard<std::mutex> lock(im.queue_mutex);
    im.stopping = false;
  }
  for (int i = 0; i < o.threads; ++i)
    im.workers.emplace_back([&im] { im.work(); });
  MHD_OptionItem pool_option[] = {{o.io_threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END,
                                   static_cast<intptr_t>(o.io_threads), nullptr},
                                  {MHD_OPTION_END, 0, nullptr}};
  im.daemon = MHD_start_daemon(
      flags, 0, nullptr, nullptr, &Impl::on_request, &im, MHD_OPTION_LISTEN_SOCKET, listen_fd,
      MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(o.max_connections),
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip, MHD_OPTION_CONNECTION_TIMEOUT,
      static_cast<unsigned>(o.request_seconds), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      kConnectionMemory, MHD_OPTION_NOTIFY_COMPLETED, &Impl::on_completed, &im,
      MHD_OPTION_NOTIFY_CONNECTION, &Impl::on_connection, &im, MHD_OPTION_ARRAY, pool_option,
      MHD_OPTION_END);
  auto stop_workers = [&im] {
    {
      std::lock_guard<std::mutex> lock(im.queue_mutex);
      im.stopping = true;
    }
    im.queue_cv.notify_all();
    for (auto& t : im.workers)
      t.join();
    im.workers.clear();
  };
  if (im.daemon == nullptr) {
    ::close(listen_fd);
    stop_workers();
    throw IoError("cannot serve on " + o.host + ":" + std::to_string(o.port));
  }
  const int port = bound_port(listen_fd, o.port);
  std::thread sweeper([&im] { im.sweep(); });
  if (on_ready) on_ready(port);
  {
    std::unique_lock<std::mutex> lock(im.run_mutex);
    im.run_cv.wait(lock, [&] { return im.stop_requested; });
  }
  sweeper.join();
  // Stop accepting; a quiesced daemon hands its listening socket back to be closed after it.
  const MHD_socket quiesced = MHD_quiesce_daemon(im.daemon);
  stop_workers();  // finishes the queued requests and resumes their connections
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // their replies go out
  MHD_stop_daemon(im.daemon);
  im.daemon = nullptr;
  if (quiesced != MHD_INVALID_SOCKET) ::close(quiesced);  // ours once the daemon is stopped
}

}  // namespace winokit
