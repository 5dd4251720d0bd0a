// The route a shadow run counts an exchange under (scenario/shadow/route.ts): one row per kind of request, so a
// run's table stays as long as the service has routes, whatever ids and secrets its paths carry.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { routePath } from '../../../scenario/shadow/route.js';

describe('routePath', () => {
  it('names numbers, generated ids and redacted secrets {id}, and keeps words', () => {
    const rows: Array<[string, string]> = [
      ['http://127.0.0.1:8080/items/7?x=1', '/items/{id}'],
      ['/orders/5f0c2a9e1b7d4c3a/lines', '/orders/{id}/lines'],
      // A magic link's JWT as the capture holds it: redacted, one per session (raw and percent-encoded).
      ['/magic/<redacted:0a1b2c3d>', '/magic/{id}'],
      ['/magic/%3Credacted:0a1b2c3d%3E', '/magic/{id}'],
      ['/blob/<redacted:0a1b2c3d~~~~~>', '/blob/{id}'],
      ['/users/me/settings', '/users/me/settings'],
      // As the diff names the path (a URL's pathname), so a row and its findings name a route alike.
      ['http://127.0.0.1:8080/<b>hi</b>', '/%3Cb%3Ehi%3C/b%3E'],
      ['/a/./b/../c', '/a/c'],
      ['/', '/'],
    ];
    for (const [url, route] of rows) assert.equal(routePath(url), route, url);
  });
});
