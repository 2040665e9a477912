// Child processes for integration tests.
namespace ratelimitd::test {}
