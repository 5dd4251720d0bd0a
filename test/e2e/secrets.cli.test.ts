// Secrets through a real `bb capture` child (issue 34 items 4-6): real
// clients (curl, fetch, raw sockets, node:http2) send a secret at every
// place a probe found one in clear, and every file bb leaves is searched
// decoded (base64 strings, URL escapes, the journal line by line, the body
// sidecar as bytes): the HAR of a normal run, and the journal and sidecar
// a kill -9 leaves. The same traffic with --no-redact finds every secret,
// so the searches can fail.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startBb, type BbProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { F, T, h2Frame } from '../helpers/h2-frames.js';
import { decodedStrings } from '../helpers/decoded.js';
import { WebSocket, WebSocketServer } from 'ws';

const run = promisify(execFile);
const tmp = tempDir();
const servers: Array<http.Server | net.Server> = [];
const children: BbProcess[] = [];
after(() => {
  for (const b of children) if (b.child.exitCode === null && b.child.signalCode === null) b.child.kill('SIGKILL');
  for (const s of servers) {
    if (s instanceof http.Server) s.closeAllConnections();
    s.close();
  }
});

/** Each secret unique and free of hex-only text, so no placeholder can contain one by chance. */
const S = {
  xAuth: 'zqsx-xauth', amz: 'zqsx-amz', csrf: 'zqsx-csrf', authInfo: 'zqsx-authinfo', basic: 'zqsx-basic',
  locQuery: 'zqsx-locq', locFrag: 'zqsx-locfrag', refresh: 'zqsx-refresh', tokenArr: 'zqsx-tokarr',
  pwArr: 'zqsx-pwarr', csObj: 'zqsx-csobj', jwt: 'zqsx-jwt', pk: 'zqsx-pk', multipart: 'zqsx-multipart',
  xssi: 'zqsx-xssi', deep: 'zqsx-deep', cookie431: 'zqsx-cookie431', basic431: 'zqsx-431basic', link: 'zqsx-link',
  // Names spelled otherwise than the built-in list, and a request's secrets echoed back by the server.
  echoAuth: 'zqsx-echoauth', echoCookie: 'zqsx-echocookie', googKey: 'zqsx-googkey', cogAccess: 'zqsx-cogaccess', cogId: 'zqsx-cogid',
  cogRefresh: 'zqsx-cogrefresh', vendor: 'zqsx-vendor',
  // Socket.IO, SockJS and STOMP frames on a socket; JWTs under names no list holds; Google's `credential`.
  sio: 'zqsx-sio', sockjs: 'zqsx-sockjs', stomp: 'zqsx-stomp', jwtPath: 'zqsx-pathjwt', jwtHeader: 'zqsx-hdrjwt', jwtText: 'zqsx-textjwt', gis: 'zqsx-gis',
  // JWTs in bytes: a gRPC reply's message, a protobuf body, a binary WebSocket message.
  grpcJwt: 'zqsx-grpcjwt', protoJwt: 'zqsx-protojwt', wsBinJwt: 'zqsx-wsbinjwt',
  // Secrets no name marks: a connection string's password, a PEM private key, a GitHub token quoted in an error.
  dbPassword: 'zqsx-dbpw', pemKey: 'zqsx-pemkey', ghToken: 'zqsxghtoken',
  // A JWT under a query name no list holds, JSON in a form field (Slack's payload), a JWT in a multipart field.
  stateJwt: 'zqsx-statejwt', slack: 'zqsx-slack', partJwt: 'zqsx-partjwt',
  // kubectl's bearer token, offered as a WebSocket subprotocol (base64url: no dash in the secret).
  k8s: 'zqsxkubetoken', newPw: 'zqsx-newpw', pwConfirm: 'zqsx-pwconfirm', qAccess: 'zqsx-qaccess', wsAuth: 'zqsx-wsauth', wsBearer: 'zqsx-wsbearer',
} as const;
const SECRETS = Object.values(S);

/** A JWT (header and claims as a real one's) whose signature segment is `secret`. */
const jwt = (secret: string) => `eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbm4iLCJpYXQiOjE3MDAwMDAwMDB9.${secret}`;

/** A protobuf string field: its tag, its length (one byte: under 128), its bytes. */
const protoString = (field: number, value: string) => Buffer.concat([Buffer.from([(field << 3) | 2, value.length]), Buffer.from(value, 'latin1')]);
/** One gRPC message frame: not compressed, its length, the message. */
const grpcFrame = (message: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);

