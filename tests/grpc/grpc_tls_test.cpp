// Issue 35 item 4: TLS on the gRPC listener, with client certificates. A real grpc++ client
// (TLS channel credentials) against the real binary: a client certificate the CA signed, with
// the SAN asked for, is served; none, one from another CA, one without the SAN and plaintext
// are refused; server-only TLS serves any TLS client and refuses plaintext; certificates and
// client CAs replaced on disk are used without a restart; a client stalled in the TLS
// handshake is closed by the handshake deadline while others are served, and the connection
// cap holds; bad settings stop the start.
#include "grpc/grpc_tls_certs.hpp"
#include "grpc/grpc_tls_server.hpp"
#include "support/processes.hpp"
#include "support/raw_connection.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ratelimitd::test::grpc_tls_test {
namespace {

using namespace std::chrono_literals;

std::string describe(const grpc::Status& s) { return std::to_string(s.error_code()) + " " + s.error_message(); }

std::vector<std::string> mtls_args(const GrpcTlsCerts& certs) {
    return {"--grpc-tls", "on", "--grpc-tls-cert", certs.server().cert, "--grpc-tls-key", certs.server().key,
            "--grpc-tls-client-ca", certs.ca().cert, "--grpc-tls-client-san", "envoy.test"};
}

TEST(GrpcTls, ClientCertificateFromTheCaWithTheSanIsServed) {
    GrpcTlsCerts certs;
    TlsServer server(mtls_args(certs));
    EXPECT_NE(server.child.log().find("tls=on client_certificates=required"), std::string::npos) << server.child.log();
    const auto status = TlsClient(server.port, certs.ca().cert, &certs.client()).call();
    EXPECT_TRUE(status.ok()) << describe(status) << "\n" << server.child.log();
}

TEST(GrpcTls, ClientsWithoutTheRightCertificateAreRefused) {
    GrpcTlsCerts certs;
    TlsServer server(mtls_args(certs));
    EXPECT_EQ(TlsClient(server.port, certs.ca().cert).call().error_code(), grpc::StatusCode::UNAVAILABLE)
        << "no client certificate";
    EXPECT_EQ(TlsClient(server.port, certs.ca().cert, &certs.other_ca_client()).call().error_code(),
              grpc::StatusCode::UNAVAILABLE)
        << "a certificate another CA signed";
    EXPECT_EQ(TlsClient(server.port, certs.ca().cert, &certs.wrong_san_client()).call().error_code(),
              grpc::StatusCode::UNAVAILABLE)
        << "the CA's certificate without the SAN";
    RlsResponse res;
    EXPECT_EQ(RlsClient(server.port).call(rls_request("edge", {Descriptor{{{"k", "v"}}, {}}}), res, 3s).error_code(),
              grpc::StatusCode::UNAVAILABLE)
        << "plaintext";
    // The server is unharmed: the right client still gets its answer.
    EXPECT_TRUE(TlsClient(server.port, certs.ca().cert, &certs.client()).call().ok()) << server.child.log();
}

TEST(GrpcTls, TheSanMayBeAUri) {
    GrpcTlsCerts certs;
    auto args = mtls_args(certs);
    args.back() = "spiffe://test/envoy";
    TlsServer server(args);
    EXPECT_TRUE(TlsClient(server.port, certs.ca().cert, &certs.client()).call().ok()) << server.child.log();
    EXPECT_FALSE(TlsClient(server.port, certs.ca().cert, &certs.wrong_san_client()).call().ok());
}

TEST(GrpcTls, ServerOnlyTlsServesTlsClientsAndRefusesPlaintext) {
    GrpcTlsCerts certs;
    TlsServer server(
        {"--grpc-tls", "on", "--grpc-tls-cert", certs.server().cert, "--grpc-tls-key", certs.server().key});
    const auto status = TlsClient(server.port, certs.ca().cert).call();
    EXPECT_TRUE(status.ok()) << describe(status) << "\n" << server.child.log();
    EXPECT_TRUE(TlsClient(server.port, certs.ca().cert, &certs.other_ca_client()).call().ok())
        << "no client certificate is asked for";
    RlsResponse res;
    EXPECT_FALSE(RlsClient(server.port).call(rls_request("edge", {Descriptor{{{"k", "v"}}, {}}}), res, 3s).ok());
    EXPECT_FALSE(TlsClient(server.port, certs.other_ca().cert).call().ok()) << "the client checks the server";
}

TEST(GrpcTls, PlaintextStaysTheDefault) {
    TlsServer server({});
    EXPECT_NE(server.child.log().find("tls=off"), std::string::npos) << server.child.log();
    EXPECT_EQ(RlsClient(server.port).health(), grpc::health::v1::HealthCheckResponse::SERVING);
}

// Replaced as Kubernetes replaces a mounted Secret: the new file renamed over the old one.
void replace(const std::string& from, const std::string& to) {
    const auto staged = to + ".new";
    std::filesystem::copy_file(from, staged, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::rename(staged, to);
}

TEST(GrpcTls, CertificatesReplacedOnDiskAreServedWithoutARestart) {
    GrpcTlsCerts certs;
    const auto cert = certs.dir() + "/served.crt";
    const auto key = certs.dir() + "/served.key";
    std::filesystem::copy_file(certs.server().cert, cert);
    std::filesystem::copy_file(certs.server().key, key);
    TlsServer server({"--grpc-tls", "on", "--grpc-tls-cert", cert, "--grpc-tls-key", key,
                      "--grpc-tls-reload-interval", "1s"});
    ASSERT_TRUE(TlsClient(server.port, certs.ca().cert).call().ok()) << server.child.log();
    EXPECT_FALSE(TlsClient(server.port, certs.other_ca().cert).call().ok());
    replace(certs.other_server().key, key);
    replace(certs.other_server().cert, cert);
    // A client trusting only the other CA is served once the new pair is read.
    EXPECT_TRUE(wait_until([&] { return TlsClient(server.port, certs.other_ca().cert).call().ok(); }, 20s, 200ms))
        << server.child.log();
    EXPECT_FALSE(TlsClient(server.port, certs.ca().cert).call().ok()) << "the old certificate is no longer served";
}

TEST(GrpcTls, AClientCaReplacedOnDiskIsTrustedWithoutARestart) {
    GrpcTlsCerts certs;
    const auto client_ca = certs.dir() + "/client-ca.crt";
    std::filesystem::copy_file(certs.ca().cert, client_ca);
    TlsServer server({"--grpc-tls", "on", "--grpc-tls-cert", certs.server().cert, "--grpc-tls-key", certs.server().key,
                      "--grpc-tls-client-ca", client_ca, "--grpc-tls-reload-interval", "1s"});
    ASSERT_TRUE(TlsClient(server.port, certs.ca().cert, &certs.client()).call().ok()) << server.child.log();
    ASSERT_FALSE(TlsClient(server.port, certs.ca().cert, &certs.other_ca_client()).call().ok());
    replace(certs.other_ca().cert, client_ca);
    const auto other_ca_client_served = [&] {
        return TlsClient(server.port, certs.ca().cert, &certs.other_ca_client()).call().ok();
    };
    EXPECT_TRUE(wait_until(other_ca_client_served, 20s, 200ms))
        << server.child.log();
    EXPECT_FALSE(TlsClient(server.port, certs.ca().cert, &certs.client()).call().ok())
        << "the old CA is no longer trusted";
}

TEST(GrpcTls, AStalledTlsHandshakeIsClosedByTheDeadlineWhileOthersAreServed) {
    GrpcTlsCerts certs;
    auto args = mtls_args(certs);
    args.insert(args.end(), {"--grpc-handshake-timeout", "500ms"});
    TlsServer server(args);
    RawConnection silent(server.port);  // connects and says nothing
    RawConnection stalled(server.port);
    // The first bytes of a TLS record (handshake, ClientHello of 512 bytes) and then nothing.
    stalled.send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11));
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(TlsClient(server.port, certs.ca().cert, &certs.client()).call().ok()) << server.child.log();
    EXPECT_TRUE(silent.closed_within(5s)) << "the handshake deadline";
    EXPECT_TRUE(stalled.closed_within(5s)) << "the handshake deadline, mid-handshake";
    EXPECT_GE(std::chrono::steady_clock::now() - start, 400ms) << "at the deadline, not at once";
    EXPECT_TRUE(TlsClient(server.port, certs.ca().cert, &certs.client()).call().ok());
}

