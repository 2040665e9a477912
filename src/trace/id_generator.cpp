// Ids from a per-thread std::mt19937_64: unpredictability is not needed (ids are not secrets),
// uniformity and no shared state are.
#include "ratelimitd/trace/id_generator.hpp"

#include <cstring>
#include <random>

namespace ratelimitd::trace {
namespace {

std::mt19937_64 seeded_generator() {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device()};
    return std::mt19937_64(seed);
}

std::mt19937_64& thread_generator() noexcept {
    thread_local std::mt19937_64 generator = seeded_generator();
    return generator;
}

template <std::size_t N>
std::array<std::uint8_t, N> random_id() noexcept {
    std::array<std::uint8_t, N> id{};
    do {
        for (std::size_t i = 0; i < N; i += 8) {
            const std::uint64_t word = thread_generator()();
            std::memcpy(id.data() + i, &word, 8);
        }
    } while (is_zero(id));
    return id;
}

}  // namespace

TraceId new_trace_id() noexcept { return random_id<16>(); }

std::uint64_t random_word() noexcept { return thread_generator()(); }

TraceId trace_id_ending_with(std::uint64_t low) noexcept {
    TraceId id{};
    for (std::size_t i = 0; i < 8; ++i) id[15 - i] = static_cast<std::uint8_t>(low >> (8 * i));
    // All zero is invalid: the first half is drawn again while it and `low` are both zero.
    do {
        const std::uint64_t high = random_word();
        std::memcpy(id.data(), &high, 8);
    } while (is_zero(id));
    return id;
}
SpanId new_span_id() noexcept { return random_id<8>(); }

}  // namespace ratelimitd::trace
