// Reading CLUSTER SLOTS replies and MOVED/ASK redirects.
#include "ratelimitd/store/redis/cluster/slot_map.hpp"

#include "ratelimitd/store/redis/cluster/key_slot.hpp"

#include <charconv>

namespace ratelimitd::store::redis::cluster {

namespace {

Problem malformed(std::string why) { return Problem{errc::bad_script_reply, "CLUSTER SLOTS: " + why}; }

bool to_int(std::string_view s, int& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && p == s.data() + s.size();
}

}  // namespace

std::string NodeAddress::str() const {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

result<NodeAddress> parse_node_address(std::string_view text) {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
        return Problem{errc::invalid_request, "expected host:port, got \"" + std::string(text) + "\""};
    }
    NodeAddress a;
    std::string_view host = text.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    a.host = std::string(host);
    if (!to_int(text.substr(colon + 1), a.port) || a.port < 1 || a.port > 65535) {
        return Problem{errc::invalid_request, "expected a port 1..65535 in \"" + std::string(text) + "\""};
    }
    return a;
}

result<std::vector<SlotRange>> parse_cluster_slots(const Value& reply, std::string_view asked_host) {
    if (reply.is_error()) return malformed("error reply: " + reply.str);
    if (reply.type != Value::Type::array) return malformed("expected an array");
    std::vector<SlotRange> out;
    for (const auto& entry : reply.elements) {
        if (entry.type != Value::Type::array || entry.elements.size() < 3) {
            return malformed("expected [first, last, primary, ...] per range");
        }
        const auto& e = entry.elements;
        if (e[0].type != Value::Type::integer || e[1].type != Value::Type::integer) {
            return malformed("expected integer slot bounds");
        }
        SlotRange r;
        r.first = static_cast<int>(e[0].integer);
        r.last = static_cast<int>(e[1].integer);
        // Compared before the narrowing to int: 2^32 + 5 would otherwise pass as slot 5, and
        // 8888888888888888192 as a negative slot that install() writes before its table.
        if (e[0].integer < 0 || e[1].integer >= slot_count || e[0].integer > e[1].integer) {
            return malformed("slot range " + std::to_string(e[0].integer) + "-" + std::to_string(e[1].integer) +
                             " is outside 0..16383");
        }
        const auto& node = e[2];
        if (node.type != Value::Type::array || node.elements.size() < 2 ||
            node.elements[0].type != Value::Type::string || node.elements[1].type != Value::Type::integer) {
            return malformed("expected [host, port, ...] for a range's primary");
        }
        r.primary.host = node.elements[0].str.empty() ? std::string(asked_host) : node.elements[0].str;
        r.primary.port = static_cast<int>(node.elements[1].integer);
        if (r.primary.host == "?") continue;  // the node's address is not known yet
        out.push_back(std::move(r));
    }
    return out;
}

Redirect parse_redirect(std::string_view error) {
    Redirect r;
    auto starts = [&](std::string_view word) {
        return error.size() >= word.size() && error.substr(0, word.size()) == word;
    };
    if (starts("TRYAGAIN")) {
        r.kind = Redirect::Kind::try_again;
        return r;
    }
    if (starts("CLUSTERDOWN")) {
        r.kind = Redirect::Kind::cluster_down;
        return r;
    }
    Redirect::Kind kind;
    std::string_view rest;
    if (starts("MOVED ")) {
        kind = Redirect::Kind::moved;
        rest = error.substr(6);
    } else if (starts("ASK ")) {
        kind = Redirect::Kind::ask;
        rest = error.substr(4);
    } else {
        return r;
    }
    const auto space = rest.find(' ');
    if (space == std::string_view::npos) return r;
    int slot = -1;
    if (!to_int(rest.substr(0, space), slot) || slot < 0 || slot >= slot_count) return r;
    auto target = parse_node_address(rest.substr(space + 1));
    if (!target) return r;
    r.target = std::move(*target);
    r.kind = kind;
    r.slot = slot;
    return r;
}

}  // namespace ratelimitd::store::redis::cluster
