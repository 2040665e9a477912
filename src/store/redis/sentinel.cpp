// Redis Sentinel: parsing redis-sentinel:// URLs, and the monitor that polls the sentinels.
#include "ratelimitd/store/redis/sentinel.hpp"

#include "ratelimitd/core/percent.hpp"
#include "blocking_client.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <vector>

namespace ratelimitd::store::redis {

namespace {

constexpr std::string_view sentinel_scheme = "redis-sentinel://";
constexpr std::string_view tls_sentinel_scheme = "rediss-sentinel://";

// The URL itself is left out of messages: it may hold passwords.
Problem bad(const std::string& why) {
    return Problem{errc::invalid_request,
                   "redis: not a valid redis-sentinel://[[user]:password@]host:port[,host:port...]/master-name[/db] "
                   "URL: " + why};
}

bool parse_int(std::string_view s, int& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && p == s.data() + s.size();
}

/// host[:port] or [v6][:port]; the port defaults to 26379.
result<SentinelAddress> parse_host_port(std::string_view s, std::size_t position) {
    const std::string which = "sentinel " + std::to_string(position);
    SentinelAddress a;
    std::string_view port;
    if (!s.empty() && s.front() == '[') {
        auto close = s.find(']');
        if (close == std::string_view::npos) return bad(which + ": unclosed '[' in the host");
        a.host = std::string(s.substr(1, close - 1));
        std::string_view after = s.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return bad(which + ": expected ':' after ']'");
            port = after.substr(1);
            if (port.empty()) return bad(which + ": the port after ':' is empty");
        }
    } else if (auto colon = s.rfind(':'); colon != std::string_view::npos) {
        a.host = std::string(s.substr(0, colon));
        port = s.substr(colon + 1);
        if (port.empty()) return bad(which + ": the port after ':' is empty");
    } else {
        a.host = std::string(s);
    }
    if (a.host.empty()) return bad(which + ": the host is empty");
    if (!port.empty() && (!parse_int(port, a.port) || a.port < 1 || a.port > 65535)) {
        return bad(which + ": the port must be a number 1..65535");
    }
    return a;
}

std::string host_port(const std::string& host, int port) {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

bool is_sentinel_url(std::string_view url) {
    return url.substr(0, sentinel_scheme.size()) == sentinel_scheme ||
           url.substr(0, tls_sentinel_scheme.size()) == tls_sentinel_scheme;
}

std::string SentinelUrl::describe() const {
    std::string out(tls ? tls_sentinel_scheme : sentinel_scheme);
    for (std::size_t i = 0; i < sentinels.size(); ++i) {
        if (i) out += ',';
        out += host_port(sentinels[i].host, sentinels[i].port);
    }
    return out + "/" + master_name + "/" + std::to_string(db);
}

Endpoint SentinelUrl::endpoint_at(std::string host, int port) const {
    Endpoint ep;
    ep.host = std::move(host);
    ep.port = port;
    ep.username = username;
    ep.password = password;
    ep.db = db;
    ep.tls = tls;
    ep.tls_options = tls_options;
    return ep;
}

Endpoint SentinelUrl::sentinel_endpoint(std::size_t index) const {
    Endpoint ep;
    ep.host = sentinels[index].host;
    ep.port = sentinels[index].port;
    ep.tls = tls;
    ep.tls_options = tls_options;
    return ep;
}

namespace {

// The query of a Sentinel URL: only sentinel_password= is understood (the last one wins).
result<std::optional<std::string>> sentinel_password_of(std::string_view query) {
    std::optional<std::string> out;
    while (!query.empty()) {
        auto amp = query.find('&');
        std::string_view pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        constexpr std::string_view key = "sentinel_password=";
        if (pair.substr(0, key.size()) != key) {
            return bad("unknown query parameter (only sentinel_password= is understood)");
        }
        auto decoded = percent_decode(pair.substr(key.size()));
        if (!decoded) return bad("bad percent-escape in sentinel_password");
        if (decoded->empty()) return bad("sentinel_password is empty");
        out = std::move(*decoded);
    }
    return out;
}

}  // namespace

result<SentinelUrl> parse_sentinel_url(std::string_view url) {
    if (!is_sentinel_url(url)) return bad("expected it to start with redis-sentinel:// or rediss-sentinel://");
    SentinelUrl out;
    out.tls = url.substr(0, tls_sentinel_scheme.size()) == tls_sentinel_scheme;
    std::string_view rest = url.substr(out.tls ? tls_sentinel_scheme.size() : sentinel_scheme.size());

    if (auto q = rest.find('?'); q != std::string_view::npos) {
        auto password = sentinel_password_of(rest.substr(q + 1));
        if (!password) return password.error();
        out.sentinel_password = std::move(*password);
        rest = rest.substr(0, q);
    }

    auto credentials = take_userinfo(rest);
    if (!credentials) return bad("bad percent-escape in the password");
    out.username = std::move(credentials->username);
    out.password = std::move(credentials->password);

    const auto slash = rest.find('/');
    if (slash == std::string_view::npos) return bad("the master name is missing: expected /master-name after the sentinels");
    std::string_view hosts = rest.substr(0, slash);
    std::string_view path = rest.substr(slash + 1);

    if (hosts.empty()) return bad("no sentinel address before the master name");
    for (std::size_t position = 1; ; ++position) {
        auto comma = hosts.find(',');
        std::string_view one = hosts.substr(0, comma);
        if (one.empty()) return bad("sentinel " + std::to_string(position) + " is empty (a stray ',')");
        auto addr = parse_host_port(one, position);
        if (!addr) return addr.error();
        out.sentinels.push_back(std::move(*addr));
        if (comma == std::string_view::npos) break;
        hosts = hosts.substr(comma + 1);
    }

    const auto db_slash = path.find('/');
    std::string_view name = path.substr(0, db_slash);
    if (name.empty()) return bad("the master name after '/' is empty");
    for (char c : name) {
        if (c <= ' ' || c > '~') return bad("the master name may only hold printable characters, no spaces");
    }
    out.master_name = std::string(name);
    if (db_slash != std::string_view::npos) {
        std::string_view db = path.substr(db_slash + 1);
        if (!db.empty() && (!parse_int(db, out.db) || out.db < 0)) {
            return bad("the database after the master name must be a number");
        }
    }
    return out;
}

// ---- SentinelMonitor --------------------------------------------------------------------------

struct SentinelMonitor::Asked {
    bool answered = false;
    std::string host;
    int port = 0;
    std::string why;  ///< when not answered: what went wrong, for the log
};

SentinelMonitor::SentinelMonitor(SentinelUrl url, std::chrono::milliseconds poll_interval)
    : url_(std::move(url)), poll_interval_(poll_interval), clients_(url_.sentinels.size()) {}

SentinelMonitor::~SentinelMonitor() { stop(); }

std::optional<Endpoint> SentinelMonitor::current() const {
    std::lock_guard lock(mu_);
    return primary_;
}

void SentinelMonitor::suspect() {
    std::lock_guard lock(mu_);
    suspected_ = true;
    wake_.notify_one();
}

void SentinelMonitor::start(std::function<void(const Endpoint&)> on_change) {
    on_change_ = std::move(on_change);
    thread_ = std::thread([this] { run(); });
}

void SentinelMonitor::stop() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
        wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
}

void SentinelMonitor::run() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
        wake_.wait_for(lock, poll_interval_, [this] { return stopping_ || suspected_; });
        if (stopping_) break;
        suspected_ = false;
        lock.unlock();
        try {
            poll_once();
        } catch (const std::exception& e) {
            // One poll is the unit of work: an exception must not end this thread (std::terminate).
            spdlog::error("sentinel: a poll failed unexpectedly ({}); the next poll retries", e.what());
        }
        lock.lock();
    }
}