TEST(GrpcTls, TheConnectionCapHoldsWithTls) {
    GrpcTlsCerts certs;
    auto args = mtls_args(certs);
    args.insert(args.end(), {"--grpc-max-connections", "2", "--grpc-handshake-timeout", "6s"});
    TlsServer server(args);
    // Both say nothing: they hold the cap until the deadline, past the 3 s of a call's deadline.
    RawConnection first(server.port);
    RawConnection second(server.port);
    RawConnection third(server.port);
    EXPECT_TRUE(third.closed_within(3s)) << "over the cap: closed at once, not at the deadline";
    EXPECT_FALSE(first.closed_within(0ms));
    EXPECT_FALSE(second.closed_within(0ms));
    EXPECT_FALSE(TlsClient(server.port, certs.ca().cert, &certs.client()).call().ok()) << "the cap is reached";
    EXPECT_TRUE(first.closed_within(10s));
    EXPECT_TRUE(second.closed_within(10s));
    // The listener counts closed connections out when one arrives at the cap, at most every
    // 50 ms (ConnectionLedger::rescan_interval), so a call right after the closes may still
    // meet the cap (a busy machine widens that moment): the slots come back soon after.
    EXPECT_TRUE(wait_until([&] { return TlsClient(server.port, certs.ca().cert, &certs.client()).call().ok(); },
                           20s, 100ms))
        << server.child.log();
}

