-- wrk script for the HTTP ceiling (nginx `return 204`): same latency line as check.lua.
function done(summary, latency, requests)
  io.write(string.format(
    'RESULT {"requests":%d,"seconds":%.3f,"errors":%d,"non2xx":%d,"p50_ms":%.3f,"p99_ms":%.3f,"p999_ms":%.3f}\n',
    summary.requests, summary.duration / 1e6,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    latency:percentile(99.9) / 1000))
end
