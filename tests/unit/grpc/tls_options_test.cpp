// tls_refusal's pairing rules, before any file is read (the files' own refusals run against
// the real binary in tests/grpc/grpc_tls_test.cpp).
#include "ratelimitd/grpc/tls_options.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::rls {
namespace {

TEST(GrpcTlsOptions, NothingSetIsPlaintextAndServes) {
    EXPECT_FALSE(GrpcTlsOptions{}.any_set());
    EXPECT_EQ(tls_refusal(GrpcTlsOptions{}), std::nullopt);
}

TEST(GrpcTlsOptions, FilesWithoutTlsOnAreRefusedNamingTheSetting) {
    GrpcTlsOptions o;
    o.client_san = "envoy.test";
    EXPECT_TRUE(o.any_set());
    EXPECT_EQ(tls_refusal(o).value_or("").rfind("grpc_tls_client_san is set but grpc_tls is off", 0), 0u);
    o.cert_file = "/c.pem";
    EXPECT_EQ(tls_refusal(o).value_or("").rfind("grpc_tls_cert is set but grpc_tls is off", 0), 0u);
}

TEST(GrpcTlsOptions, TlsNeedsBothFilesAndASanNeedsTheClientCa) {
    GrpcTlsOptions o{.enabled = true};
    EXPECT_EQ(tls_refusal(o).value_or("").rfind("grpc_tls is on but grpc_tls_cert is not set", 0), 0u);
    o.cert_file = "/c.pem";
    EXPECT_EQ(tls_refusal(o).value_or("").rfind("grpc_tls is on but grpc_tls_key is not set", 0), 0u);
    o.key_file = "/k.pem";
    o.client_san = "envoy.test";
    EXPECT_EQ(tls_refusal(o).value_or("").rfind("grpc_tls_client_san needs grpc_tls_client_ca", 0), 0u);
    o.client_san.clear();
    EXPECT_EQ(tls_refusal(o).value_or(""), "grpc_tls_cert: cannot read /c.pem: No such file or directory");
}

}  // namespace
}  // namespace ratelimitd::rls