// The process exits non-zero at start with a line holding `expected`, and no key material.
void expect_refused(const std::vector<std::string>& extra, const std::string& expected, const GrpcTlsCerts& certs,
                    bool grpc = true) {
    const auto path = write_config("grpc-tls-refused");
    std::vector<std::string> argv{RATELIMITD_BINARY, "--config", path, "--listen", "127.0.0.1:0"};
    if (grpc) argv.insert(argv.end(), {"--grpc-listen", "127.0.0.1:0"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    Child child(argv, path + ".log");
    EXPECT_EQ(child.wait(process_start_bound), 1) << expected << "\n" << child.log();
    const auto log = child.log();
    EXPECT_NE(log.find(expected), std::string::npos) << log;
    EXPECT_EQ(log.find("grpc listening on"), std::string::npos) << log;
    // No line of the key file (its PEM body) is echoed.
    std::istringstream key(read(certs.server().key));
    for (std::string line; std::getline(key, line);) {
        if (line.size() > 20 && line.find("-----") == std::string::npos) {
            EXPECT_EQ(log.find(line), std::string::npos);
        }
    }
}

TEST(GrpcTls, BadSettingsAreRefusedAtStartByName) {
    GrpcTlsCerts certs;
    const auto& s = certs.server();
    const std::string on = "on";
    expect_refused({"--grpc-tls", on, "--grpc-tls-cert", s.cert}, "grpc_tls is on but grpc_tls_key is not set", certs);
    expect_refused({"--grpc-tls", on, "--grpc-tls-key", s.key}, "grpc_tls is on but grpc_tls_cert is not set", certs);
    expect_refused({"--grpc-tls", on, "--grpc-tls-cert", s.cert, "--grpc-tls-key", certs.dir() + "/missing.key"},
                   "grpc_tls_key: cannot read " + certs.dir() + "/missing.key: No such file or directory", certs);
    expect_refused({"--grpc-tls", on, "--grpc-tls-cert", s.cert, "--grpc-tls-key", certs.client().key},
                   "grpc_tls_key: " + certs.client().key + " does not match the certificate in grpc_tls_cert " + s.cert,
                   certs);
    expect_refused({"--grpc-tls", on, "--grpc-tls-cert", s.key, "--grpc-tls-key", s.key},
                   "grpc_tls_cert: " + s.key + " holds no PEM certificate", certs);
    expect_refused({"--grpc-tls", on, "--grpc-tls-cert", s.cert, "--grpc-tls-key", s.key, "--grpc-tls-client-ca",
                    s.key},
                   "grpc_tls_client_ca: " + s.key + " holds no PEM certificate", certs);
    expect_refused({"--grpc-tls", on, "--grpc-tls-cert", "/dev/zero", "--grpc-tls-key", s.key},
                   "grpc_tls_cert: cannot read /dev/zero: larger than 1 MiB", certs);
    expect_refused({"--grpc-tls-client-ca", certs.ca().cert}, "grpc_tls_client_ca is set but grpc_tls is off", certs);
    expect_refused({"--grpc-tls-cert", s.cert, "--grpc-tls-key", s.key}, "grpc_tls_cert is set but grpc_tls is off",
                   certs);
    expect_refused({"--grpc-tls", on, "--grpc-tls-cert", s.cert, "--grpc-tls-key", s.key, "--grpc-tls-client-san",
                    "envoy.test"},
                   "grpc_tls_client_san needs grpc_tls_client_ca", certs);
    expect_refused({"--grpc-tls", on, "--grpc-tls-cert", s.cert, "--grpc-tls-key", s.key},
                   "grpc_tls settings are set but grpc_listen is not", certs, false);
}

}  // namespace
}  // namespace ratelimitd::test::grpc_tls_test
