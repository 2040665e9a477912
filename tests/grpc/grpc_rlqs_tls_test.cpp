// Who may open a quota stream: with grpc_tls_client_ca, only a client showing a certificate
// the CA signed and carrying the SAN asked for, as for ShouldRateLimit (the same listener and
// credentials); a client without one, with another CA's or in plaintext gets no stream.
#include "grpc/grpc_tls_certs.hpp"
#include "grpc/grpc_tls_server.hpp"
#include "support/quota_client.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ratelimitd::test::grpc_rlqs_tls_test {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> mtls_args(const GrpcTlsCerts& certs) {
    return {"--grpc-tls", "on", "--grpc-tls-cert", certs.server().cert, "--grpc-tls-key", certs.server().key,
            "--grpc-tls-client-ca", certs.ca().cert, "--grpc-tls-client-san", "envoy.test"};
}

/// The stream's status after one report, and whether the report was answered.
std::pair<grpc::Status, bool> one_report(std::shared_ptr<grpc::Channel> channel) {
    QuotaStreamClient stream(std::move(channel), 5s);
    // The config names no rlqs: domain: an answered report is abandon_action.
    stream.send(quota_report("web", {{{{"kind", "api"}}, 1, 0}}));
    const auto answer = stream.read();
    const bool abandoned = answer && answer->bucket_action_size() == 1 && answer->bucket_action(0).has_abandon_action();
    return {stream.finish(), abandoned};
}

TEST(RlqsTls, OnlyAClientWithTheRightCertificateHoldsAStream) {
    GrpcTlsCerts certs;
    TlsServer server(mtls_args(certs));
    auto [status, answered] = one_report(TlsClient(server.port, certs.ca().cert, &certs.client()).channel);
    EXPECT_TRUE(status.ok()) << status.error_message() << "\n" << server.child.log();
    EXPECT_TRUE(answered);
    std::tie(status, answered) = one_report(TlsClient(server.port, certs.ca().cert).channel);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << "no client certificate";
    EXPECT_FALSE(answered);
    std::tie(status, answered) = one_report(TlsClient(server.port, certs.ca().cert, &certs.other_ca_client()).channel);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << "a certificate another CA signed";
    EXPECT_FALSE(answered);
    std::tie(status, answered) = one_report(QuotaStreamClient::channel_to(server.port));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << "plaintext";
    EXPECT_FALSE(answered);
}

}  // namespace
}  // namespace ratelimitd::test::grpc_rlqs_tls_test
