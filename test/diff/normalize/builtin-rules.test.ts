// The built-in rules' table: the names `normalize.disable` takes come from it,
// and its value rules run in step order with the config's patterns at theirs.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { diffCaptures } from '../../../diff/index.js';
import { startRecording } from '../../../scenario/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { BUILTIN_RULES, BUILTIN_RULE_NAMES, CONFIG_PATTERNS_STEP } from '../../../diff/normalize/builtin-rules.js';
import { compileRules } from '../../../diff/normalize/rules.js';

describe('the built-in rules table', () => {
  it('lists the names in the order docs/diff.md shows them', () => {
    assert.deepEqual(BUILTIN_RULE_NAMES, [
      'timestamp-keys', 'epoch-ms-keys', 'process-stats', 'resource-versions', 'graphql-tracing', 'request-id-keys', 'iso-time', 'http-dates', 'runtime-dates', 'epoch-timestamps', 'stopwatch-text', 'relative-times', 'multipart-boundary', 'server-home',
      'ipv4-mapped-loopback', 'loopback-port', 'session-id', 'ulid', 'uuid', 'redacted', 'generated-ids', 'numeric-ids', 'id-key-tokens', 'volatile-headers',
      'ws-ping-pong', 'cookies', 'issued-values',
    ]);
  });

  it('gives each value rule its own step, none at the config patterns\' step', () => {
    const steps = BUILTIN_RULES.flatMap((r) => (r.value ? [r.value.step] : []));
    assert.equal(new Set(steps).size, steps.length);
    assert.ok(!steps.includes(CONFIG_PATTERNS_STEP));
  });

  it('compiles value rules in step order: rewrites, the config\'s patterns, then ordinal ids and generated shapes', () => {
    const rules = compileRules({ patterns: [{ name: 'mine', regex: 'x', replace: 'y' }] });
    assert.deepEqual(rules.valueRules.map((r) => r.name), [
      'server-home', 'ipv4-mapped-loopback', 'loopback-port', 'multipart-boundary', 'iso-time', 'http-dates', 'runtime-dates', 'epoch-timestamps', 'stopwatch-text', 'relative-times', 'mine', 'session-id', 'ulid', 'uuid', 'redacted', 'generated-ids',
    ]);
  });

  it('drops a disabled rule from every part it contributes to', () => {
    const on = compileRules({});
    const off = compileRules({ disable: ['request-id-keys', 'volatile-headers', 'ws-ping-pong', 'epoch-timestamps', 'cookies', 'http-dates', 'numeric-ids', 'generated-ids', 'id-key-tokens'] });
    assert.equal(on.maskedHeaders.get('x-request-id'), '<ID>');
    assert.equal(on.maskedHeaders.get('date'), '<VOLATILE>');
    assert.equal(on.maskedHeaders.get('grpc-timeout'), '<VOLATILE>', "a gRPC call's deadline left is a clock reading");
    for (const name of ['traceresponse', 'x-b3-traceid', 'x-amz-request-id', 'x-ms-request-id', 'x-github-request-id']) assert.equal(on.maskedHeaders.get(name), '<ID>', name);
    assert.equal(on.maskedHeaders.get('x-timer'), '<VOLATILE>');
    assert.ok(on.keyRules.some((r) => r.name === 'request-id-keys'));
    assert.equal(off.maskedHeaders.size, 0);
    assert.ok(!off.keyRules.some((r) => r.name === 'request-id-keys'));
    assert.deepEqual([on.maskBodyLength, on.dropPingPong, off.maskBodyLength, off.dropPingPong], [true, true, false, false]);
    assert.deepEqual([on.epochNumbers, on.cookies, on.cookieLifetimes, off.epochNumbers, off.cookies, off.cookieLifetimes], [true, true, true, false, false, false]);
    assert.deepEqual([on.numericIds, off.numericIds, on.idKeyTokens, off.idKeyTokens], [true, false, true, false]);
    // The shapes' ordinal classes come and go with their rules.
    assert.ok(on.ordinalClasses.includes('HEX12') && on.ordinalClasses.includes('INT') && on.ordinalClasses.includes('B64_8'));
    assert.ok(!off.ordinalClasses.includes('HEX12') && !off.ordinalClasses.includes('INT') && !off.ordinalClasses.includes('B64_8'));
  });
});

