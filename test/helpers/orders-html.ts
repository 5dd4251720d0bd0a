// A small server-rendered app, as Rails, Django or Laravel render one: a
// session cookie, a CSRF token handed out only inside the page (a hidden
// input and a meta tag) that every form post must send back, an order
// created by a form post and shown at its Location, whose page links its
// edit form with a version token found only in the link. A request with
// another session's token is refused (422), an unknown order or version is
// 404: so a replay or a mirror that sends a page's values as recorded, not
// its target's own, is refused. `drive` is a browser's visit, done with
// undici: it reads what it sends back from the pages, as a browser would.
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Client } from 'undici';
import { bodyServer, closeHttpAndWs } from './servers.js';

/** A running build of the app. */
export interface OrdersApp {
  url: string;
  /** Each request as "METHOD path status", in order. */
  log: string[];
  /** Requests it refused (422) or did not find (404). */
  refused(): number;
  close(): Promise<void>;
}

/**
 * Starts one build: order ids count from `firstId`; `heading` is the order page's title (a build may change it).
 */
export async function startOrdersApp(firstId: number, heading = 'Order'): Promise<OrdersApp> {
  const sessions = new Map<string, string>();
  const orders = new Map<number, { name: string; version: string; cancelled: boolean }>();
  let next = firstId;
  const log: string[] = [];
  const token = () => randomBytes(12).toString('base64url');
  const server = bodyServer((req, res, bytes, url) => {
    const send = (status: number, body: string, headers: Record<string, string> = {}) => {
      log.push(`${req.method} ${url.pathname} ${status}`);
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(body);
    };
    let sid = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    const cookie: Record<string, string> = {};
    if (!sid || !sessions.has(sid)) {
      sid = token();
      sessions.set(sid, token());
      cookie['set-cookie'] = `sid=${sid}; Path=/; HttpOnly`;
    }
    const csrf = sessions.get(sid)!;
    const form = new URLSearchParams(bytes.toString('utf8'));
    const page = (title: string, body: string) =>
      `<!doctype html><html><head><meta name="csrf-token" content="${csrf}"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;
    const hidden = `<input type="hidden" name="authenticity_token" value="${csrf}">`;
    if (req.method === 'POST' && form.get('authenticity_token') !== csrf) return send(422, page('Refused', '<p>The change you wanted was rejected.</p>'), cookie);
    if (req.method === 'GET' && url.pathname === '/orders/new') return send(200, page('New order', `<form action="/orders" method="post">${hidden}<input name="name"></form>`), cookie);
    if (req.method === 'POST' && url.pathname === '/orders') {
      const id = next++;
      orders.set(id, { name: form.get('name') ?? '', version: token(), cancelled: false });
      return send(303, '', { ...cookie, location: `/orders/${id}` });
    }
    const m = /^\/orders\/(\d+)(\/edit|\/cancel)?$/.exec(url.pathname);
    const order = m ? orders.get(Number(m[1])) : undefined;
    if (!m || !order) return send(404, page('Not found', '<p>No such order.</p>'), cookie);
    if (m[2] === '/edit') {
      if (url.searchParams.get('v') !== order.version) return send(404, page('Not found', '<p>That version is gone.</p>'), cookie);
      return send(200, page(`Edit ${order.name}`, `<form action="/orders/${m[1]}/cancel" method="post">${hidden}<button>Cancel it</button></form>`), cookie);
    }
    if (m[2] === '/cancel' && req.method === 'POST') {
      order.cancelled = true;
      return send(303, '', { ...cookie, location: `/orders/${m[1]}` });
    }
    send(200, page(`${heading} ${order.name}`, `<p>${order.cancelled ? 'Cancelled' : 'Open'}</p><a href="/orders/${m[1]}/edit?v=${order.version}">Edit</a>`), cookie);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    refused: () => log.filter((l) => / (404|422)$/.test(l)).length,
    close: () => closeHttpAndWs(server),
  };
}

/** A browser's visit through `url`: a new order's form, the post, its page, the edit link, the cancel form. Resolves to the order page's final text. */
export async function visitOrders(url: string, name: string): Promise<string> {
  const client = new Client(url);
  let cookie = '';
  const go = async (method: 'GET' | 'POST', path: string, form?: Record<string, string>) => {
    const res = await client.request({
      method,
      path,
      headers: { ...(cookie ? { cookie } : {}), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    const set = res.headers['set-cookie'];
    if (set) cookie = String(set).split(';')[0]!;
    const text = await res.body.text();
    if (res.statusCode >= 400) throw new Error(`${method} ${path}: ${res.statusCode}`);
    return { text, location: res.headers.location as string | undefined };
  };
  const field = (html: string, re: RegExp) => re.exec(html)?.[1] ?? '';
  try {
    const created = await go('POST', '/orders', { authenticity_token: field((await go('GET', '/orders/new')).text, /name="authenticity_token" value="([^"]+)"/), name });
    const shown = await go('GET', created.location!);
    const edit = await go('GET', field(shown.text, /<a href="([^"]+)"/));
    const cancelled = await go('POST', field(edit.text, /<form action="([^"]+)"/), { authenticity_token: field(edit.text, /name="authenticity_token" value="([^"]+)"/) });
    return (await go('GET', cancelled.location!)).text;
  } finally {
    await client.close();
  }
}
