#!/usr/bin/python3
"""An independent client of ratelimitd's gRPC server: Python grpcio with stubs generated at
test time from proto/ by grpc_tools.protoc, against the real binary and a real redis-server.

Checks: health SERVING, a malformed message (bytes that are no RateLimitRequest) answered
with an error and nothing charged, a bad request answered INVALID_ARGUMENT, and, with the
Envoy config of the test, an exact count of admitted calls and the answer's fields. Then,
with grpc_tls and a client CA (certificates made by the openssl command): a TLS client showing
a certificate the CA signed is served, one without a certificate and a plaintext one are not.

usage: rls_python_client_test.py RATELIMITD_BINARY PROTO_DIR
"""
import fcntl
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time

ENVOY_CONFIG = """\
domain: pytest
descriptors:
  - key: remote_address
    rate_limit:
      unit: minute
      requests_per_unit: 3
"""


PORT_LOCKS = []  # open lock files: each reservation lasts as long as this process


def free_port():
    """A free loopback port by the protocol the C++ and shell tests use (tests/support/processes.cpp):
    20000-31999, below the kernel's ephemeral range, reserved by a lock on
    /tmp/ratelimitd-test-ports/PORT for the life of this process."""
    os.makedirs("/tmp/ratelimitd-test-ports", exist_ok=True)
    start = random.randrange(12000)
    for i in range(12000):
        port = 20000 + (start + i) % 12000
        f = open("/tmp/ratelimitd-test-ports/%d" % port, "a+")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            continue
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                f.close()
                continue
        PORT_LOCKS.append(f)
        return port
    raise AssertionError("no free loopback port in 20000-31999")


def wait_for(pred, seconds, what):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def generate_stubs(proto_dir, out_dir):
    from grpc_tools import protoc  # noqa: imported late: only this test needs it
    import grpc_tools
    import shutil
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")  # wrappers, duration
    # health.proto's module would be grpc.health.v1, which grpcio's own package "grpc" hides:
    # compile a copy under another path (the service name comes from its package, unchanged).
    health_dir = os.path.join(out_dir, "health_proto", "rl_health")
    os.makedirs(health_dir)
    shutil.copy(os.path.join(proto_dir, "grpc/health/v1/health.proto"), health_dir)
    jobs = [(proto_dir, ["envoy/config/core/v3/base.proto", "envoy/extensions/common/ratelimit/v3/ratelimit.proto",
                         "envoy/service/ratelimit/v3/rls.proto"]),
            (os.path.join(out_dir, "health_proto"), ["rl_health/health.proto"])]
    for include, protos in jobs:
        args = ["protoc", "-I" + include, "-I" + well_known, "--python_out=" + out_dir, "--grpc_python_out=" + out_dir]
        if protoc.main(args + [os.path.join(include, p) for p in protos]) != 0:
            raise AssertionError("grpc_tools.protoc failed on " + " ".join(protos))
    for root, _dirs, _files in os.walk(out_dir):
        open(os.path.join(root, "__init__.py"), "a").close()
    sys.path.insert(0, out_dir)


class Servers:
    def __init__(self, binary, work, extra_args=()):
        self.redis_port = free_port()
        self.redis = subprocess.Popen(["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1",
                                       "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
        # Our own server answered: it is still running (another one on the port would make it exit).
        wait_for(lambda: self.redis.poll() is None and self.redis_ping(), 10, "redis-server")
        envoy_path = os.path.join(work, "envoy.yaml")
        with open(envoy_path, "w") as f:
            f.write(ENVOY_CONFIG)
        config = os.path.join(work, "ratelimitd.yaml")
        with open(config, "w") as f:
            f.write("envoy_config: " + envoy_path + "\n")
        self.log_path = os.path.join(work, "ratelimitd.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([binary, "--config", config, "--listen", "127.0.0.1:0", "--redis",
                                      "redis://127.0.0.1:%d" % self.redis_port, "--grpc-listen", "127.0.0.1:0",
                                      # exact counts: a slow call on a loaded machine must not be a degraded OK
                                      "--store-timeout", "2s"] + list(extra_args),
                                     stdout=self.log, stderr=subprocess.STDOUT)
        line = wait_for(lambda: re.search(r"grpc listening on 127\.0\.0\.1:(\d+)", self.read_log()), 15,
                        "grpc listening on (log: %s)" % self.log_path)
        self.grpc_port = int(line.group(1))

    def read_log(self):
        with open(self.log_path) as f:
            return f.read()

    def redis_ping(self):
        try:
            return self.redis_cli("PING") == "PONG"
        except (OSError, subprocess.CalledProcessError):
            return False

    def redis_cli(self, *args):
        out = subprocess.run(["redis-cli", "-p", str(self.redis_port)] + list(args), check=True,
                             capture_output=True, text=True)
        return out.stdout.strip()

    def stop(self):
        """SIGTERM, as an operator stops it: it must exit 0 with no sanitizer report in its log."""
        self.proc.terminate()
        code = self.proc.wait(15)
        self.redis.kill()
        self.redis.wait(10)
        log = self.read_log()
        assert code == 0, "ratelimitd exited with %d after SIGTERM; its log:\n%s" % (code, log)
        for report in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer"):
            assert report not in log, "ratelimitd logged a sanitizer report:\n" + log


def make_certificates(work):
    """A CA, a server certificate (localhost) and a client certificate (clientAuth) it signed."""
    def openssl(*args):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "3"] + list(args), check=True, capture_output=True)
    paths = {name: (os.path.join(work, name + ".crt"), os.path.join(work, name + ".key"))
             for name in ("ca", "server", "client")}
    openssl("-subj", "/CN=ca", "-keyout", paths["ca"][1], "-out", paths["ca"][0])
    for name, usage, san in (("server", "serverAuth", "DNS:localhost"), ("client", "clientAuth", "DNS:envoy.test")):
        openssl("-subj", "/CN=" + name, "-CA", paths["ca"][0], "-CAkey", paths["ca"][1],
                "-addext", "extendedKeyUsage=" + usage, "-addext", "subjectAltName=" + san,
                "-keyout", paths[name][1], "-out", paths[name][0])
    return paths