describe('what a process reports of itself, a Kubernetes revision and a GraphQL trace, from real servers', () => {
  // Each run is a fresh server process, as each deployment is: its pid, its memory, its store's revision and its
  // resolvers' timings are new every time. A change of what the trace or the object says is still a finding.
  const t = tempDir();
  const children: Array<ReturnType<typeof spawn>> = [];
  after(() => {
    for (const c of children) c.kill();
  });
  const SERVER = `
    const http = require('node:http');
    const variant = process.argv[1];
    const t0 = process.hrtime.bigint();
    const ns = () => Number(process.hrtime.bigint() - t0);
    let revision = 1000 + Math.floor(Math.random() * 1e6);
    http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      const now = new Date();
      if (req.url === '/health') return res.end(JSON.stringify({ status: 'UP', pid: process.pid, ppid: process.ppid, memory: process.memoryUsage(), version: variant === 'new' ? '2.0' : '1.0' }));
      if (req.url === '/deployments/web') return res.end(JSON.stringify({ kind: 'Deployment', metadata: { name: 'web', resourceVersion: String(revision++), generation: 3 }, spec: { replicas: variant === 'new' ? 3 : 2 } }));
      const start = ns();
      const field = variant === 'new' ? 'greeting' : 'hello';
      res.end(JSON.stringify({ data: { [field]: 'world' }, extensions: { tracing: { version: 1, startTime: now.toISOString(), endTime: new Date(now.getTime() + 1).toISOString(), duration: ns() - start + 1,
        parsing: { startOffset: ns() - start, duration: 1 + (ns() % 9000) }, validation: { startOffset: ns() - start, duration: 1 + (ns() % 7000) },
        execution: { resolvers: [{ path: [field], parentType: 'Query', fieldName: field, returnType: 'String!', startOffset: ns() - start, duration: 1 + (ns() % 5000) }] } } } }));
    }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;
  const record = async (variant: 'old' | 'new', slug: string): Promise<string> => {
    const child = spawn(process.execPath, ['-e', SERVER, variant], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const [port] = (await once(child.stdout!, 'data')) as [Buffer];
    const rec = await startRecording({ target: `http://127.0.0.1:${String(port).trim()}`, out: t.path(`${slug}.har`), label: slug, bbHome: t.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    try {
      for (const path of ['/health', '/deployments/web', '/graphql', '/deployments/web']) await (await fetch(`${rec.url}${path}`)).text();
    } finally {
      await rec.close(1000);
      child.kill();
    }
    return rec.out;
  };

  it('compares two runs equal, and finds each change of what they report', async () => {
    const [a, b] = [await record('old', 'a'), await record('old', 'b')];
    const same = await diffCaptures(a, b, {});
    assert.equal(same.verdict, 'match', same.differences.map((d) => `${d.path}: ${JSON.stringify(d.old)} → ${JSON.stringify(d.new)}`).join('\n'));
    const changed = await diffCaptures(a, await record('new', 'c'), {});
    assert.deepEqual(changed.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort(), [
      'real added response.body.data.greeting',
      'real changed response.body.extensions.tracing.execution.resolvers[].fieldName',
      'real changed response.body.extensions.tracing.execution.resolvers[].path[]',
      'real changed response.body.spec.replicas',
      'real changed response.body.version',
      'real removed response.body.data.hello',
    ]);
  });

  it('takes only what the key says: a positive integer, a revision in digits, a trace in apollo-tracing\'s format', () => {
    const rules = compileRules({});
    const rule = (k: string, v: unknown) => rules.keyRules.find((r) => r.test(k, v) && (!r.accepts || r.accepts(v, undefined)))?.name;
    assert.equal(rule('pid', 4242), 'process-stats');
    assert.equal(rule('heapUsed', 5_000_000), 'process-stats');
    assert.equal(rule('pid', 'P-1042'), undefined, 'a product id under pid is compared');
    assert.equal(rule('pid', 0), undefined);
    assert.equal(rule('rss', 'https://example.test/feed.xml'), undefined);
    assert.equal(rule('resourceVersion', '48213'), 'resource-versions');
    assert.equal(rule('resourceVersion', 'v2'), undefined);
    assert.equal(rule('tracing', { version: 1, startTime: 'x', duration: 5, execution: {} }), 'graphql-tracing');
    assert.equal(rule('tracing', { enabled: true }), undefined, 'another tracing object is compared');
  });
});
