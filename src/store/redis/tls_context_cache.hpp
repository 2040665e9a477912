// The client contexts of rediss:// connections, kept between connections: made again only when
// a file changed, and a changed file that cannot be used never replaces the last good context.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"

#include <boost/asio/ssl/context.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace ratelimitd::store::redis {

/// One context per set of TLS options for the whole process. Each new connection asks for it:
/// the files are read again (a renewed certificate is used from the next connection on); when
/// they changed, a new context is made from them (make_tls_context: each file parses, the key
/// matches the certificate). A change that fails is refused (logged once, naming the file and
/// OpenSSL's reason; counted in ratelimitd_tls_reload_total) and the last good context serves
/// the connection, so a half-written Secret costs Redis no connection.
/// @par Thread Safety
/// Every member may be called from any thread (connections open on every server thread).
class TlsContextCache {
public:
    static TlsContextCache& process();

    /// The context for `options`: the last good one, made again first when a file changed.
    /// Fails only when no good context was ever made from these files (as at start).
    result<std::shared_ptr<boost::asio::ssl::context>> get(const TlsOptions& options);

private:
    struct Entry {
        std::string files;  // the three files' bytes (or why unreadable) when last read
        std::shared_ptr<boost::asio::ssl::context> good;
        Problem refusal{errc::store_unavailable, {}};  // why the files as last read cannot be used
    };

    static std::string key(const TlsOptions& options);
    static std::string read_files(const TlsOptions& options);
    result<std::shared_ptr<boost::asio::ssl::context>> remake(Entry& entry, const TlsOptions& options);

    std::mutex mu_;
    std::map<std::string, Entry> entries_;
};

}  // namespace ratelimitd::store::redis
