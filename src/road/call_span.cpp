// A decided call's attributes: the decision's own fields, the reported window's numbers.
#include "ratelimitd/road/call_span.hpp"

#include "ratelimitd/policy/algorithm.hpp"
#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/trace/tracer.hpp"

#include <algorithm>

namespace ratelimitd::road {
namespace {

// The algorithm of the limit whose window the answer reports (Decision::owner maps a window
// to its limit in the plan), or nullptr when none is known.
const char* reported_algorithm(const Call& call) {
    const service::Decision& d = call.decision;
    const auto& windows = d.verdict.windows;
    if (windows.empty() || d.owner.size() != windows.size()) return nullptr;
    const auto index = static_cast<std::size_t>(&d.verdict.reported() - windows.data());
    const std::size_t limit = d.owner[index];
    if (limit >= call.plan.limits.size() || call.plan.limits[limit].policy == nullptr) return nullptr;
    return policy::to_string(call.plan.limits[limit].policy->algorithm);
}

// What the store said and how: the store span's own attributes. `store`: a StoreWord's.
void add_store_attributes(trace::Span& span, const Call& call, std::string_view store) {
    const service::Decision& d = call.decision;
    if (const char* algorithm = reported_algorithm(call)) span.add("ratelimit.algorithm", algorithm);
    if (!d.degraded && !d.verdict.windows.empty()) {
        const check::WindowState& w = d.verdict.reported();
        span.add("ratelimit.limit", w.limit);
        span.add("ratelimit.remaining", w.remaining);
    }
    span.add("ratelimit.cost", static_cast<std::int64_t>(call.plan.cost));
    span.add("ratelimit.store", trace::StaticText{store});
    span.add("ratelimit.degraded", d.degraded);
    span.add("ratelimit.fail_mode", d.fail_closed ? "deny" : "allow");
    span.add("ratelimit.cache_hit", d.verdict.from_denial_cache);
}

// The store's name as a span's: the backends' kinds are a fixed set of words, each with its span
// name (literals: nothing is built per span).
struct StoreWord {
    std::string_view word;
    std::string_view span_name;
};

StoreWord store_word(std::string_view store) {
    static constexpr StoreWord known[] = {{"redis", "ratelimit.store redis"},
                                          {"redis-cluster", "ratelimit.store redis-cluster"},
                                          {"embedded", "ratelimit.store embedded"}};
    for (const StoreWord& k : known) {
        if (store == k.word) return k;
    }
    return {"other", "ratelimit.store other"};
}

}  // namespace

void add_call_attributes(trace::Span& span, const Call& call) {
    if (call.problem) {
        span.add("ratelimit.problem", trace::StaticText{to_string(call.problem->code)});
        return;
    }
    const service::Decision& d = call.decision;
    span.add("ratelimit.policy", d.policy);
    span.add("ratelimit.verdict", d.verdict.allowed ? "allowed" : "denied");
    if (d.shadow_denied) span.add("ratelimit.shadow_denied", true);
}

void store_span(trace::Span& span, const trace::Span& server, const Call& call, std::string_view store,
                std::chrono::steady_clock::time_point handed, std::chrono::steady_clock::time_point answered) {
    const StoreWord word = store_word(store);
    const bool remote = word.word != "embedded";
    trace::Tracer::start_child_span(span, server, word.span_name,
                                    remote ? trace::SpanKind::client : trace::SpanKind::internal);
    const auto steady_now = std::chrono::steady_clock::now();
    const auto system_now = std::chrono::system_clock::now();
    // Inside its parent by construction (handed after arrival, answered before the answer); the
    // two spans' instants are mapped to Unix time by separate clock reads, microseconds apart,
    // so the child is kept within the parent's interval.
    span.start_unix_nano = std::max(trace::unix_nanos_of(handed, steady_now, system_now), server.start_unix_nano);
    span.end_unix_nano = std::min(trace::unix_nanos_of(answered, steady_now, system_now), server.end_unix_nano);
    span.start_unix_nano = std::min(span.start_unix_nano, span.end_unix_nano);
    if (call.problem) return;
    span.attributes.reserve(trace::typical_attributes);
    if (remote) span.add("db.system.name", "redis");
    if (call.ask != Ask::rls) span.add("ratelimit.policy", call.decision.policy);
    span.add("ratelimit.verdict", call.decision.verdict.allowed ? "allowed" : "denied");
    add_store_attributes(span, call, word.word);
    if (call.decision.degraded) span.status = trace::StatusCode::error;
}

}  // namespace ratelimitd::road
