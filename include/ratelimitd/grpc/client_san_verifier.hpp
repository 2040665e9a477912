// grpc_tls_client_san: the verified client certificate must carry one name.
#pragma once

#include <grpcpp/security/tls_certificate_verifier.h>

#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::rls {

/// The subject alternative names of a certificate, as gRPC hands them over.
struct SubjectAltNames {
    std::vector<std::string> dns{};
    std::vector<std::string> ips{};  ///< text form ("10.0.0.1", "::1")
    std::vector<std::string> uris{};
};

/// Whether `names` carry `wanted`, compared as envoyproxy/ratelimit compares GRPC_CLIENT_TLS_SAN
/// (a host name check of Go's x509): an IP address against the IP SANs (as addresses, so
/// "::1" and "0:0::1" are one); a name against the DNS SANs, ignoring ASCII case and one
/// trailing dot, where a SAN's leftmost label "*" stands for exactly one label
/// ("*.envoy.test" carries "a.envoy.test", not "envoy.test" nor "a.b.envoy.test"). Beyond
/// ERL, a value with ':' that is no IP address is a URI (a SPIFFE id, "spiffe://td/ns/x/sa/y"),
/// compared byte for byte with the URI SANs. The subject's CN is never looked at.
bool carries_san(const SubjectAltNames& names, std::string_view wanted);

/// The check gRPC runs after it has verified the client's chain against grpc_tls_client_ca:
/// the handshake fails (the client sees UNAVAILABLE) when the certificate lacks the name.
/// Made with grpc::experimental::ExternalCertificateVerifier::Create<ClientSanVerifier>(san).
/// @par Thread Safety
/// Verify runs on gRPC's threads, any number at once; the object is immutable.
class ClientSanVerifier final : public grpc::experimental::ExternalCertificateVerifier {
public:
    explicit ClientSanVerifier(std::string san) : san_(std::move(san)) {}

    /// Synchronous: true, with `sync_status` OK or UNAUTHENTICATED naming the SAN wanted.
    bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request,
                std::function<void(grpc::Status)> callback, grpc::Status* sync_status) override;
    /// Nothing is pending: Verify never answers later.
    void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest*) override {}

private:
    std::string san_;
};

}  // namespace ratelimitd::rls