// One connection is kept per sentinel, so a poll is one round trip to each.
SentinelMonitor::Asked SentinelMonitor::ask(std::size_t index) {
    const SentinelAddress& s = url_.sentinels[index];
    const std::string where = "sentinel " + host_port(s.host, s.port);
    auto& client = clients_[index];
    std::string why;
    if (client == nullptr) {
        auto fresh = std::make_unique<BlockingClient>(url_.sentinel_endpoint(index), sentinel_timeout);
        if (why = fresh->connect(); !why.empty()) return Asked{false, {}, 0, where + ": " + why};
        if (url_.sentinel_password) {
            auto r = fresh->command({"AUTH", *url_.sentinel_password}, why);
            if (!r) return Asked{false, {}, 0, where + ": no answer to AUTH (" + why + ")"};
            if (r->is_error()) return Asked{false, {}, 0, where + ": AUTH refused: " + r->str};
        }
        client = std::move(fresh);
    }
    auto r = client->command({"SENTINEL", "get-master-addr-by-name", url_.master_name}, why);
    if (!r) {
        client.reset();
        return Asked{false, {}, 0, where + ": " + why};
    }
    Asked a;
    if (r->type == Value::Type::array && r->elements.size() == 2 && r->elements[0].type == Value::Type::string &&
        r->elements[1].type == Value::Type::string && parse_int(r->elements[1].str, a.port) && a.port >= 1 &&
        a.port <= 65535) {
        a.answered = true;
        a.host = r->elements[0].str;
    } else if (r->type == Value::Type::nil) {
        a.why = where + ": does not know a master named " + url_.master_name;
    } else if (r->is_error()) {
        a.why = where + ": " + r->str;
    } else {
        a.why = where + ": unexpected reply to SENTINEL get-master-addr-by-name";
    }
    return a;
}

