// normalize_path: the path routes are matched on, one spelling for every way of writing it.
#include "ratelimitd/policy/path.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using ratelimitd::policy::normalize_path;

TEST(NormalizePath, DropsQueryAndFragment) {
    EXPECT_EQ(normalize_path("/login?next=/admin"), "/login");
    EXPECT_EQ(normalize_path("/login#top"), "/login");
    EXPECT_EQ(normalize_path("/v1/orders?page=2&x=%2F"), "/v1/orders");
}

TEST(NormalizePath, DecodesPercentEscapes) {
    EXPECT_EQ(normalize_path("/%6cogin"), "/login");
    EXPECT_EQ(normalize_path("/%6C%6F%67%69%6E"), "/login");
    EXPECT_EQ(normalize_path("/a%2Fb"), "/a/b");
    // Not an escape: the '%' is data, written %25 so that normalising again changes nothing.
    EXPECT_EQ(normalize_path("/bad%zzescape%4"), "/bad%25zzescape%254");
}

TEST(NormalizePath, ResolvesDotSegmentsAndMergesSlashes) {
    EXPECT_EQ(normalize_path("//login"), "/login");
    EXPECT_EQ(normalize_path("/x/../login"), "/login");
    EXPECT_EQ(normalize_path("/./login"), "/login");
    EXPECT_EQ(normalize_path("/%2e%2e/%2e/login"), "/login");
    EXPECT_EQ(normalize_path("/../../login"), "/login");  // never above the root
    EXPECT_EQ(normalize_path("/v1//orders///7"), "/v1/orders/7");
}

TEST(NormalizePath, KeepsATrailingSlash) {
    EXPECT_EQ(normalize_path("/"), "/");
    EXPECT_EQ(normalize_path("/v1/"), "/v1/");
    EXPECT_EQ(normalize_path("/v1/x/.."), "/v1/");
    EXPECT_EQ(normalize_path("/v1/."), "/v1/");
    EXPECT_EQ(normalize_path(""), "/");
}

TEST(NormalizePath, AbsoluteFormKeepsOnlyThePath) {
    EXPECT_EQ(normalize_path("http://api.example.com/login?x"), "/login");
    EXPECT_EQ(normalize_path("HTTPS://api.example.com"), "/");
    EXPECT_EQ(normalize_path("login"), "/login");
}

//------------------------------------------------------------------------------
// The table: every row is one spelling and the one path it means.

struct Row {
    std::string in;
    std::string out;
};

const std::vector<Row> rows = {
    // the bypass spellings of issue 17, each the /login a backend serves
    {"/login", "/login"},
    {"/login/", "/login/"},  // routes match with or without the trailing slash
    {"//login", "/login"},
    {"/LOGIN", "/LOGIN"},    // case is kept: case_insensitive routes fold it
    {"/login;jsessionid=x", "/login"},
    {"/%6Cogin", "/login"},
    {"/a/../login", "/login"},
    // parameters per segment, also in front of dot segments (Tomcat's "/..;/")
    {"/a;x/b;y=1,2", "/a/b"},
    {"/admin/..;/login", "/login"},
    {"/login;", "/login"},
    {"/;x/login", "/login"},
    {"/login/;x", "/login/"},
    {"/login%3Bx", "/login"},  // decoded ';' is a parameter too
    // unreserved escapes decode, hex in either case
    {"/%7Euser/%41%62%2D%2e%5F", "/~user/Ab-._"},
    {"/%7euser", "/~user"},
    // reserved and other bytes: decoded once, then written in one canonical way
    {"/a%2Fb", "/a/b"},
    {"/a%2fb", "/a/b"},
    {"/a%2F..%2Flogin", "/login"},
    {"/x%2F%2F%2Flogin", "/x/login"},
    {"/q%3Fx", "/q%3Fx"},
    {"/h%23x", "/h%23x"},
    {"/p%25", "/p%25"},
    {"/p%2541", "/p%2541"},  // decoded once: "%41" stays data, never becomes 'A'
    {"/%%34%31", "/%2541"},  // a lone '%' is data; %34%31 decode to "41", never re-read
    {"/s%20p", "/s%20p"},
    {"/s p", "/s%20p"},
    {"/a%2cb%3d%40%3a", "/a,b=@:"},
    {"/%21%24%26%27%28%29%2A%2B", "/!$&'()*+"},
    {"/v1/*", "/v1/*"},
    // hostile bytes
    {std::string("/nul%00/login"), "/nul%00/login"},
    {std::string("/nul\0x", 6) + "/login", "/nul%00x/login"},
    {"/ctl%0d%0aSet-Cookie:x", "/ctl%0D%0ASet-Cookie:x"},
    {"/%7F", "/%7F"},
    {"/caf\xc3\xa9", "/caf%C3%A9"},
    {"/caf%c3%a9", "/caf%C3%A9"},
    {"/%c0%ae%c0%ae/login", "/%C0%AE%C0%AE/login"},  // overlong UTF-8 '.' is data, not a dot
    {"/%e0%80%ae%e0%80%ae/x", "/%E0%80%AE%E0%80%AE/x"},
    {"/..%5C..%5Clogin", "/..%5C..%5Clogin"},  // backslash is data, as nginx on Linux reads it
    {"/a\\..\\login", "/a%5C..%5Clogin"},
    {"/%2e%2e", "/"},
    {"/%2E%2E/%2e/login", "/login"},
    {"/.%2e/login", "/login"},
    {"/%2e%2e%2flogin", "/login"},
    {"/...", "/..."},
    {"/.../login", "/.../login"},
    {"/a/b/../../../../../../login", "/login"},
    {"/a/./b/./../c", "/a/c"},
    {"/a/..", "/"},
    {"/a/b/..", "/a/"},
    {"/%", "/%25"},
    {"/%4", "/%254"},
    {"/%G0", "/%25G0"},
    {"%2Flogin", "/login"},
    // absolute-form, asterisk-form, relative
    {"http://h/login", "/login"},
    {"HTTP://H:8080/a/../login?x=1", "/login"},
    {"https://user@h/login#f", "/login"},
    {"ws://h/login", "/login"},
    {"http://h?/login", "/"},
    {"http://h", "/"},
    {"http:/login", "/http:/login"},
    {"*", "/*"},
    {"login", "/login"},
    {"./login", "/login"},
    {"../login", "/login"},
    {"?x=/login", "/"},
    {"#/login", "/"},
};

