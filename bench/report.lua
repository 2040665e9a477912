-- Shared by the wrk scripts: at the end, one JSON line of totals and latency percentiles
-- (RESULT) and the latency curve for the plot (CURVE: percentile, milliseconds).
local curve_points = { 50, 75, 90, 95, 99, 99.5, 99.9, 99.99 }

function done(summary, latency, requests)
  io.write(string.format(
    'RESULT {"requests":%d,"seconds":%.3f,"errors":%d,"non2xx":%d,"p50_ms":%.3f,"p99_ms":%.3f,"p999_ms":%.3f}\n',
    summary.requests, summary.duration / 1e6,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    latency:percentile(99.9) / 1000))
  for _, p in ipairs(curve_points) do
    io.write(string.format('CURVE %s %.3f\n', p, latency:percentile(p) / 1000))
  end
end
