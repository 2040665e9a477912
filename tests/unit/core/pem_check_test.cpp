// read_pem_file / pem_pair_refusal / pem_bundle_refusal on real files made with the openssl
// command: a good pair and chain pass; empty, cut short, unreadable, a key for another
// certificate and a certificate given as the key are refused by setting and path, never with
// the file's content.
#include "ratelimitd/core/pem_check.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

using ratelimitd::PemFile;
using ratelimitd::read_pem_file;

class PemCheck : public ::testing::Test {
protected:
    void SetUp() override {
        char pattern[] = "/tmp/pem-check-XXXXXX";
        if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
        dir_ = pattern;
        make("a");
        make("b");
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // A self-signed EC certificate and its key: dir/NAME.crt, dir/NAME.key.
    void make(const std::string& name) const {
        const auto command = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
                             "-subj /CN=" + name + " -keyout " + path(name + ".key") + " -out " +
                             path(name + ".crt") + " >/dev/null 2>&1";
        if (std::system(command.c_str()) != 0) throw std::runtime_error("openssl failed");
    }
    std::string path(const std::string& name) const { return dir_ + "/" + name; }
    std::string content(const std::string& name) const {
        std::ifstream in(path(name));
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }
    void write(const std::string& name, const std::string& text) const { std::ofstream(path(name)) << text; }
    PemFile file(const std::string& setting, const std::string& name) const {
        return {setting, path(name), read_pem_file(setting, path(name))};
    }
    std::optional<std::string> pair(const std::string& cert, const std::string& key) const {
        return ratelimitd::pem_pair_refusal(file("cert", cert), file("key", key));
    }

    std::string dir_;
};

TEST_F(PemCheck, AMatchingPairAndAWholeChainPass) {
    EXPECT_EQ(pair("a.crt", "a.key"), std::nullopt);
    write("chain.crt", content("a.crt") + content("b.crt"));
    EXPECT_EQ(pair("chain.crt", "a.key"), std::nullopt) << "the key matches the chain's first certificate";
    EXPECT_EQ(ratelimitd::pem_bundle_refusal(file("ca", "chain.crt")), std::nullopt);
}

TEST_F(PemCheck, AnEmptyFileIsRefusedByName) {
    write("empty.key", "");
    EXPECT_EQ(pair("a.crt", "empty.key"), "key: " + path("empty.key") + " is empty");
    EXPECT_EQ(ratelimitd::pem_bundle_refusal(file("ca", "empty.key")), "ca: " + path("empty.key") + " is empty");
}

TEST_F(PemCheck, ACertificateCutShortIsRefused) {
    write("half.crt", content("a.crt").substr(0, 300));
    EXPECT_EQ(pair("half.crt", "a.key"),
              "cert: " + path("half.crt") + " holds a PEM certificate that does not parse (cut short?)");
    // A whole first certificate does not hide a second one cut short.
    write("half-chain.crt", content("a.crt") + content("b.crt").substr(0, 300));
    EXPECT_NE(pair("half-chain.crt", "a.key"), std::nullopt);
    EXPECT_NE(ratelimitd::pem_bundle_refusal(file("ca", "half-chain.crt")), std::nullopt);
}

TEST_F(PemCheck, AKeyForAnotherCertificateIsRefused) {
    EXPECT_EQ(pair("a.crt", "b.key"), "key: " + path("b.key") + " does not match the certificate in cert " +
                                          path("a.crt"));
    EXPECT_EQ(pair("a.crt", "a.crt"), "key: " + path("a.crt") + " holds no unencrypted PEM private key");
    EXPECT_EQ(pair("a.key", "a.key"), "cert: " + path("a.key") + " holds no PEM certificate");
}

TEST_F(PemCheck, AMissingFileIsRefusedWithTheReason) {
    EXPECT_EQ(pair("a.crt", "gone.key"), "key: cannot read " + path("gone.key") + ": No such file or directory");
}

TEST_F(PemCheck, NoRefusalEchoesTheKey) {
    write("half.key", content("a.key").substr(0, 100));
    const auto refusal = pair("a.crt", "half.key");
    ASSERT_NE(refusal, std::nullopt);
    std::istringstream key(content("a.key"));
    for (std::string line; std::getline(key, line);) {
        if (line.find("-----") == std::string::npos) {
            EXPECT_EQ(refusal->find(line), std::string::npos);
        }
    }
}

}  // namespace
