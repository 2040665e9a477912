// Quota webhook events checked against the schema the docs ship
// (docs/schema/usage-event.schema.json), by tests/support/validate_events.py (python3-jsonschema).
#pragma once

#include "support/webhook_receiver.hpp"

#include <string>
#include <vector>

namespace ratelimitd::test {

/// Empty when every body `received` is valid against the schema, else what the validator said.
std::string schema_failures(const std::vector<ReceivedRequest>& received);

}  // namespace ratelimitd::test
