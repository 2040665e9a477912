// Fuzz target: bytes from a Redis server, read into Values by the ValueReader the connections
// use (hiredis's parser, our objects), then given to every reader of replies: the script verdict, CLUSTER SLOTS
// and the MOVED/ASK classifier. Each reader must refuse a malformed reply with a Problem (no
// exception, crash or sanitizer report), and what it accepts must keep its documented shape.
#include "ratelimitd/store/redis/cluster/slot_map.hpp"
#include "ratelimitd/store/redis/value.hpp"
#include "ratelimitd/store/redis/value_reader.hpp"
#include "ratelimitd/store/redis/verdict_reply.hpp"

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
    // Accepted only as the script's fixed shape: 7 integers, or 7 and a quota webhook's claims
    // (window end, crossed at, at least one position or the debt), one window, remaining >= 0.
    if (v.type != Value::Type::array || (v.elements.size() != 7 && v.elements.size() < 10)) std::abort();
    if (verdict->windows.size() != 1 || verdict->windows[0].remaining < 0) std::abort();
    // The first value: 0 denied, 1 admitted, 1 + d admitted after d ms (max_delay).
    const std::int64_t first = v.elements[0].integer;
    if (verdict->allowed != (first >= 1)) std::abort();
    if (verdict->windows[0].delay_ms != (first >= 1 ? first - 1 : 0)) std::abort();
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    // An array's header alone ("*2000000000") allocates nothing: members take memory only as
    // their bytes arrive, so no input is skipped.
    ValueReader reader;
    if (reader.feed(bytes.data(), bytes.size())) {
        Value v;
        for (int replies = 0; replies < 64 && reader.next(v) == ValueReader::Status::reply; ++replies) check_all(v, 0);
    }
    return 0;
}
