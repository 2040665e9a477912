// The Node peer: rate-limiter-flexible (RateLimiterRedis) behind node's http server, answering
// the same POST /v1/check as ratelimitd, for a comparison row in bench/run.sh.
const http = require('http');
const Redis = require('ioredis');
const { RateLimiterRedis } = require('rate-limiter-flexible');

const redis = new Redis({ host: '127.0.0.1', port: Number(process.env.REDIS_PORT), enableOfflineQueue: true });
const limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: 'rlf', points: 100, duration: 60 });

http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    let tenant = 'unknown';
    try { tenant = JSON.parse(body).tenant; } catch (e) { res.writeHead(400); res.end(); return; }
    limiter.consume(tenant, 1).then((r) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-RateLimit-Remaining': r.remainingPoints });
      res.end('{"allowed":true}');
    }).catch((r) => {
      if (r instanceof Error) { res.writeHead(503); res.end(); return; }
      res.writeHead(429, { 'Retry-After': Math.ceil(r.msBeforeNext / 1000) });
      res.end('{"allowed":false}');
    });
  });
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening on ' + process.env.PORT));