TEST(NormalizePath, Table) {
    for (const auto& row : rows) {
        EXPECT_EQ(normalize_path(row.in), row.out) << "input: " << row.in;
    }
}

TEST(NormalizePath, TableOutputsAreFixedPoints) {
    for (const auto& row : rows) EXPECT_EQ(normalize_path(row.out), row.out) << "output: " << row.out;
}

TEST(PathAsSent, DecodesButResolvesNothing) {
    using ratelimitd::policy::path_as_sent;
    EXPECT_EQ(path_as_sent("/v1/../health?x"), "/v1/../health");
    EXPECT_EQ(path_as_sent("/v1%2F%2e%2e%2Fhealth"), "/v1/../health");
    EXPECT_EQ(path_as_sent("//a;b=c/./d"), "//a;b=c/./d");
    EXPECT_EQ(path_as_sent("/%76%31/%25%3F x"), "/v1/%25%3F%20x");
    EXPECT_EQ(path_as_sent("http://h/a/../b"), "/a/../b");
    EXPECT_EQ(path_as_sent("a"), "/a");
    EXPECT_EQ(path_as_sent(""), "/");
}

TEST(NormalizePath, HugeHostileInputsStayLinear) {
    std::string deep;
    for (int i = 0; i < 20000; ++i) deep += "/a/..%2F%2e%2e;x";
    EXPECT_EQ(normalize_path(deep + "/login"), "/login");
    const std::string escapes(60000, '%');
    EXPECT_EQ(normalize_path("/" + escapes).size(), 1 + 3 * escapes.size());
}

// The paths route matching reads as they are: exactly those both readings leave unchanged.
TEST(IsNormalPath, TrueExactlyWhereBothReadingsAreThePathItself) {
    using ratelimitd::policy::is_normal_path;
    using ratelimitd::policy::path_as_sent;
    struct Case {
        const char* path;
        bool normal;
    };
    const Case cases[] = {
        {"/", true}, {"/login", true}, {"/v1/items/42", true}, {"/v1/", true}, {"/a/.b/..c/...", true},
        {"/~u/a-b_c.d!$&'()*+,=:@", true}, {"", false}, {"login", false}, {"//login", false},
        {"/a//b", false}, {"/a/./b", false}, {"/a/../b", false}, {"/a/.", false}, {"/a/..", false},
        {"/.", false}, {"/%6cogin", false}, {"/login;x", false}, {"/a?q", false}, {"/a#f", false},
        {"/a b", false}, {"/a\\b", false}, {"/caf\xc3\xa9", false}, {"http://h/a", false}, {"/a/%2e%2e/b", false},
    };
    for (const auto& c : cases) {
        EXPECT_EQ(is_normal_path(c.path), c.normal) << c.path;
        // What is_normal_path promises: both readings give the path back.
        if (c.normal) {
            EXPECT_EQ(normalize_path(c.path), c.path);
            EXPECT_EQ(path_as_sent(c.path), c.path);
        }
    }
    // Every normal form normalize_path writes is one (the table's outputs).
    for (const auto& row : rows) {
        if (is_normal_path(row.out)) {
            EXPECT_EQ(path_as_sent(row.out), row.out) << row.out;
        }
    }
}

}  // namespace
