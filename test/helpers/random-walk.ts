// A client's seeded random walk over the shadow service's routes
// (test/scenario/shadow/service.ts), through whatever listens at `url` (bb
// shadow, bb capture): logins whose session cookie later requests carry, item
// lists and reads of the ids they issued, orders created and read back, event
// streams read in part, WebSocket chats that send issued ids back, pages of
// markup. Several at once make traffic whose interleaving changes run to run.
import { Client } from 'undici';
import WebSocket from 'ws';

/** One client's random walk (seeded by `random`) of `steps` steps through `url`. */
export async function walk(url: string, user: number, random: () => number, steps = 16): Promise<void> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const c = new Client(url);
  let cookie = '';
  const items: string[] = [];
  const orders: number[] = [];
  const headers = () => ({ 'x-user': `user-${user}`, ...(cookie ? { cookie } : {}) });
  try {
    for (let i = 0; i < steps; i++) {
      const step = pick(['session', 'me', 'items', 'item', 'order', 'read-order', 'chat', 'events', 'note'] as const);
      if (step === 'session') {
        const res = await c.request({ method: 'GET', path: '/session', headers: headers() });
        cookie = String(res.headers['set-cookie']).split(';')[0]!;
        await res.body.text();
      } else if (step === 'items') {
        const res = await c.request({ method: 'GET', path: '/items', headers: headers() });
        items.push(((await res.body.json()) as { items: Array<{ id: string }> }).items[0]!.id);
      } else if (step === 'order') {
        const res = await c.request({ method: 'POST', path: '/orders', headers: { ...headers(), 'content-type': 'application/json' }, body: '{}' });
        orders.push(((await res.body.json()) as { id: number }).id);
      } else if (step === 'events') {
        const res = await c.request({ method: 'GET', path: '/events', headers: headers() });
        let got = '';
        for await (const chunk of res.body) if ((got += chunk).split('data:').length > 3) break;
      } else if (step === 'chat') {
        const ws = new WebSocket(`${url.replace('http', 'ws')}/chat`, { headers: headers() });
        await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
        for (let k = 0, n = 1 + Math.floor(random() * 3); k < n; k++) {
          const echoed = new Promise((r) => ws.once('message', r));
          ws.send(`hello ${user} ${k} ${items.length ? pick(items) : '-'}`);
          await echoed;
        }
        ws.close();
        await new Promise((r) => ws.once('close', r));
      } else {
        const path = step === 'me' ? '/me' : step === 'note' ? '/note' : step === 'item' && items.length ? `/items/${pick(items)}` : step === 'read-order' && orders.length ? `/orders/${pick(orders)}` : '/me';
        const res = await c.request({ method: 'GET', path, headers: headers() });
        await res.body.text();
      }
      if (random() < 0.3) await new Promise((r) => setTimeout(r, Math.floor(random() * 30)));
    }
  } finally {
    await c.close();
  }
}
