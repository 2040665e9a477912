// Fuzz target: header rendering from arbitrary verdicts. No field value may contain CR or LF
// (header injection), and integers stay within 15 digits. The wire form (http_field_lines,
// written into a buffer sized beforehand) is the sink's lines byte for byte.
#include "ratelimitd/headers/rate_limit_fields.hpp"
#include "ratelimitd/http/rate_limit_headers.hpp"

#include <boost/beast/http/fields.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace {

class Reader {
public:
    Reader(const std::uint8_t* d, std::size_t n) : d_(d), n_(n) {}
    std::int64_t i64() {
        std::int64_t v = 0;
        const std::size_t k = std::min<std::size_t>(8, n_);
        std::memcpy(&v, d_, k);
        d_ += k;
        n_ -= k;
        return v;
    }
    std::string str(std::size_t max) {
        const std::size_t k = std::min<std::size_t>(n_, d_ != nullptr && n_ > 0 ? d_[0] % (max + 1) : 0);
        if (n_ > 0) { ++d_; --n_; }
        const std::size_t take = std::min(k, n_);
        std::string s(reinterpret_cast<const char*>(d_), take);
        d_ += take;
        n_ -= take;
        return s;
    }
    bool empty() const { return n_ == 0; }

private:
    const std::uint8_t* d_;
    std::size_t n_;
};

// The lines a sink is given, as field lines on the wire.
class WireSink final : public ratelimitd::headers::HeaderSink {
public:
    void set(std::string_view name, std::string_view value) override {
        text.append(name).append(": ").append(value).append("\r\n");
    }
    std::string text;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Reader in(data, size);
    ratelimitd::check::Verdict v;
    v.allowed = size % 2 == 0;
    const int windows = 1 + static_cast<int>(size % 4);
    for (int i = 0; i < windows; ++i) {
        ratelimitd::check::WindowState w;
        w.policy = in.str(40);
        w.allowed = v.allowed;
        w.limit = in.i64();
        w.window_s = in.i64();
        w.remaining = in.i64();
        w.reset_epoch_s = in.i64();
        w.reset_after_s = in.i64();
        w.retry_after_s = in.i64();
        v.windows.push_back(std::move(w));
    }
    if (size % 3 == 0) {
        // A lease id is the store's own (hex digits), never the client's bytes.
        std::string lease = in.str(64);
        for (char& c : lease) c = "0123456789abcdef"[static_cast<unsigned char>(c) % 16];
        v.windows.front().lease = std::move(lease);
    }
    boost::beast::http::fields out;
    ratelimitd::http::set_rate_limit_headers(v, out);
    for (const auto& f : out) {
        const auto value = f.value();
        if (value.find('\r') != value.npos || value.find('\n') != value.npos) std::abort();
    }
    using ratelimitd::headers::RateLimitHeader;
    constexpr RateLimitHeader all[] = {RateLimitHeader::x_limit,    RateLimitHeader::x_remaining,
                                       RateLimitHeader::x_reset,    RateLimitHeader::policy,
                                       RateLimitHeader::rate_limit, RateLimitHeader::lease,
                                       RateLimitHeader::retry_after, RateLimitHeader::no_store};
    WireSink sink;
    ratelimitd::headers::set_rate_limit_headers(v, all, sink);
    if (ratelimitd::headers::http_field_lines(v, all) != sink.text) std::abort();
    return 0;
}
