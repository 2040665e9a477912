// ClientSanVerifier: the certificate's SANs from gRPC's request, compared with the one wanted.
#include "ratelimitd/grpc/client_san_verifier.hpp"

#include <spdlog/spdlog.h>

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

namespace ratelimitd::rls {

namespace {

// An IPv4 or IPv6 address as 16 bytes (IPv4 first in its 4), or nothing when it is no address.
std::optional<std::array<unsigned char, 17>> ip_bytes(std::string_view text) {
    const std::string s(text);
    std::array<unsigned char, 17> out{};
    if (inet_pton(AF_INET, s.c_str(), out.data()) == 1) return out;
    out[16] = 6;  // v6 and v4 never compare equal
    if (inet_pton(AF_INET6, s.c_str(), out.data()) == 1) return out;
    return std::nullopt;
}

std::string_view without_trailing_dot(std::string_view name) {
    if (!name.empty() && name.back() == '.') name.remove_suffix(1);
    return name;
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

// A DNS SAN (maybe "*.suffix") against a host name.
bool dns_san_matches(std::string_view san, std::string_view host) {
    san = without_trailing_dot(san);
    host = without_trailing_dot(host);
    if (san.empty() || host.empty()) return false;
    if (!san.starts_with("*.")) return equal_ignoring_case(san, host);
    const auto dot = host.find('.');
    if (dot == 0 || dot == std::string_view::npos) return false;  // "*" stands for one whole label
    return equal_ignoring_case(san.substr(1), host.substr(dot));
}

std::vector<std::string> to_strings(const std::vector<grpc::string_ref>& refs) {
    std::vector<std::string> out;
    out.reserve(refs.size());
    for (const auto& r : refs) out.emplace_back(r.data(), r.size());
    return out;
}

}  // namespace

bool carries_san(const SubjectAltNames& names, std::string_view wanted) {
    if (wanted.empty()) return false;
    if (const auto ip = ip_bytes(wanted)) {
        return std::any_of(names.ips.begin(), names.ips.end(),
                           [&](const std::string& san) { return ip_bytes(san) == ip; });
    }
    if (wanted.find(':') != std::string_view::npos) {
        return std::find(names.uris.begin(), names.uris.end(), wanted) != names.uris.end();
    }
    return std::any_of(names.dns.begin(), names.dns.end(),
                       [&](const std::string& san) { return dns_san_matches(san, wanted); });
}

bool ClientSanVerifier::Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request,
                               std::function<void(grpc::Status)> /*callback*/, grpc::Status* sync_status) {
    const SubjectAltNames names{.dns = to_strings(request->dns_names()),
                                .ips = to_strings(request->ip_names()),
                                .uris = to_strings(request->uri_names())};
    if (carries_san(names, san_)) {
        *sync_status = grpc::Status::OK;
        return true;
    }
    spdlog::debug("grpc TLS: a client certificate without the SAN {} was refused", san_);
    *sync_status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                                "the client certificate does not carry the SAN grpc_tls_client_san names");
    return true;
}

}  // namespace ratelimitd::rls
