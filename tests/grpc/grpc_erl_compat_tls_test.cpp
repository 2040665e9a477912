// envoyproxy/ratelimit's gRPC TLS integration tests (test/integration/integration_test.go:
// Test_mTLS, TestReloadGRPCServerCerts) in ERL mode: the server's certificate, the client CA
// and SAN from its GRPC_SERVER_TLS_* / GRPC_CLIENT_TLS_* variables, certificates made for the
// run, a TLS client built from Envoy's protos. Test names: ErlCompat.Integration_<its Go test>.
#include "grpc/erl_mode_fixture.hpp"
#include "grpc/grpc_tls_certs.hpp"
#include "grpc/grpc_tls_server.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace ratelimitd::test::grpc_erl_compat_tls_test {
namespace {

namespace fs = std::filesystem;

class ErlCompatTls : public ErlModeTest {
protected:
    /// The server's pair, copied where the test may replace it as a Secret update would.
    void serve_tls(const PemPair& pair) {
        fs::create_directories(dir_ / "tls");
        served_ = {(dir_ / "tls" / "server.crt").string(), (dir_ / "tls" / "server.key").string()};
        fs::copy_file(pair.cert, served_.cert);
        fs::copy_file(pair.key, served_.key);
        vars_["GRPC_SERVER_USE_TLS"] = "true";
        vars_["GRPC_SERVER_TLS_CERT"] = served_.cert;
        vars_["GRPC_SERVER_TLS_KEY"] = served_.key;
        ASSERT_NO_FATAL_FAILURE(serve());
    }
    bool served_to(const std::string& ca, const PemPair* client = nullptr) const {
        return TlsClient(port("GRPC_PORT"), ca, client).call().ok();
    }

    GrpcTlsCerts certs_;
    PemPair served_;
};

// Test_mTLS: a client with a certificate from the client CA and the SAN asked for is served;
// one without a certificate, or with another SAN, is not.
TEST_F(ErlCompatTls, Integration_Test_mTLS) {
    vars_["GRPC_CLIENT_TLS_CACERT"] = certs_.ca().cert;
    vars_["GRPC_CLIENT_TLS_SAN"] = "envoy.test";
    ASSERT_NO_FATAL_FAILURE(serve_tls(certs_.server()));
    EXPECT_TRUE(served_to(certs_.ca().cert, &certs_.client())) << process_.log();
    EXPECT_FALSE(served_to(certs_.ca().cert)) << "no client certificate";
    EXPECT_FALSE(served_to(certs_.ca().cert, &certs_.wrong_san_client())) << "another SAN";
}

// TestReloadGRPCServerCerts: served from the first CA's pair; once another CA's pair is renamed
// over it, clients trusting the new CA are served and those trusting the first are not.
TEST_F(ErlCompatTls, Integration_TestReloadGRPCServerCerts) {
    ASSERT_NO_FATAL_FAILURE(serve_tls(certs_.server()));
    EXPECT_TRUE(served_to(certs_.ca().cert)) << "WithInitialCert\n" << process_.log();
    EXPECT_FALSE(served_to(certs_.other_ca().cert)) << "WithNewCertFail";
    fs::copy_file(certs_.other_server().cert, dir_ / "tls" / "next.crt");
    fs::copy_file(certs_.other_server().key, dir_ / "tls" / "next.key");
    fs::rename(dir_ / "tls" / "next.crt", served_.cert);
    fs::rename(dir_ / "tls" / "next.key", served_.key);
    EXPECT_TRUE(wait_until([&] { return served_to(certs_.other_ca().cert); }, process_start_bound))
        << "WithNewCertOK\n" << process_.log();
    EXPECT_FALSE(served_to(certs_.ca().cert)) << "WithInitialCertFail";
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_compat_tls_test
