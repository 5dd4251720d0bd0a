// Redaction against seeded random input: JSON of random shape with secrets under secret names in any spelling,
// in JWTs, URL passwords and known tokens, nested as JSON inside strings, framed as Socket.IO, SockJS, Engine.IO
// or behind an XSSI prefix; and bytes (protobuf-like) with JWTs after random framing bytes, some reading as token
// characters. Every secret put in must be gone from what comes out, and bytes keep their length. A run of this
// kind found JSON encoded twice kept its secrets, and JWTs after two framing letters (a protobuf field 8's tag
// and length) or glued to another were missed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redactor } from '../../capture/redact.js';
import { mulberry32 } from '../../core/index.js';

const r = new Redactor(Buffer.alloc(32, 7));
const jwt = (s: string) => `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx${'A'.repeat(s.length % 7)}In0.${s}`;
const SECRET_KEYS = ['password', 'accessToken', 'Access-Token', 'refresh_token', 'IdToken', 'client_secret', 'apiKey', 'X-Api-Key', 'Authorization', 'newPassword', 'password_confirmation', 'sessionToken', 'privateKey', 'credential', 'passcode', 'webhookSecret'];
const PLAIN_KEYS = ['id', 'name', 'data', 'items', 'nextPageToken', 'token_type', 'value', 'note', 'url'];

function randomText(seed: number): { text: string; secrets: string[] } {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const secrets: string[] = [];
  const secret = () => {
    const s = `zqf${seed.toString(36)}x${secrets.length}`;
    secrets.push(s);
    return s;
  };
  const value = (depth: number): unknown => {
    const k = rnd();
    if (depth > 3 || k < 0.3) {
      const w = rnd();
      if (w < 0.15) return jwt(secret());
      if (w < 0.22) return `postgres://u:${secret()}@db/x`;
      if (w < 0.26) return `ghp_${secret().padEnd(36, '0')}`;
      return pick(['plain', 'hello world', 42, true, null, 'https://example.com/a']);
    }
    if (k < 0.5) return Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => value(depth + 1));
    if (k < 0.6) return JSON.stringify({ wrapped: value(depth + 1) });
    const o: Record<string, unknown> = {};
    for (let i = 0; i < 1 + Math.floor(rnd() * 4); i++) {
      if (rnd() < 0.35) {
        const s = secret();
        o[pick(SECRET_KEYS)] = rnd() < 0.5 ? s : [s, { x: s }];
      } else o[pick(PLAIN_KEYS)] = value(depth + 1);
    }
    return o;
  };
  const json = JSON.stringify(value(0));
  const frame = pick(['json', 'sio', 'sockjs', 'eio', 'xssi'] as const);
  const text = { json, sio: `42["ev",${json}]`, sockjs: `a${JSON.stringify([json])}`, eio: `40{"sid":"a"}\x1e42["ev",${json}]`, xssi: `)]}'\n${json}` }[frame];
  return { text, secrets };
}

function randomBytes(seed: number): { bytes: Buffer; secrets: string[] } {
  const rnd = mulberry32(seed);
  const parts: Buffer[] = [];
  const secrets: string[] = [];
  const junk = () => Buffer.from(Array.from({ length: Math.floor(rnd() * 8) }, () => Math.floor(rnd() * 256)));
  for (let k = 0; k < 1 + Math.floor(rnd() * 5); k++) {
    const s = `zqb${seed.toString(36)}x${k}`;
    secrets.push(s);
    parts.push(junk(), Buffer.from(jwt(`sig${s}`), 'latin1'));
  }
  parts.push(junk());
  return { bytes: Buffer.concat(parts), secrets };
}

describe('redaction against seeded random input', () => {
  it('leaves no secret in 2,000 random texts', () => {
    const leaks: string[] = [];
    for (let seed = 1; seed <= 2000; seed++) {
      const { text, secrets } = randomText(seed);
      const out = r.textValue(text) ?? text;
      for (const s of secrets) if (out.includes(s)) leaks.push(`seed ${seed}: ${s} in ${out.slice(0, 200)}`);
    }
    assert.deepEqual(leaks.slice(0, 3), []);
  });

  it('leaves no JWT in 3,000 random buffers, and keeps their lengths', () => {
    const leaks: string[] = [];
    for (let seed = 1; seed <= 3000; seed++) {
      const { bytes, secrets } = randomBytes(seed);
      const out = r.jwtBytes(bytes);
      if (out.length !== bytes.length) leaks.push(`seed ${seed}: length ${bytes.length} → ${out.length}`);
      const text = out.toString('latin1');
      for (const s of secrets) if (text.includes(s)) leaks.push(`seed ${seed}: ${s}`);
    }
    assert.deepEqual(leaks.slice(0, 3), []);
  });
});
