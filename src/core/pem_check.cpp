// read_pem_file, pem_pair_refusal, pem_bundle_refusal: OpenSSL parses every certificate of a
// file and the key from memory, so what is checked is exactly the bytes later handed on.
#include "ratelimitd/core/pem_check.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

namespace ratelimitd {

namespace {

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using Cert = std::unique_ptr<X509, decltype(&X509_free)>;
using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

// Far above any certificate bundle.
constexpr std::size_t max_file_bytes = 1024 * 1024;

// An encrypted key is refused, not prompted for on the terminal: there is no passphrase setting.
int no_passphrase(char*, int, int, void*) { return -1; }

Bio memory_bio(const std::string& bytes) {
    return Bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())), &BIO_free);
}

// Every certificate of `pem`, in order; nothing when one of them does not parse (a file cut
// in the middle of a block), as opposed to the clean end after the last block.
std::optional<std::vector<Cert>> certificates(const std::string& pem) {
    auto bio = memory_bio(pem);
    std::vector<Cert> out;
    ERR_clear_error();
    while (true) {
        Cert cert{PEM_read_bio_X509(bio.get(), nullptr, &no_passphrase, nullptr), &X509_free};
        if (!cert) break;
        out.push_back(std::move(cert));
    }
    const unsigned long error = ERR_peek_last_error();
    ERR_clear_error();
    const bool clean_end = ERR_GET_LIB(error) == ERR_LIB_PEM && ERR_GET_REASON(error) == PEM_R_NO_START_LINE;
    if (!clean_end) return std::nullopt;
    return out;
}

Key private_key(const std::string& pem) {
    auto bio = memory_bio(pem);
    Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, &no_passphrase, nullptr), &EVP_PKEY_free);
    ERR_clear_error();
    return key;
}

// The first refusal of a read: unreadable, or empty (gRPC aborts the process on an empty key).
std::optional<std::string> read_refusal(const PemFile& f) {
    if (!f.read.bytes) return f.read.refusal;
    if (f.read.bytes->empty()) return f.setting + ": " + f.path + " is empty";
    return std::nullopt;
}

// The file's certificates, or the refusal naming it.
std::optional<std::string> chain_refusal(const PemFile& f, std::vector<Cert>& chain) {
    auto parsed = certificates(*f.read.bytes);
    if (!parsed) return f.setting + ": " + f.path + " holds a PEM certificate that does not parse (cut short?)";
    if (parsed->empty()) return f.setting + ": " + f.path + " holds no PEM certificate";
    chain = std::move(*parsed);
    return std::nullopt;
}

PemRead unreadable(const std::string& setting, const std::string& path, const std::string& why) {
    return {std::nullopt, setting + ": cannot read " + path + ": " + why};
}

}  // namespace

PemRead read_pem_file(const std::string& setting, const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return unreadable(setting, path, std::strerror(errno));
    std::string bytes(max_file_bytes + 1, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (in.bad()) return unreadable(setting, path, std::strerror(errno));
    bytes.resize(static_cast<std::size_t>(in.gcount()));
    if (bytes.size() > max_file_bytes) return unreadable(setting, path, "larger than 1 MiB");
    return {std::move(bytes), {}};
}

std::optional<std::string> pem_pair_refusal(const PemFile& cert, const PemFile& key) {
    if (auto refusal = read_refusal(cert)) return refusal;
    if (auto refusal = read_refusal(key)) return refusal;
    std::vector<Cert> chain;
    if (auto refusal = chain_refusal(cert, chain)) return refusal;
    const auto pkey = private_key(*key.read.bytes);
    if (!pkey) return key.setting + ": " + key.path + " holds no unencrypted PEM private key";
    if (X509_check_private_key(chain.front().get(), pkey.get()) != 1) {
        ERR_clear_error();
        return key.setting + ": " + key.path + " does not match the certificate in " + cert.setting + " " + cert.path;
    }
    return std::nullopt;
}

std::optional<std::string> pem_bundle_refusal(const PemFile& bundle) {
    if (auto refusal = read_refusal(bundle)) return refusal;
    std::vector<Cert> certs;
    return chain_refusal(bundle, certs);
}

}  // namespace ratelimitd
