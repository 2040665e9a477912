// BucketTop: the quota service's bucket reports in a ThreadTop behind a mutex.
#include "ratelimitd/service/bucket_top.hpp"

#include <algorithm>
#include <tuple>

namespace ratelimitd::service {

namespace {

// Between domain and rule in a ring's name: neither a YAML key nor a domain is expected to hold it.
constexpr char separator = '\x1f';
constexpr std::string_view ellipsis = "...";

std::string ring_name(std::string_view domain, std::string_view rule) {
    std::string out(domain);
    out += separator;
    out += rule;
    return out;
}

// Cuts `text` to at most `bytes`, never inside a UTF-8 sequence (a continuation byte is 10xxxxxx).
void cut_at_boundary(std::string& text, std::size_t bytes) {
    while (bytes > 0 && (static_cast<unsigned char>(text[bytes]) & 0xC0u) == 0x80u) --bytes;
    text.resize(bytes);
}

}  // namespace

TopOptions BucketTop::unsampled(TopOptions options) {
    options.sample_one_in = 1;
    return options;
}

BucketTop::BucketTop(const TopOptions& options, TopBoard& board) : top_(unsampled(options), board) {}

std::string BucketTop::render_bucket(const policy::RlqsBucketId& bucket) {
    std::string out;
    for (const auto& [key, value] : bucket) {
        if (!out.empty()) out += ',';
        out += key;
        out += '=';
        out += value;
        if (out.size() > max_rendering_bytes) break;  // the rest would be cut anyway
    }
    if (out.size() > max_rendering_bytes) {
        cut_at_boundary(out, max_rendering_bytes - ellipsis.size());
        out += ellipsis;
    }
    return out;
}

void BucketTop::record(std::string_view domain, std::string_view rule, const policy::RlqsBucketId& bucket,
                       std::uint64_t allowed, std::uint64_t denied, std::uint64_t cap) {
    allowed = std::min(allowed, cap);
    denied = std::min(denied, cap);
    if (allowed == 0 && denied == 0) return;  // a quiet bucket ranks nowhere
    const std::string name = ring_name(domain, rule);
    const std::string rendering = render_bucket(bucket);
    const auto now = ThreadTop::clock::now();
    const std::lock_guard lock(mutex_);
    top_.record(name, rendering, TopBy::admitted, allowed + denied, now);
    if (denied > 0) top_.record(name, rendering, TopBy::denied, denied, now);
}

std::vector<RuleTop> BucketTop::ranking(const std::optional<std::string>& domain,
                                        const std::optional<std::string>& rule, BucketBy by, std::size_t n) const {
    std::vector<PolicySketches> copies;
    const std::optional<std::string> one = domain && rule ? std::optional(ring_name(*domain, *rule)) : std::nullopt;
    {
        const std::lock_guard lock(mutex_);
        copies = top_.snapshot(one, by == BucketBy::denied ? TopBy::denied : TopBy::admitted, ThreadTop::clock::now());
    }
    std::vector<RuleTop> out;
    for (const auto& copy : copies) {
        const auto at = copy.policy.find(separator);
        RuleTop r{copy.policy.substr(0, at), copy.policy.substr(at + 1), {}};
        if (domain && r.domain != *domain) continue;
        r.buckets = merge_top(copy.sketches, n);
        out.push_back(std::move(r));
    }
    std::sort(out.begin(), out.end(),
              [](const RuleTop& a, const RuleTop& b) { return std::tie(a.domain, a.rule) < std::tie(b.domain, b.rule); });
    return out;
}

std::size_t BucketTop::kept() const {
    const auto now = ThreadTop::clock::now();
    const std::lock_guard lock(mutex_);
    std::size_t entries = 0;
    for (const TopBy by : {TopBy::denied, TopBy::admitted}) {
        for (const auto& copy : top_.snapshot(std::nullopt, by, now)) {
            for (const auto& sketch : copy.sketches) entries += sketch.entries().size();
        }
    }
    return entries;
}

}  // namespace ratelimitd::service
