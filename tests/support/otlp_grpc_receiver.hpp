// A small OTLP/gRPC collector for trace tests: TraceService/Export served on a free loopback port
// with the service stubs generated from proto/opentelemetry, keeping every request and its
// metadata.
#pragma once

#include "support/otlp_receiver.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace grpc {
class Server;
}

namespace ratelimitd::test {

class OtlpGrpcReceiver {
public:
    OtlpGrpcReceiver();
    ~OtlpGrpcReceiver();
    OtlpGrpcReceiver(const OtlpGrpcReceiver&) = delete;
    OtlpGrpcReceiver& operator=(const OtlpGrpcReceiver&) = delete;

    /// "http://127.0.0.1:<port>": an OTLP/gRPC endpoint in plain text.
    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

    /// Every span of every Export so far, in arrival order.
    std::vector<ReceivedSpan> spans() const;
    /// Each Export's metadata (lower-case keys, gRPC's own "grpc-" and ":" entries left out).
    std::vector<std::map<std::string, std::string>> metadata() const;
    /// Export calls so far.
    std::size_t calls() const;

    class Service;

private:
    std::unique_ptr<Service> service_;
    std::unique_ptr<grpc::Server> server_;
    int port_ = 0;
};

}  // namespace ratelimitd::test
