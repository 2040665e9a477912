// POST /v1/notify/test: the body checked, the target looked up in the registry in force, one
// delivery attempt through the quota webhooks' sender.
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/state_response.hpp"

#include <nlohmann/json.hpp>

namespace ratelimitd::http {

namespace net = boost::asio;
using json = nlohmann::ordered_json;

namespace {


/// The target name of {"target":"NAME"}.
result<std::string> target_name(std::string_view body) {
    int targets = 0;  // a field given twice is refused, as on every door that reads JSON
    const auto count_targets = [&targets](int depth, json::parse_event_t event, json& parsed) {
        if (event == json::parse_event_t::key && depth == 1 && parsed == "target") ++targets;
        return true;
    };
    const json j = json::parse(body, count_targets, false);
    if (targets > 1) return invalid_request("target: given more than once");
    if (j.is_discarded() || !j.is_object()) return invalid_request("body: expected a JSON object {\"target\":\"NAME\"}");
    for (const auto& [key, value] : j.items()) {
        if (key != "target") return invalid_request(quote(key) + ": unknown field (allowed: target)");
    }
    const auto it = j.find("target");
    if (it == j.end() || !it->is_string()) return invalid_request("target: expected the name of a target under notify.targets");
    return it->get<std::string>();
}

}  // namespace

namespace handlers {

net::awaitable<Answer> notify_test(EndpointServices& s, const EndpointCall& call) {
    const Request& req = call.req;
    auto name = target_name(req.body());
    if (!name) co_return state_error_response(req, name.error());
    const auto registry = s.road.registry();
    const auto& notify = registry->notify;
    const auto it = notify ? notify->targets.find(*name) : decltype(notify->targets.end()){};
    if (!notify || it == notify->targets.end()) {
        co_return state_error_response(
            req, invalid_request("target: " + quote(*name) + " is not a target under notify.targets" +
                     (notify ? std::string() : std::string(" (the config has no notify section)"))));
    }
    service::CrossingSink* sink = s.road.crossing_sink();
    if (sink == nullptr) co_return state_error_response(req, invalid_request("target: quota webhooks are off in this process"));
    auto status = co_await sink->send_sample(it->second);
    if (status && *status >= 200 && *status < 300) {
        co_return state_json_response(req, bhttp::status::ok,
                                      {{"target", *name}, {"delivered", true}, {"status", *status}});
    }
    json body = {{"target", *name}, {"delivered", false}};
    if (status) body["status"] = *status;
    else body["detail"] = status.error().detail;
    co_return state_json_response(req, bhttp::status::bad_gateway, body);
}

}  // namespace handlers

}  // namespace ratelimitd::http