def check_mutual_tls(binary, work, grpc, health_pb2, health_pb2_grpc):
    certs = make_certificates(work)
    tls_work = os.path.join(work, "tls")
    os.makedirs(tls_work)
    servers = Servers(binary, tls_work,
                      ["--grpc-tls", "on", "--grpc-tls-cert", certs["server"][0], "--grpc-tls-key", certs["server"][1],
                       "--grpc-tls-client-ca", certs["ca"][0], "--grpc-tls-client-san", "envoy.test"])
    read = lambda path: open(path, "rb").read()  # noqa: E731
    target = "127.0.0.1:%d" % servers.grpc_port
    options = [("grpc.ssl_target_name_override", "localhost"), ("grpc.use_local_subchannel_pool", 1)]

    def serving(credentials):
        channel = grpc.secure_channel(target, credentials, options) if credentials else grpc.insecure_channel(target)
        try:
            status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5).status
            return status == health_pb2.HealthCheckResponse.SERVING
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNAVAILABLE, e
            return False
        finally:
            channel.close()
    try:
        ca = read(certs["ca"][0])
        assert serving(grpc.ssl_channel_credentials(ca, read(certs["client"][1]), read(certs["client"][0]))), \
            servers.read_log()
        assert not serving(grpc.ssl_channel_credentials(ca)), "served without a client certificate"
        assert not serving(None), "served in plaintext"
    finally:
        servers.stop()


def run(binary, proto_dir):
    work = tempfile.mkdtemp(prefix="rls-python-")
    generate_stubs(proto_dir, os.path.join(work, "stubs"))
    import grpc
    from envoy.service.ratelimit.v3 import rls_pb2, rls_pb2_grpc
    from envoy.extensions.common.ratelimit.v3 import ratelimit_pb2
    from rl_health import health_pb2, health_pb2_grpc

    servers = Servers(binary, work)
    try:
        channel = grpc.insecure_channel("127.0.0.1:%d" % servers.grpc_port)
        health = health_pb2_grpc.HealthStub(channel)
        assert health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == \
            health_pb2.HealthCheckResponse.SERVING

        # Bytes that are not a RateLimitRequest (field 1 says 100 bytes follow; none do).
        raw = channel.unary_unary("/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
                                  request_serializer=lambda b: b, response_deserializer=lambda b: b)
        try:
            raw(b"\x0a\x64abc", timeout=5)
            raise AssertionError("a malformed message was answered")
        except grpc.RpcError as e:
            assert e.code() != grpc.StatusCode.OK, e
        assert servers.redis_cli("DBSIZE") == "0", "the malformed message charged something"

        stub = rls_pb2_grpc.RateLimitServiceStub(channel)
        try:
            stub.ShouldRateLimit(rls_pb2.RateLimitRequest(domain=""), timeout=5)
            raise AssertionError("an empty domain was answered")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
            assert "domain" in e.details(), e.details()

        entry = ratelimit_pb2.RateLimitDescriptor.Entry(key="remote_address", value="10.0.0.1")
        req = rls_pb2.RateLimitRequest(domain="pytest", descriptors=[ratelimit_pb2.RateLimitDescriptor(entries=[entry])])
        # The six calls below must fall in one minute (the limit's window is the clock's minute):
        # start them in the first 40 s of one, which leaves 20 s for a loaded, sanitized build.
        wait_for(lambda: time.time() % 60 < 40, 25, "the first 40 s of a minute")
        codes = [stub.ShouldRateLimit(req, timeout=5).overall_code for _ in range(5)]
        ok, over = rls_pb2.RateLimitResponse.OK, rls_pb2.RateLimitResponse.OVER_LIMIT
        assert codes == [ok, ok, ok, over, over], codes
        last = stub.ShouldRateLimit(req, timeout=5)
        status = last.statuses[0]
        assert status.code == over and status.limit_remaining == 0, last
        assert status.current_limit.requests_per_unit == 3, last
        assert status.current_limit.unit == rls_pb2.RateLimitResponse.RateLimit.MINUTE, last
        assert 0 < status.duration_until_reset.seconds <= 60, last
        keys = {h.key for h in last.response_headers_to_add}
        assert {"RateLimit", "RateLimit-Policy"} <= keys, keys
    finally:
        servers.stop()
    check_mutual_tls(binary, work, grpc, health_pb2, health_pb2_grpc)
    print("ok: python grpcio client against ratelimitd (plaintext and mutual TLS)")


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2])
