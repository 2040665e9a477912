// Fuzz target: bytes from a Redis server, read by hiredis as the connections read them, then
// copied into a Value and given to every reader of replies: the script verdict, CLUSTER SLOTS
// and the MOVED/ASK classifier. Each reader must refuse a malformed reply with a Problem (no
// exception, crash or sanitizer report), and what it accepts must keep its documented shape.
#include "ratelimitd/store/redis/cluster/slot_map.hpp"
#include "ratelimitd/store/redis/value.hpp"
#include "ratelimitd/store/redis/verdict_reply.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

using namespace ratelimitd::store::redis;

const ratelimitd::policy::Policy& policy() {
    static const ratelimitd::policy::Policy p = [] {
        ratelimitd::policy::Policy q;
        q.name = "fuzz";
        q.limit = 10;
        q.window = std::chrono::seconds(60);
        return q;
    }();
    return p;
}

void check_verdict(const Value& v) {
    const auto verdict = parse_verdict(v, policy());
    if (!verdict) return;
    // Accepted only as the script's fixed shape: 7 integers, one window, remaining >= 0.
    if (v.type != Value::Type::array || v.elements.size() != 7) std::abort();
    if (verdict->windows.size() != 1 || verdict->windows[0].remaining < 0) std::abort();
    if (verdict->allowed != (v.elements[0].integer == 1)) std::abort();
}

void check_cluster_slots(const Value& v) {
    const auto ranges = cluster::parse_cluster_slots(v, "10.0.0.1");
    if (!ranges) return;
    for (const auto& r : *ranges) {
        if (r.first < 0 || r.last > 16383 || r.first > r.last || r.primary.host.empty()) std::abort();
        (void)r.primary.str();
    }
}

void check_redirect(const Value& v) {
    if (v.type != Value::Type::error && v.type != Value::Type::status) return;
    const auto r = cluster::parse_redirect(v.str);
    using K = cluster::Redirect::Kind;
    if (r.kind == K::moved || r.kind == K::ask) {
        if (r.slot < 0 || r.slot > 16383 || r.target.port < 1 || r.target.port > 65535) std::abort();
    }
}

void check_all(const Value& v, int depth) {
    check_verdict(v);
    check_cluster_slots(v);
    check_redirect(v);
    // A batch reply is an array of per-check replies: read each member as one too.
    if (depth < 2) {
        for (const auto& e : v.elements) check_all(e, depth + 1);
    }
}

/// hiredis (0.14 on Debian 12) allocates an array's element table before reading its members:
/// "*2000000000" asks calloc for 16 GB, which under ASan is a report rather than a refusal.
/// That bound is hiredis's, not the readers': such inputs are skipped.
bool has_huge_array(std::string_view bytes) {
    for (std::size_t at = 0; at < bytes.size();) {
        if (bytes[at] == '*' || bytes[at] == '%' || bytes[at] == '~' || bytes[at] == '>') {
            std::size_t i = at + 1;
            std::uint64_t n = 0;
            while (i < bytes.size() && bytes[i] >= '0' && bytes[i] <= '9' && n <= (1u << 16)) {
                n = n * 10 + static_cast<std::uint64_t>(bytes[i++] - '0');
            }
            if (n > (1u << 16)) return true;
        }
        const auto nl = bytes.find('\n', at);
        if (nl == std::string_view::npos) break;
        at = nl + 1;
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    if (has_huge_array(bytes)) return 0;
    redisReader* reader = redisReaderCreate();
    if (reader == nullptr) return 0;
    if (redisReaderFeed(reader, bytes.data(), bytes.size()) == REDIS_OK) {
        for (int replies = 0; replies < 64; ++replies) {
            void* reply = nullptr;
            if (redisReaderGetReply(reader, &reply) != REDIS_OK || reply == nullptr) break;
            const Value v = Value::from_reply(static_cast<const redisReply*>(reply));
            freeReplyObject(reply);
            check_all(v, 0);
        }
    }
    redisReaderFree(reader);
    return 0;
}
