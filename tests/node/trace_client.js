// An OpenTelemetry-instrumented Node client of ratelimitd: the SDK (@opentelemetry/sdk-node)
// with its HTTP instrumentation, calling GET /v1/check inside a span of its own. The HTTP
// instrumentation makes a client span for the call and sends its W3C traceparent; this prints
// that client span's ids as JSON, so the test can find ratelimitd's span among its children.
//
// usage: node trace_client.js PORT  (NODE_PATH names the cache dir's node_modules)
'use strict';

const { NodeSDK } = require('@opentelemetry/sdk-node');
const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
const { InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');

const exporter = new InMemorySpanExporter();
const sdk = new NodeSDK({
  spanProcessors: [new SimpleSpanProcessor(exporter)],
  instrumentations: [new HttpInstrumentation()],
});
sdk.start();

// Required after start(): the instrumentation patches node:http as it is loaded.
const http = require('node:http');
const { trace, SpanKind } = require('@opentelemetry/api');

const port = Number(process.argv[2]);
const tracer = trace.getTracer('ratelimitd-test-client');

tracer.startActiveSpan('checkout', (parent) => {
  http.get({ host: '127.0.0.1', port, path: '/v1/check?policy=tb&tenant=node' }, (res) => {
    res.resume();
    res.on('end', async () => {
      parent.end();
      // The instrumentation ends its client span once the response is done with, after this
      // listener: await it in the in-memory exporter (10 s at most).
      let client;
      for (let tries = 0; tries < 1000 && !client; ++tries) {
        client = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.CLIENT);
        if (!client) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const ids = client ? client.spanContext() : {};
      process.stdout.write(JSON.stringify({
        status: res.statusCode,
        trace_id: ids.traceId,
        client_span_id: ids.spanId,
        parent_span_id: parent.spanContext().spanId,
        client_parent_span_id: client ? client.parentSpanContext?.spanId ?? client.parentSpanId : undefined,
        sent_traceparent: res.req.getHeader('traceparent'),
      }) + '\n');
      await sdk.shutdown();
    });
  }).on('error', (e) => {
    process.stderr.write(String(e) + '\n');
    process.exit(1);
  });
});
