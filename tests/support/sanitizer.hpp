#pragma once

// RATELIMITD_TEST_UNDER_ASAN: 1 when this test binary is built with AddressSanitizer. GCC says
// so with __SANITIZE_ADDRESS__; clang, which compiles the sanitized build, only through
// __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define RATELIMITD_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RATELIMITD_TEST_UNDER_ASAN 1
#endif
#endif
#ifndef RATELIMITD_TEST_UNDER_ASAN
#define RATELIMITD_TEST_UNDER_ASAN 0
#endif
