// The gRPC listening socket, ours rather than gRPC's: accepts within the connection cap and
// hands each connection to the gRPC server.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/grpc/grpc_metrics.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <cstddef>
#include <memory>
#include <string>

namespace grpc::experimental {
class ExternalConnectionAcceptor;
}

namespace ratelimitd::rls {

/// Binds HOST:PORT and accepts on the given executor (the main thread's, like the HTTP
/// acceptor). gRPC 1.51 has no connection cap, and its own accept loop stops for good on
/// the first failed accept (EMFILE included), so the socket is ours: a connection beyond
/// `max_connections` is closed at once (counted, logged at most every 10 s), a failed accept
/// pauses 50 ms and accepting goes on, and every other connection goes to the gRPC server
/// through `acceptor`, where the server's channel arguments (handshake, idle and age
/// timeouts) apply to it as to one gRPC accepted itself.
/// @par Thread Safety
/// start, stop and the destructor on the executor's thread (or while it does not run).
class GrpcListener {
public:
    /// Binds (port 0: a free one), or fails naming the address.
    static result<std::unique_ptr<GrpcListener>> bind(boost::asio::any_io_executor executor, const std::string& host,
                                                      unsigned short port, std::size_t max_connections,
                                                      GrpcMetrics& metrics);
    ~GrpcListener();
    GrpcListener(const GrpcListener&) = delete;
    GrpcListener& operator=(const GrpcListener&) = delete;

    /// The bound port.
    [[nodiscard]] unsigned short port() const noexcept { return port_; }

    /// Starts accepting into `acceptor` (kept alive until stop).
    void start(std::shared_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor);

    /// Closes the listening socket; connections handed over stay with gRPC. Idempotent.
    void stop();

private:
    struct State;
    explicit GrpcListener(std::shared_ptr<State> state, unsigned short port) : state_(std::move(state)), port_(port) {}
    // Shared with the pending wait, which may complete after the listener is gone.
    std::shared_ptr<State> state_;
    unsigned short port_ = 0;
};

}  // namespace ratelimitd::rls
