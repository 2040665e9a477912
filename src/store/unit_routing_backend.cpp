// UnitRoutingBackend: two backends as one (unit_routing_backend.hpp).
#include "ratelimitd/store/unit_routing_backend.hpp"

#include <utility>

namespace ratelimitd::store {

namespace {

template <class Part>
void add_part(std::optional<Part>& sum, const std::optional<Part>& more, auto add) {
    if (!more) return;
    if (!sum) {
        sum = more;
        return;
    }
    add(*sum, *more);
}

}  // namespace

UnitRoutingBackend::UnitRoutingBackend(std::unique_ptr<Backend> other_units, std::unique_ptr<Backend> per_second)
    : other_units_(std::move(other_units)), per_second_(std::move(per_second)) {}

std::optional<std::string> UnitRoutingBackend::refusal(const policy::Registry& registry) const {
    if (auto refused = other_units_->refusal(registry)) return refused;
    if (auto refused = per_second_->refusal(registry)) return "the per-second store: " + *refused;
    return std::nullopt;
}

Store& UnitRoutingBackend::add_thread(boost::asio::any_io_executor thread) {
    Store& other = other_units_->add_thread(thread);
    Store& second = per_second_->add_thread(std::move(thread));
    stores_.push_back(std::make_unique<UnitRoutingStore>(other, second));
    return *stores_.back();
}

void UnitRoutingBackend::start(boost::asio::any_io_executor main) {
    other_units_->start(main);
    per_second_->start(std::move(main));
}

void UnitRoutingBackend::stop() {
    other_units_->stop();
    per_second_->stop();
}

void UnitRoutingBackend::stop_thread(std::size_t index) {
    other_units_->stop_thread(index);
    per_second_->stop_thread(index);
}

BackendStats UnitRoutingBackend::stats() const {
    BackendStats sum = other_units_->stats();
    const BackendStats more = per_second_->stats();
    sum.open_breakers += more.open_breakers;
    add_part(sum.connections, more.connections, [](auto& a, const auto& b) {
        a.connected += b.connected;
        a.connecting += b.connecting;
        a.disconnected += b.disconnected;
    });
    add_part(sum.batching, more.batching, [](auto& a, const auto& b) {
        a.script_calls += b.script_calls;
        a.checks += b.checks;
    });
    add_part(sum.redirects, more.redirects, [](auto& a, const auto& b) {
        a.moved += b.moved;
        a.ask += b.ask;
    });
    add_part(sum.keys, more.keys, [](auto& a, const auto& b) {
        a.keys += b.keys;
        a.evictions += b.evictions;
    });
    return sum;
}

std::string UnitRoutingBackend::describe() const {
    return other_units_->describe() + ", per-second limits on " + per_second_->describe();
}

}  // namespace ratelimitd::store
