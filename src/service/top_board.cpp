// TopBoard: each thread copies its own sketches on its own executor; the merge runs here.
#include "ratelimitd/service/top_board.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <map>

namespace ratelimitd::service {

namespace net = boost::asio;

ThreadTop& TopBoard::add_thread(net::any_io_executor executor) {
    lanes_.push_back({std::move(executor), std::make_unique<ThreadTop>(options_, *this)});
    return *lanes_.back().top;
}

net::awaitable<std::vector<PolicyTop>> TopBoard::gather(std::optional<std::string> policy, TopBy by,
                                                        std::size_t n) {
    std::map<std::string, std::vector<SpaceSaving>, std::less<>> by_policy;
    for (const Lane& lane : lanes_) {
        ThreadTop* top = lane.top.get();
        // The copy runs on the lane's thread, the only one that touches its ThreadTop.
        auto copies = co_await net::co_spawn(
            lane.executor,
            [top, &policy, by]() -> net::awaitable<std::vector<PolicySketches>> {
                co_return top->snapshot(policy, by, ThreadTop::clock::now());
            },
            net::use_awaitable);
        for (auto& p : copies) {
            auto& all = by_policy[p.policy];
            for (auto& s : p.sketches) all.push_back(std::move(s));
        }
    }
    std::vector<PolicyTop> out;
    for (const auto& [name, sketches] : by_policy) out.push_back({name, merge_top(sketches, n)});
    co_return out;
}

}  // namespace ratelimitd::service