/** An upstream that answers each path the way the probe's servers did. */
async function upstream(): Promise<number> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url!.startsWith('/redirect')) {
        res.writeHead(302, {
          Location: `/cb?access_token=${S.locQuery}#access_token=${S.locFrag}&token_type=bearer`,
          'Authentication-Info': `nextnonce="${S.authInfo}"`,
          Refresh: `0; url=/r?token=${S.refresh}`,
          Link: `</items?page=2&access_token=${S.link}>; rel="next"`,
        });
        res.end();
      } else if (req.url!.startsWith('/headers')) {
        // httpbin's /headers: the request's headers, echoed as JSON.
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ headers: { Authorization: req.headers.authorization, Cookie: req.headers.cookie, 'X-Goog-Api-Key': req.headers['x-goog-api-key'] } }));
      } else if (req.url === '/login') {
        // Cognito's InitiateAuth answer.
        res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify({ AuthenticationResult: { AccessToken: S.cogAccess, IdToken: S.cogId, RefreshToken: S.cogRefresh, TokenType: 'Bearer', ExpiresIn: 3600 } }));
      } else if (req.url === '/auth.AuthService/Login') {
        // A gRPC reply (over HTTP/1.1 here: bb reads any application/grpc body) whose message holds a JWT.
        res.writeHead(200, { 'Content-Type': 'application/grpc', 'grpc-status': '0' });
        res.end(grpcFrame(protoString(1, jwt(S.grpcJwt))));
      } else if (req.url === '/profile.pb') {
        res.writeHead(200, { 'Content-Type': 'application/x-protobuf' });
        res.end(protoString(2, jwt(S.protoJwt)));
      } else if (req.url === '/config') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ env: { DATABASE_URL: `postgres://app:${S.dbPassword}@db:5432/app` }, deployKey: `-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn${S.pemKey}\n-----END OPENSSH PRIVATE KEY-----` }));
      } else if (req.url === '/hooks') {
        res.writeHead(422, { 'Content-Type': 'text/plain' });
        res.end(`the token ghp_${S.ghToken}${'0'.repeat(36 - S.ghToken.length)} has no repo scope`);
      } else if (req.url === '/token.txt') {
        // A token endpoint that answers the JWT as plain text.
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end(jwt(S.jwtText));
      } else if (req.url === '/vendor') {
        // JSON under a type of the vendor's own that bb does not know.
        res.writeHead(200, { 'Content-Type': 'application/x-acme-session' });
        res.end(`{"session":{"sessionToken":"${S.vendor}"}}`);
      } else if (req.url === '/xssi') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(`)]}',\n{"access_token":"${S.xssi}","n":1}`);
      } else {
        res.end('ok');
      }
    });
  });
  // A GraphQL subscription socket (graphql-ws): the client's connection_init carries its credentials.
  // Like the Kubernetes API server, it chooses the channel protocol, never the bearer one.
  const wss = new WebSocketServer({ server, handleProtocols: (protocols) => [...protocols].find((p) => !p.startsWith('base64url.')) ?? false });
  wss.on('connection', (ws) => ws.on('message', () => ws.send('{"type":"connection_ack"}')));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

/** A bb capture child; resolves to it and its proxy URL. */
async function capture(target: string, out: string, extra: string[] = []): Promise<{ bb: BbProcess; url: string }> {
  const bb = startBb(['capture', '--target', target, '--out', out, '--quiet', ...extra], { BB_HOME: join(tmp.dir, 'home') });
  children.push(bb);
  const url = (await bb.waitFor(/capture: (http:\/\/127\.0\.0\.1:\d+)/, 60_000))[1]!;
  return { bb, url };
}

function nest(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { n: v };
  return v;
}

