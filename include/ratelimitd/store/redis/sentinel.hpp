// Redis Sentinel: the redis-sentinel:// URL, and a monitor that follows the primary it names.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/endpoint_source.hpp"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace ratelimitd::store::redis {

class BlockingClient;

/// One sentinel's address.
struct SentinelAddress {
    std::string host;
    int port = 26379;
    friend bool operator==(const SentinelAddress&, const SentinelAddress&) = default;
};

/// A parsed redis-sentinel:// URL. The credentials and the db are the data nodes' (the
/// primary's and its replicas'); the sentinels themselves are asked without AUTH unless
/// `sentinel_password` is given.
struct SentinelUrl {
    std::vector<SentinelAddress> sentinels;   ///< asked in this order
    std::string master_name;
    std::optional<std::string> username;      ///< ACL user on the data nodes
    std::optional<std::string> password;      ///< the data nodes' password
    int db = 0;
    std::optional<std::string> sentinel_password;  ///< ?sentinel_password=, AUTH to each sentinel
    bool tls = false;          ///< rediss-sentinel://: TLS to the sentinels and the data nodes
    TlsOptions tls_options;    ///< process settings (redis_tls_*), for both

    /// Sentinel `index`'s endpoint: its address, with the TLS settings and no credentials.
    [[nodiscard]] Endpoint sentinel_endpoint(std::size_t index) const;

    /// "redis-sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster/0": never a password.
    [[nodiscard]] std::string describe() const;
    /// The data-node endpoint at `host`:`port` with this URL's credentials and db.
    [[nodiscard]] Endpoint endpoint_at(std::string host, int port) const;
};

/// True when `url` starts with redis-sentinel:// or rediss-sentinel://.
bool is_sentinel_url(std::string_view url);

/// Parses redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/master-name[/db]
/// [?sentinel_password=SECRET], or the same with rediss-sentinel:// (TLS). The port defaults to 26379; IPv6 hosts go in brackets;
/// percent-escapes in both passwords are decoded. Fails with invalid_request naming what is
/// wrong, never echoing the URL (it may hold a password).
result<SentinelUrl> parse_sentinel_url(std::string_view url);

/// Follows the primary of one master through its sentinels: asks every one of them
/// (`SENTINEL get-master-addr-by-name`) every `poll_interval` on its own thread, prefers the
/// address named by the most of those that answer, and adopts a new address only once its
/// `ROLE` says master (a sentinel with a stale or split view never sends writes to a
/// replica). Reports each change of address. Connections built with this source connect to
/// whatever it last adopted.
/// @par Thread Safety
/// current(), describe() and suspect() may be called from any thread; start() and stop()
/// from the owner's thread.
class SentinelMonitor final : public EndpointSource {
public:
    /// How long a sentinel may take to accept a connection or to answer, per attempt.
    static constexpr std::chrono::milliseconds sentinel_timeout{250};

    explicit SentinelMonitor(SentinelUrl url,
                             std::chrono::milliseconds poll_interval = std::chrono::milliseconds(250));
    ~SentinelMonitor() override;
    SentinelMonitor(const SentinelMonitor&) = delete;
    SentinelMonitor& operator=(const SentinelMonitor&) = delete;

    /// Asks the sentinels once, now, on the calling thread (blocking, at most
    /// sentinel_timeout per sentinel and step). True when they named a primary that is one
    /// (ROLE master), or the one already in use.
    bool poll_once();

    /// Starts polling on a thread of its own. `on_change` runs on that thread each time the
    /// primary's address changes (not for the first address, when poll_once() found it).
    void start(std::function<void(const Endpoint&)> on_change);
    /// Stops and joins the polling thread. Idempotent.
    void stop();

    [[nodiscard]] std::optional<Endpoint> current() const override;
    [[nodiscard]] std::string describe() const override { return url_.describe(); }
    void suspect() override;

private:
    struct Asked;  // what one sentinel said
    Asked ask(std::size_t index);
    /// True when the Redis at `ep` answers ROLE with "master"; else `why` says what it is.
    static bool is_primary(const Endpoint& ep, std::string& why);
    /// Adopts `ep` as the primary (logs and reports a change).
    void adopt(const Endpoint& ep);
    void run();

    const SentinelUrl url_;
    const std::chrono::milliseconds poll_interval_;
    mutable std::mutex mu_;
    std::condition_variable wake_;
    std::optional<Endpoint> primary_;  // guarded by mu_
    bool stopping_ = false;            // guarded by mu_
    bool suspected_ = false;           // guarded by mu_
    std::function<void(const Endpoint&)> on_change_;
    std::thread thread_;
    // Only the polling thread (or poll_once() before start()) touches these.
    std::vector<std::unique_ptr<BlockingClient>> clients_;  // per sentinel, null until connected
    bool warned_ = false;              // "no sentinel named a primary" logged, not yet cleared
};

}  // namespace ratelimitd::store::redis
