// Headless Chromium (Debian's `chromium` package) as the tests' browser: a page's DOM after
// its scripts ran, and a screenshot kept in the build dir for a person to look at.
#pragma once

#include <chrono>
#include <string>

namespace ratelimitd::test {

/// True when /usr/bin/chromium exists (scripts/install-deps.sh installs it for the test stage).
bool chromium_installed();

/// Where the tests keep their screenshots: <build dir>/test-artefacts (made on first use).
std::string artefact_dir();

/// The serialised DOM of `url` (file:// or http://) once loaded. `budget_ms` is the virtual
/// time the page's scripts get (their fetches and timers run within it) before the dump.
std::string chromium_dom(const std::string& url, int budget_ms = 0);

/// A PNG of `url` at `width` x `height` CSS pixels, written to artefact_dir()/`name`; returns
/// its path ("" when Chromium failed: the test's expectations say why).
std::string chromium_screenshot(const std::string& url, const std::string& name, int width, int height,
                                int budget_ms = 0);

}  // namespace ratelimitd::test