/** Sends every HTTP/1 secret through the proxy at `url` with real clients. */
async function sendSecrets(url: string): Promise<void> {
  const port = new URL(url).port;
  await run('curl', ['-sS', '-o', '/dev/null', `${url}/redirect`,
    '-H', `X-Auth-Token: ${S.xAuth}`, '-H', `X-Amz-Security-Token: ${S.amz}`, '-H', `X-CSRF-Token: ${S.csrf}`, '-H', `Authorization: Basic ${S.basic}`]);
  await run('curl', ['-sS', '-o', '/dev/null', '-g', `${url}/q?token[]=${S.tokenArr}&x=1`]);
  await run('curl', ['-sS', '-o', '/dev/null', '-F', 'user=ann', '-F', `password=${S.multipart}`, `${url}/multipart`]);
  const json = { password: [S.pwArr], client_secret: { v: S.csObj }, a: [{ b: { jwt: S.jwt, private_key: S.pk } }] };
  await (await fetch(`${url}/json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) })).text();
  await (await fetch(`${url}/deep`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(nest(300, { password: S.deep })) })).text();
  await (await fetch(`${url}/xssi`)).text();
  await run('curl', ['-sS', '-o', '/dev/null', `${url}/headers?accessToken=${S.qAccess}`,
    '-H', `Authorization: Bearer ${S.echoAuth}`, '-H', `Cookie: sid=${S.echoCookie}`, '-H', `X-Goog-Api-Key: ${S.googKey}`]);
  await (await fetch(`${url}/login`, { method: 'POST', headers: { 'content-type': 'application/x-amz-json-1.1' }, body: '{"AuthFlow":"USER_PASSWORD_AUTH"}' })).text();
  await (await fetch(`${url}/vendor`)).text();
  await (await fetch(`${url}/token.txt`)).text();
  await (await fetch(`${url}/config`)).text();
  await (await fetch(`${url}/cb?state=${jwt(S.stateJwt)}&x=1`)).text();
  await run('curl', ['-sS', '-o', '/dev/null', '--data', `payload=${encodeURIComponent(JSON.stringify({ type: 'block_actions', token: S.slack }))}`, `${url}/slack/actions`]);
  await run('curl', ['-sS', '-o', '/dev/null', '-F', 'note=hello', '-F', `assertion=${jwt(S.partJwt)}`, `${url}/upload`]);
  await (await fetch(`${url}/hooks`)).text();
  await (await fetch(`${url}/auth.AuthService/Login`, { method: 'POST', headers: { 'content-type': 'application/grpc' }, body: grpcFrame(protoString(1, 'ann')) })).arrayBuffer();
  await (await fetch(`${url}/profile.pb`)).arrayBuffer();
  await run('curl', ['-sS', '-o', '/dev/null', `${url}/magic/${jwt(S.jwtPath)}`, '-H', `X-Amzn-Oidc-Data: ${jwt(S.jwtHeader)}`]);
  await run('curl', ['-sS', '-o', '/dev/null', '--data', `credential=${S.gis}&g_csrf_token=x`, `${url}/gsi`]);
  await run('curl', ['-sS', '-o', '/dev/null', '-g', '--data', `user[email]=ann@example.com&user[password_confirmation]=${S.pwConfirm}`, `${url}/signup`]);
  await (await fetch(`${url}/password`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ newPassword: S.newPw }) })).text();
  const exec = new WebSocket(`${url.replace('http', 'ws')}/api/v1/namespaces/x/pods/y/exec`, [`base64url.bearer.authorization.k8s.io.${S.k8s}`, 'v4.channel.k8s.io']);
  await new Promise((resolve, reject) => (exec.once('open', resolve), exec.once('error', reject)));
  exec.close();
  await new Promise((resolve) => exec.once('close', resolve));
  const ws = new WebSocket(`${url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  ws.send(JSON.stringify({ type: 'connection_init', payload: { authToken: S.wsAuth, headers: { Authorization: `Bearer ${S.wsBearer}` } } }));
  await new Promise((resolve) => ws.once('message', resolve));
  ws.send(protoString(1, jwt(S.wsBinJwt)));
  await new Promise((resolve) => ws.once('message', resolve));
  // Socket.IO's connect with auth, a SockJS frame, a STOMP CONNECT: framed, not JSON as a whole.
  for (const frame of [`40{"token":"${S.sio}"}`, `a${JSON.stringify([JSON.stringify({ password: S.sockjs })])}`, `CONNECT\naccept-version:1.2\nlogin:ann\npasscode:${S.stomp}\n\n\0`]) {
    ws.send(frame);
    await new Promise((resolve) => ws.once('message', resolve));
  }
  ws.close();
  await new Promise((resolve) => ws.once('close', resolve));
  // A Cookie over 16 KiB: Node's parser refuses the head (431), bb keeps the packet.
  const sock = net.connect(Number(port), '127.0.0.1');
  sock.on('error', () => {});
  sock.write(`GET /big HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${S.basic431}\r\nCookie: sid=${S.cookie431}; pad=${'p'.repeat(17 * 1024)}\r\n\r\n`);
  const answer = await new Promise<string>((resolve) => {
    let got = '';
    sock.on('data', (c: Buffer) => (got += c.toString('latin1')));
    sock.on('close', () => resolve(got));
  });
  assert.match(answer, /^HTTP\/1\.1 431 /);
}

/** The journal's records decoded, plus the sidecar's bytes as text. */
function leftoverText(out: string): string {
  const journal = readFileSync(`${out}.journal`, 'utf8');
  const lines = journal.split('\n').filter((l) => l !== '').flatMap((l) => {
    try {
      return decodedStrings(JSON.parse(l));
    } catch {
      return [l];
    }
  });
  const bodies = existsSync(`${out}.bodies`) ? readFileSync(`${out}.bodies`) : Buffer.alloc(0);
  return [journal, ...lines, bodies.toString('latin1'), bodies.toString('utf8')].join('\n');
}

const leaked = (text: string, secrets: readonly string[]) => secrets.filter((s) => text.includes(s));

describe('no secret in any file bb capture writes', () => {
  it('a normal run: the HAR, decoded, holds none of them; --no-redact holds all', async () => {
    const target = `http://127.0.0.1:${await upstream()}`;
    for (const redact of [true, false]) {
      const out = join(tmp.dir, `normal-${redact}.har`);
      const { bb, url } = await capture(target, out, redact ? [] : ['--no-redact']);
      await sendSecrets(url);
      bb.child.kill('SIGINT');
      assert.equal(await bb.exited, 0, bb.stderr());
      const text = decodedStrings(JSON.parse(readFileSync(out, 'utf8'))).join('\n');
      if (redact) assert.deepEqual(leaked(text, SECRETS), []);
      else assert.deepEqual(leaked(text, SECRETS), SECRETS);
    }
  });

  it('after kill -9: the journal and the body sidecar, decoded, hold none of them; bb recover still writes the HAR', async () => {
    const target = `http://127.0.0.1:${await upstream()}`;
    for (const redact of [true, false]) {
      const out = join(tmp.dir, `killed-${redact}.har`);
      const { bb, url } = await capture(target, out, redact ? [] : ['--no-redact']);
      await sendSecrets(url);
      // End records are written before the last byte goes out: every exchange above is on disk.
      bb.child.kill('SIGKILL');
      await bb.exited;
      const text = leftoverText(out);
      if (!redact) {
        // In clear: the searches find what they look for.
        assert.deepEqual(leaked(text, SECRETS), SECRETS);
        continue;
      }
      assert.deepEqual(leaked(text, SECRETS), []);
      const recover = startBb(['recover', out], { BB_HOME: join(tmp.dir, 'home') });
      assert.equal(await recover.exited, 0, recover.stderr());
      const har = JSON.parse(readFileSync(out, 'utf8'));
      assert.deepEqual(leaked(decodedStrings(har).join('\n'), SECRETS), []);
      const json = har.log.entries.find((e: { request: { url: string } }) => e.request.url.endsWith('/json'));
      assert.match(json.request.postData.text, /"jwt":"<redacted:[0-9a-f]{8}>"/, 'bodies read back from the sealed sidecar');
    }
  });

  it('a broken h2 connection (a real h2 client, an upstream that breaks the protocol): _bb.rawPacket keeps no header or body bytes', async () => {
    const cookie = 'zqsx-h2cookie';
    const literal = (name: string, value: string) =>
      Buffer.concat([Buffer.from([0x00, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
    // The upstream answers stream 1 with a Set-Cookie (HPACK literal, in clear) and, in the same write, DATA on stream 0.
    const server = net.createServer((sock) => {
      sock.on('error', () => {});
      let got = 0;
      sock.on('data', (c: Buffer) => {
        got += c.length;
        if (got < 24 + 9 || sock.writableEnded) return;
        const block = Buffer.concat([Buffer.from([0x88]), literal('set-cookie', `sid=${cookie}`)]);
        sock.end(Buffer.concat([h2Frame(T.SETTINGS, 0, 0), h2Frame(T.HEADERS, F.END_HEADERS, 1, block), h2Frame(T.DATA, 0, 0, Buffer.from(`{"token":"${cookie}"}`))]));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    for (const redact of [true, false]) {
      const out = join(tmp.dir, `h2-${redact}.har`);
      const { bb, url } = await capture(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, out, redact ? [] : ['--no-redact']);
      const session = http2.connect(url);
      session.on('error', () => {});
      const req = session.request({ ':path': '/h2', authorization: 'Bearer zqsx-h2auth' });
      req.on('error', () => {});
      req.resume();
      await new Promise<void>((r) => {
        req.on('close', () => r());
        session.on('close', () => r());
      });
      session.destroy();
      bb.child.kill('SIGINT');
      assert.equal(await bb.exited, 0, bb.stderr());
      const har = JSON.parse(readFileSync(out, 'utf8'));
      const raw = har.log.entries.filter((e: { _bb?: { rawPacket?: string } }) => e._bb?.rawPacket !== undefined);
      assert.ok(raw.length > 0, 'the broken connection is an entry with its raw bytes');
      const text = decodedStrings(har).join('\n');
      if (redact) assert.deepEqual(leaked(text, [cookie, 'zqsx-h2auth']), []);
      else assert.ok(text.includes(cookie), 'in clear with --no-redact: the search can fail');
    }
  });
});
