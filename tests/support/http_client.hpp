// A blocking HTTP/1.1 client for tests, one keep-alive connection per object.
#pragma once

#include <map>
#include <string>

namespace ratelimitd::test {

struct HttpResponse {
    int status = 0;
    std::map<std::string, std::string> headers;  ///< lower-case names
    std::string body;

    /// The header value, or "" when absent.
    std::string header(const std::string& lower_name) const {
        auto it = headers.find(lower_name);
        return it == headers.end() ? std::string{} : it->second;
    }
};

class HttpClient {
public:
    explicit HttpClient(unsigned short port);
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    HttpResponse get(const std::string& target, const std::map<std::string, std::string>& headers = {});
    HttpResponse post(const std::string& target, const std::string& body,
                      const std::map<std::string, std::string>& headers = {});
    HttpResponse request(const std::string& method, const std::string& target, const std::string& body,
                         const std::map<std::string, std::string>& headers);

private:
    struct Impl;
    Impl* impl_;
};

}  // namespace ratelimitd::test