bool SentinelMonitor::is_primary(const Endpoint& ep, std::string& why) {
    BlockingClient c(ep, sentinel_timeout);
    if (auto failure = c.connect(); !failure.empty()) {
        why = "cannot connect to it (" + failure + ")";
        return false;
    }
    if (ep.password) {
        auto auth = ep.username ? c.command({"AUTH", *ep.username, *ep.password}, why)
                                : c.command({"AUTH", *ep.password}, why);
        if (!auth || auth->is_error()) {
            why = "AUTH refused";
            return false;
        }
    }
    auto role = c.command({"ROLE"}, why);
    if (!role || role->type != Value::Type::array || role->elements.empty() ||
        role->elements[0].type != Value::Type::string) {
        why = "no answer to ROLE";
        return false;
    }
    const std::string& said = role->elements[0].str;
    why = "ROLE says " + said;
    return said == "master";
}

void SentinelMonitor::adopt(const Endpoint& ep) {
    std::optional<Endpoint> before;
    {
        std::lock_guard lock(mu_);
        before = primary_;
        primary_ = ep;
    }
    spdlog::info("sentinel: the primary of {} is {}{}", url_.master_name, host_port(ep.host, ep.port),
                 before ? " (was " + host_port(before->host, before->port) + ")" : std::string());
    if (on_change_) on_change_(ep);
}

bool SentinelMonitor::poll_once() {
    // Every sentinel is asked; the address most of those that answer name wins (ties: the
    // one named first, in the URL's order), so one sentinel with a stale view is outvoted.
    std::vector<std::pair<std::string, int>> named;  // distinct addresses, in first-named order
    std::vector<int> votes;
    std::string failures;
    for (std::size_t i = 0; i < url_.sentinels.size(); ++i) {
        Asked a = ask(i);
        if (!a.answered) {
            failures += (failures.empty() ? "" : "; ") + a.why;
            continue;
        }
        const auto at = std::find(named.begin(), named.end(), std::pair{a.host, a.port});
        if (at == named.end()) {
            named.emplace_back(a.host, a.port);
            votes.push_back(1);
        } else {
            ++votes[static_cast<std::size_t>(at - named.begin())];
        }
    }
    std::vector<std::size_t> order(named.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return votes[a] > votes[b]; });
    const auto in_use = current();
    for (std::size_t i : order) {
        Endpoint ep = url_.endpoint_at(named[i].first, named[i].second);
        const bool same = in_use && in_use->host == ep.host && in_use->port == ep.port;
        std::string why;
        // Checked before use, not on every poll: the address in use was checked when adopted.
        if (!same && !is_primary(ep, why)) {
            failures += (failures.empty() ? "" : "; ") + host_port(ep.host, ep.port) + " is named but " + why;
            continue;
        }
        if (warned_) {
            spdlog::info("sentinel: {} answers again", describe());
            warned_ = false;
        }
        if (!same) adopt(ep);
        return true;
    }
    if (!warned_) {
        spdlog::warn("sentinel: no sentinel of {} named a primary ({}); checks answer by on_store_error "
                     "while the last known primary does not answer",
                     describe(), failures);
        warned_ = true;
    }
    return false;
}

}  // namespace ratelimitd::store::redis
