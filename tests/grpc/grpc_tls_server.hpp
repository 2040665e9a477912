// The gRPC TLS tests' server and client: ratelimitd started with the gRPC listener and TLS
// arguments, and a grpc++ TLS client of its own. Header only: the globs build *_test.cpp.
#pragma once

#include "grpc/grpc_tls_certs.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"
#include "support/rls_client.hpp"

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ratelimitd::test {

inline const char* const grpc_tls_config = R"(policies:
  open: {algorithm: fixed_window, limit: 100000, window: 1h}
domains:
  - domain: edge
    descriptors:
      - key: k
        rate_limit: {unit: hour, requests_per_unit: 100000}
)";

inline std::string read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline std::string write_config(const std::string& name) {
    const auto path = scratch_dir() + "/" + name + "-" + std::to_string(free_port()) + ".yaml";
    std::ofstream(path) << grpc_tls_config;
    return path;
}

// ratelimitd with the gRPC listener and `extra` arguments, started and listening; its HTTP
// listener (and /metrics) on http_port.
struct TlsServer {
    explicit TlsServer(const std::vector<std::string>& extra) {
        using namespace std::chrono_literals;
        const auto path = write_config("grpc-tls");
        std::vector<std::string> argv{RATELIMITD_BINARY, "--config", path, "--listen",
                                      "127.0.0.1:" + std::to_string(http_port), "--grpc-listen", "127.0.0.1:0"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        child = Child(argv, path + ".log");
        port = grpc_port_from_log(child.wait_for_log("grpc listening on", process_start_bound));
        if (port == 0) throw std::runtime_error("ratelimitd did not start: " + child.log());
    }
    unsigned short http_port = free_port();
    Child child;
    unsigned short port = 0;
};

// A TLS client: trusts `ca`, shows `client` when given; a channel of its own (no connection
// shared with another test client, so every call is a new handshake), checking the server's
// name "localhost".
struct TlsClient {
    TlsClient(unsigned short port, const std::string& ca, const PemPair* client = nullptr) {
        grpc::SslCredentialsOptions ssl;
        ssl.pem_root_certs = read(ca);
        if (client) {
            ssl.pem_cert_chain = read(client->cert);
            ssl.pem_private_key = read(client->key);
        }
        grpc::ChannelArguments args;
        args.SetSslTargetNameOverride("localhost");
        args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
        channel = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port), grpc::SslCredentials(ssl), args);
        stub = envoy::service::ratelimit::v3::RateLimitService::NewStub(channel);
    }
    // The call's status (OK: served).
    grpc::Status call() const {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
        RlsResponse res;
        return stub->ShouldRateLimit(&ctx, rls_request("edge", {Descriptor{{{"k", "v"}}, {}}}), &res);
    }
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<envoy::service::ratelimit::v3::RateLimitService::Stub> stub;
};

}  // namespace ratelimitd::test
