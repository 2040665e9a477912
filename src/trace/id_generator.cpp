// Ids from a per-thread xoshiro256** seeded once from std::random_device: unpredictability is
// not needed (ids are not secrets), uniformity and no shared state are; a draw is a few shifts
// and adds (std::mt19937_64 cost several times more, its table refilled every 312 draws).
#include "ratelimitd/trace/id_generator.hpp"

#include <bit>
#include <cstring>
#include <random>

namespace ratelimitd::trace {
namespace {

// xoshiro256** (Blackman and Vigna), its state filled by splitmix64 from the seed as its authors
// recommend (a state of all zero would be a fixed point; splitmix64 never gives four zeros).
class Xoshiro256 {
public:
    explicit Xoshiro256(std::uint64_t seed) noexcept {
        for (auto& word : state_) {
            seed += 0x9e3779b97f4a7c15ULL;
            std::uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            word = z ^ (z >> 31);
        }
    }
    std::uint64_t operator()() noexcept {
        const std::uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
        const std::uint64_t t = state_[1] << 17;
        state_[2] ^= state_[0];
        state_[3] ^= state_[1];
        state_[1] ^= state_[2];
        state_[0] ^= state_[3];
        state_[2] ^= t;
        state_[3] = std::rotl(state_[3], 45);
        return result;
    }

private:
    std::uint64_t state_[4];
};

Xoshiro256 seeded_generator() {
    std::random_device device;
    return Xoshiro256(std::uint64_t{device()} << 32 | device());
}

Xoshiro256& thread_generator() noexcept {
    thread_local Xoshiro256 generator = seeded_generator();
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
