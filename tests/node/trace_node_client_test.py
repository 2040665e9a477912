#!/usr/bin/python3
"""A real OpenTelemetry-instrumented caller: Node's @opentelemetry/sdk-node with its HTTP
instrumentation (tests/node/trace_client.js) calls GET /v1/check on the real binary, which
exports over OTLP/HTTP to a small receiver here that decodes with stubs generated at test time
from proto/opentelemetry by grpc_tools.protoc. ratelimitd's check span must be a child of the
Node client's HTTP span, in its trace, with its store call's span as its own child.

The npm packages are installed once into a cache directory (RATELIMITD_NPM_CACHE, default
~/.cache/ratelimitd/npm-otel) by the npm client, at the versions pinned below.

usage: trace_node_client_test.py RATELIMITD_BINARY PROTO_DIR
"""
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grpc"))
from rls_python_client_test import free_port, wait_for  # noqa: E402  the tests' port protocol

NPM_PACKAGES = ["@opentelemetry/sdk-node@0.223.0", "@opentelemetry/instrumentation-http@0.223.0",
                "@opentelemetry/sdk-trace-base@2.12.1", "@opentelemetry/api@1.9.1"]

CONFIG = "policies:\n  tb: { algorithm: token_bucket, limit: 20, window: 24h }\n"


def node_modules():
    cache = os.environ.get("RATELIMITD_NPM_CACHE", os.path.expanduser("~/.cache/ratelimitd/npm-otel"))
    marker = os.path.join(cache, "installed.txt")
    if not os.path.exists(marker) or open(marker).read() != "\n".join(NPM_PACKAGES):
        os.makedirs(cache, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", cache, "--no-audit", "--no-fund", "--no-save"] + NPM_PACKAGES,
                       check=True, stdout=subprocess.DEVNULL)
        with open(marker, "w") as f:
            f.write("\n".join(NPM_PACKAGES))
    return os.path.join(cache, "node_modules")


def otlp_stubs(proto_dir, out_dir):
    from grpc_tools import protoc  # noqa: imported late: only this test needs it
    protos = ["opentelemetry/proto/common/v1/common.proto", "opentelemetry/proto/resource/v1/resource.proto",
              "opentelemetry/proto/trace/v1/trace.proto",
              "opentelemetry/proto/collector/trace/v1/trace_service.proto"]
    if protoc.main(["protoc", "-I" + proto_dir, "--python_out=" + out_dir] +
                   [os.path.join(proto_dir, p) for p in protos]) != 0:
        raise AssertionError("grpc_tools.protoc failed on the OTLP protos")
    sys.path.insert(0, out_dir)
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    return trace_service_pb2


class Receiver:
    """OTLP/HTTP: POST /v1/traces bodies decoded into spans."""

    def __init__(self, messages):
        self.spans = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802  the http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = messages.ExportTraceServiceRequest()
                request.ParseFromString(body)
                for rs in request.resource_spans:
                    for ss in rs.scope_spans:
                        receiver.spans.extend(ss.spans)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def endpoint(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]


def main(binary, proto_dir):
    modules = node_modules()
    work = tempfile.mkdtemp(prefix="ratelimitd-node-")
    messages = otlp_stubs(proto_dir, work)
    receiver = Receiver(messages)
    config = os.path.join(work, "ratelimitd.yaml")
    with open(config, "w") as f:
        f.write(CONFIG)
    log_path = os.path.join(work, "ratelimitd.log")
    # Ratio 0, parent based: only a caller's sampled trace is followed.
    proc = subprocess.Popen([binary, "--config", config, "--listen", "127.0.0.1:0", "--trace-endpoint",
                             receiver.endpoint(), "--trace-sampler-arg", "0"],
                            stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
    try:
        found = wait_for(lambda: re.search(r"listening on 127\.0\.0\.1:(\d+)", open(log_path).read()), 15,
                         "ratelimitd to listen")
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trace_client.js")
        out = subprocess.run(["node", script, found.group(1)], check=True, capture_output=True, text=True,
                             env=dict(os.environ, NODE_PATH=modules), timeout=60)
        client = json.loads(out.stdout)
        assert client["status"] == 200, client
        assert client["client_span_id"] and client["client_parent_span_id"] == client["parent_span_id"], client
        assert client["sent_traceparent"] == "00-%s-%s-01" % (client["trace_id"], client["client_span_id"]), client
        wait_for(lambda: len(receiver.spans) >= 2, 30, "the check's spans")
        assert len(receiver.spans) == 2, receiver.spans
        server = [s for s in receiver.spans if s.kind == s.SPAN_KIND_SERVER]
        store = [s for s in receiver.spans if s.kind == s.SPAN_KIND_INTERNAL]
        assert len(server) == 1 and len(store) == 1, receiver.spans
        assert server[0].trace_id.hex() == client["trace_id"], (server[0], client)
        assert server[0].parent_span_id.hex() == client["client_span_id"], (server[0], client)
        assert server[0].name == "GET /v1/check", server[0].name
        assert store[0].parent_span_id == server[0].span_id, store[0]
        assert store[0].name == "ratelimit.store embedded", store[0].name
        print("ok: ratelimitd's span is a child of the Node client span %s in trace %s" %
              (client["client_span_id"], client["trace_id"]))
    finally:
        proc.terminate()
        proc.wait(30)
        receiver.server.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
