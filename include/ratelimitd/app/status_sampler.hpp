// Feeds the status page's history: every StatusHistory::interval, on the main thread, the
// process's running totals are read and recorded. Nothing on the check path changes.
#pragma once

#include "ratelimitd/service/status_history.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>

namespace ratelimitd::app {

/// @par Thread Safety
/// start() and the timer's handler run on the executor's thread; the sampler outlives them
/// (it is destroyed after the executor's io_context stopped running).
class StatusSampler {
public:
    using ReadTotals = std::function<service::StatusInputs()>;

    StatusSampler(boost::asio::any_io_executor executor, service::StatusHistory& history, ReadTotals read);

    /// Records the first totals now and one sample every interval from then on.
    void start();

private:
    void tick();

    boost::asio::steady_timer timer_;
    service::StatusHistory& history_;
    ReadTotals read_;
};

}  // namespace ratelimitd::app
