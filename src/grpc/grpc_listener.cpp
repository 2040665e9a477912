// GrpcListener: an Asio acceptor waited on, accept4 until EAGAIN, the cap, the hand-over.
#include "ratelimitd/grpc/grpc_listener.hpp"

#include "ratelimitd/core/host_port.hpp"

#include "ratelimitd/grpc/connection_ledger.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ratelimitd::rls {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// At most one warning per this long while connections are refused or accepts fail.
constexpr std::chrono::seconds warning_interval{10};
// After a failed accept (out of descriptors): the HTTP acceptor's pause.
constexpr std::chrono::milliseconds accept_pause{50};

/// Counts what happened since its last line and says it at most every warning_interval.
struct RateLimitedWarning {
    std::size_t unlogged = 0;
    std::chrono::steady_clock::time_point logged{};

    // True when a line is due now (and resets the count the caller logs first).
    bool due() {
        ++unlogged;
        const auto now = std::chrono::steady_clock::now();
        if (now - logged < warning_interval) return false;
        logged = now;
        return true;
    }
};

// An address as is; a name (grpc_listen: localhost:8081) through the resolver, its first address.
tcp::endpoint resolve(net::any_io_executor ex, const std::string& host, unsigned short port) {
    boost::system::error_code ec;
    const auto address = net::ip::make_address(host, ec);
    if (!ec) return {address, port};
    tcp::resolver resolver(ex);
    const auto results = resolver.resolve(host, std::to_string(port));  // throws when the name is unknown
    if (results.empty()) throw boost::system::system_error(net::error::host_not_found);
    return *results.begin();
}

}  // namespace

struct GrpcListener::State {
    tcp::acceptor acceptor;
    net::steady_timer pause;
    ConnectionLedger ledger;
    GrpcMetrics& metrics;
    std::shared_ptr<grpc::experimental::ExternalConnectionAcceptor> handoff;
    RateLimitedWarning refused;
    RateLimitedWarning failed;
    bool stopped = false;

    State(net::any_io_executor ex, std::size_t cap, GrpcMetrics& m)
        : acceptor(ex), pause(ex), ledger(cap), metrics(m) {}

    static void wait_next(const std::shared_ptr<State>& self) {
        self->acceptor.async_wait(tcp::acceptor::wait_read, [self](boost::system::error_code ec) {
            if (ec || self->stopped) return;  // closed by stop()
            accept_ready(self);
        });
    }

    // Every connection waiting, then wait again; a failed accept pauses first.
    static void accept_ready(const std::shared_ptr<State>& self) {
        for (;;) {
            const int fd = ::accept4(self->acceptor.native_handle(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd >= 0) {
                self->hand_over(fd);
                continue;
            }
            const int err = errno;
            if (err == EINTR || err == ECONNABORTED) continue;  // interrupted, or the peer gave up
            if (err == EAGAIN || err == EWOULDBLOCK) return wait_next(self);
            if (self->failed.due()) {
                spdlog::warn("grpc accept failed: {} failures={}", std::strerror(err), self->failed.unlogged);
                self->failed.unlogged = 0;
            }
            self->pause.expires_after(accept_pause);
            self->pause.async_wait([self](boost::system::error_code ec) {
                if (!ec && !self->stopped) wait_next(self);
            });
            return;
        }
    }

    void hand_over(int fd) {
        if (!ledger.admit(fd)) {
            // Closed at once, so the peer (Envoy) fails fast and tries another host.
            ::close(fd);
            metrics.count_connection_refused();
            if (refused.due()) {
                spdlog::warn("grpc connection limit reached: connections closed since the last such line "
                             "refused={} grpc_max_connections={}",
                             refused.unlogged, ledger.cap());
                refused.unlogged = 0;
            }
            return;
        }
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters p;
        p.listener_fd = acceptor.native_handle();
        p.fd = fd;
        handoff->HandleNewConnection(&p);  // gRPC owns fd now (and closes it when stopped)
    }
};

result<std::unique_ptr<GrpcListener>> GrpcListener::bind(net::any_io_executor executor, const std::string& host,
                                                         unsigned short port, std::size_t max_connections,
                                                         GrpcMetrics& metrics) {
    auto state = std::make_shared<State>(std::move(executor), max_connections, metrics);
    try {
        const tcp::endpoint endpoint = resolve(state->acceptor.get_executor(), host, port);
        state->acceptor.open(endpoint.protocol());
        state->acceptor.set_option(net::socket_base::reuse_address(true));
        state->acceptor.bind(endpoint);
        state->acceptor.listen(net::socket_base::max_listen_connections);
        state->acceptor.non_blocking(true);
        const auto bound = state->acceptor.local_endpoint().port();
        return std::unique_ptr<GrpcListener>(new GrpcListener(std::move(state), bound));
    } catch (const boost::system::system_error& e) {
        return Problem{errc::invalid_request,
                       "cannot listen on " + host_port(host, port) + " (grpc_listen): " + e.code().message()};
    }
}

GrpcListener::~GrpcListener() { stop(); }

void GrpcListener::start(std::shared_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor) {
    state_->handoff = std::move(acceptor);
    State::wait_next(state_);
}

void GrpcListener::stop() {
    if (state_->stopped) return;
    state_->stopped = true;
    boost::system::error_code ignored;
    state_->acceptor.close(ignored);  // the pending wait completes as aborted
    state_->pause.cancel();
}

}  // namespace ratelimitd::rls
