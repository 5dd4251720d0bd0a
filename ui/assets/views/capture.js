// The capture view: every exchange as a row (in flight ones with their state),
// filtered by text, method, status, host and route, drawn virtually (only the
// rows in sight exist in the page, so 100,000 stay smooth; the latest KEPT are
// listed, as bb keeps them: capture/live.ts LIVE_ROWS), and one exchange
// opened whole: heads, bodies (JSON pretty, binary as hex, images shown from a
// data: URL of the captured bytes), timing, redaction marks, and a stream's
// messages in order, live.
//
// Every captured string reaches the page through textContent (bb.el, text());
// image types come from a fixed list, so a data: URL never carries a
// captured media type.
'use strict';

(function () {
  const { el, feed, view, virtualList, opener, visible, captured } = window.bb;
  const ROW = 22;
  // Rows the list keeps, the latest (bb's snapshot sends as many); past it the oldest go, a tenth at a time.
  const KEPT = 100000;
  const HEX_LIMIT = 64 * 1024;
  const REDACTED = /<redacted:[0-9a-f]{8}>/g;
  const IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp', 'image/avif', 'image/x-icon', 'image/vnd.microsoft.icon', 'image/svg+xml']);
  const OPCODES = { 0: 'cont', 1: 'text', 2: 'binary', 8: 'close', 9: 'ping', 10: 'pong', '-1': 'error' };

  /** Appends text to parent, each `<redacted:…>` placeholder marked. */
  function text(parent, s) {
    s = String(s ?? '');
    let at = 0;
    for (const m of s.matchAll(REDACTED)) {
      if (m.index > at) parent.append(document.createTextNode(s.slice(at, m.index)));
      const mark = el('span', 'redacted', m[0]);
      mark.title = 'redacted by bb: the value is kept out of the capture (same secret, same mark)';
      parent.append(mark);
      at = m.index + m[0].length;
    }
    if (at < s.length) parent.append(document.createTextNode(s.slice(at)));
    return parent;
  }

  function bytesOf(b64) {
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  function hexDump(bytes) {
    const lines = [];
    const n = Math.min(bytes.length, HEX_LIMIT);
    for (let o = 0; o < n; o += 16) {
      const slice = bytes.subarray(o, Math.min(o + 16, n));
      const hex = Array.from(slice, (b) => b.toString(16).padStart(2, '0')).join(' ');
      const ascii = Array.from(slice, (b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : '.')).join('');
      lines.push(o.toString(16).padStart(8, '0') + '  ' + hex.padEnd(48) + '  ' + ascii);
    }
    if (bytes.length > n) lines.push(`… ${bytes.length - n} more bytes`);
    return el('pre', 'hex', lines.join('\n'));
  }

  /** A decoded gRPC message (inspect/grpc-tree.ts ShownMessage): a field per line, name, type, value; nested fields under theirs. */
  function protoTree(shown) {
    const fields = (list) => {
      const box = el('div', 'pf-fields');
      for (const f of list) {
        const row = el('div', 'pf');
        row.append(el('span', 'pf-name', f.name), el('span', 'pf-type', f.type));
        if (f.fields) {
          box.append(row, fields(f.fields));
          continue;
        }
        row.append(text(el('span', 'pf-val pf-' + f.type), f.value));
        box.append(row);
      }
      return box;
    };
    const tree = fields(shown.fields);
    tree.classList.add('proto');
    tree.title = shown.schema ? 'decoded with the .proto files' : 'decoded without a schema: field numbers, types guessed from the wire';
    return tree;
  }

  function formatSize(n) {
    if (!(n > 0)) return n === 0 ? '0 B' : '';
    if (n < 1024) return n + ' B';
    if (n < 1048576) return (n / 1024).toFixed(1) + ' KB';
    return (n / 1048576).toFixed(1) + ' MB';
  }

  /** A body: an image, pretty JSON, text, or a hex dump of binary bytes. */
  function body(mimeType, textValue, encoding, size) {
    const box = el('div', 'body');
    const mime = String(mimeType || '').split(';')[0].trim().toLowerCase();
    if (textValue === undefined || textValue === null || textValue === '') {
      box.append(el('p', 'none', size > 0 ? `${formatSize(size)} not recorded` : 'no body'));
      return box;
    }
    const b64 = encoding === 'base64';
    box.append(el('p', 'meta', `${mime || 'no type'} · ${formatSize(size ?? (b64 ? atob(textValue).length : textValue.length))}${b64 ? ' · binary' : ''}`));
    if (IMAGES.has(mime)) {
      const img = el('img', 'shown');
      img.alt = 'image from the captured bytes';
      img.src = 'data:' + mime + ';base64,' + (b64 ? textValue : btoa(unescape(encodeURIComponent(textValue))));
      box.append(img);
      return box;
    }
    if (b64) {
      box.append(hexDump(bytesOf(textValue)));
      return box;
    }
    let shown = textValue;
    if (/json/.test(mime) || /^\s*[[{]/.test(textValue)) {
      try {
        shown = JSON.stringify(JSON.parse(textValue), null, 2);
      } catch {
        // not JSON after all: shown as sent
      }
    }
    box.append(text(el('pre', 'text'), shown));
    return box;
  }

  function table(title, pairs) {
    const box = el('div', 'pairs');
    box.append(el('h4', '', `${title} (${pairs.length})`));
    const t = el('table');
    for (const p of pairs) {
      const tr = el('tr');
      tr.append(el('th', '', p.name), text(el('td'), p.value));
      t.append(tr);
    }
    box.append(t);
    return box;
  }

  function hostPath(url) {
    try {
      const u = new URL(url);
      return { host: u.host, path: u.pathname + u.search };
    } catch {
      return { host: '', path: url };
    }
  }

  // Filters: each input compiled once per change into a test of a row; all must hold.
  const words = (v) => v.split(/[\s,]+/).filter(Boolean);
  function compile(f) {
    const tests = [];
    if (f.text) tests.push((item) => item.hay.includes(f.text));
    if (f.method) {
      const methods = new Set(words(f.method));
      tests.push((item) => methods.has(item.method));
    }
    if (f.status) {
      // 404 one status, 4xx a class, - none yet.
      const exact = new Set(words(f.status).filter((w) => !/^[1-5]xx$/.test(w)));
      const classes = new Set(words(f.status).filter((w) => /^[1-5]xx$/.test(w)).map((w) => w[0]));
      tests.push((item) => exact.has(item.status) || classes.has(item.status[0]));
    }
    if (f.host) tests.push((item) => item.hostLower.includes(f.host));
    if (f.route) {
      // Segment by segment from the start, '*' any one.
      const want = f.route.split('/').filter(Boolean);
      tests.push((item) => want.length <= item.segments.length && want.every((w, i) => w === '*' || w === item.segments[i]));
    }
    return (item) => tests.every((t) => t(item));
  }

  view('capture', (root) => {
    const byKey = new Map();
    let older = false; // rows came before the ones listed: the count says they are not
    let labels = [];
    let selected;

    const bar = el('div', 'filters');
    const inputs = {};
    for (const [name, hint] of [['text', 'filter: any text'], ['method', 'method'], ['status', 'status: 2xx 404'], ['host', 'host'], ['route', 'route: /api/*/items']]) {
      const i = el('input');
      i.placeholder = hint;
      i.name = name;
      i.className = 'f-' + name;
      i.spellcheck = false;
      i.addEventListener('input', readFilter);
      inputs[name] = i;
      bar.append(i);
    }
    const count = el('span', 'count');
    bar.append(count);

    const split = el('div', 'split');
    const left = el('div', 'left');
    const header = el('div', 'row head');
    for (const [cls, t] of [['seq', '#'], ['state', 'state'], ['method', 'method'], ['status', 'status'], ['host', 'host'], ['path', 'path'], ['kind', 'type'], ['size', 'size'], ['time', 'time']]) header.append(el('span', 'c-' + cls, t));
    left.append(header);
    const detail = el('div', 'detail');
    detail.hidden = true;
    split.append(left, detail);
    root.append(bar, split);
    const rows = virtualList(left, {
      rowHeight: ROW,
      keep: KEPT,
      // The rows' places moved: counted again.
      onDrop: () => {
        byKey.clear();
        rows.items().forEach((it, i) => byKey.set(it.key, i));
        older = true;
      },
      cells: ['seq', 'state', 'method', 'status', 'host', 'path', 'kind', 'size', 'time'].map((c) => 'c-' + c),
      onClick: (item) => open(item.key),
      onDraw: (n, total) =>
        (count.textContent = (n === total ? `${total} exchanges` : `${n} of ${total}`) + (older ? ' (older ones not listed: bb show on the HAR lists all)' : '')),
      fill(r, item) {
        const row = item.row;
        r.dataset.key = item.key;
        r.className = 'row st-' + row.state + ' s' + String(row.status || 0)[0] + (item.key === selected ? ' sel' : '');
        const c = r.children;
        c[0].textContent = (labels.length > 1 ? item.label + ' ' : '') + '#' + row.seq;
        c[1].textContent = row.state;
        c[2].textContent = row.method;
        c[3].textContent = row.status ? String(row.status) : '–';
        c[4].textContent = visible(item.host);
        c[5].textContent = visible(item.path);
        c[6].textContent = row.kind === 'http' ? row.mime.split(';')[0] : row.kind + (row.messages ? ` · ${row.messages}` : '');
        c[7].textContent = formatSize(row.responseBytes);
        c[8].textContent = row.endedAt ? Math.round(row.endedAt - row.startedAt) + ' ms' : '…';
      },
    });

    // The filter as typed, compiled once per change (not once per row); none when every input is empty.
    function readFilter() {
      const f = {};
      for (const k in inputs) f[k] = inputs[k].value.trim().toLowerCase();
      rows.filter(Object.values(f).some((v) => v !== '') ? compile(f) : undefined);
    }
    const schedule = rows.schedule;

    rows.list.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
      e.preventDefault();
      const shown = rows.shownItems();
      const at = shown.findIndex((item) => item.key === selected);
      const next = shown[Math.max(0, Math.min(shown.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)))];
      if (next !== undefined) open(next.key);
    });

    function upsert(label, row) {
      const key = label + '/' + row.seq;
      const { host, path } = hostPath(row.url);
      const item = {
        key, label, row, host, path,
        // What the filters compare, lower-cased once per row.
        hay: [label, row.method, row.url, row.status, row.state, row.kind, row.mime].join(' ').toLowerCase(),
        method: row.method.toLowerCase(),
        status: String(row.status || '-'),
        hostLower: host.toLowerCase(),
        segments: path.split('?')[0].toLowerCase().split('/').filter(Boolean),
      };
      const at = byKey.get(key);
      if (at !== undefined) return rows.replace(at, item);
      byKey.set(key, rows.add(item));
    }

    feed('exchanges', undefined, (e) => {
      // The rows again from bb's snapshot; the selection and the open exchange stay.
      if (e.type === 'resync') {
        byKey.clear();
        rows.clear();
        older = false;
      } else if (e.type === 'window') {
        older = true;
        schedule();
      } else if (e.type === 'captures') {
        labels = e.labels;
        schedule();
      } else if (e.type === 'row') upsert(e.label, e.row);
    });

    // One exchange opened whole, following its feed.
    let closeDetail;
    let tab = 'headers';
    let current;

    // Another view opens an exchange here (a frame clicked in the frames tab): its messages shown.
    opener('capture', (key) => open(key, 'messages'));

    function open(key, showTab, window) {
      if (!key) return;
      if (showTab) tab = showTab;
      if (closeDetail) closeDetail();
      selected = key;
      // A conversation's page keeps as many messages as bb sent (`window`), the oldest going as new ones come; `most`
      // is the most it may ask for (ui/capture-feed.ts ENTRY_MESSAGES_MAX).
      current = { key, entry: undefined, row: undefined, messages: [], earlier: 0, window: Infinity, most: 0 };
      detail.hidden = false;
      split.classList.add('open');
      detail.replaceChildren(el('p', 'none', 'loading…'));
      schedule();
      const mine = current;
      closeDetail = feed('exchange', window ? `${key}~${window}` : key, (e) => {
        if (current !== mine) return;
        if (e.type === 'entry') {
          mine.entry = e.entry;
          mine.row = e.row;
          // A closed conversation's entry comes again without its messages: the page has them.
          if (!e.messagesKept) {
            mine.messages = e.entry._webSocketMessages ? e.entry._webSocketMessages.slice() : [];
            mine.earlier = e.earlier ?? 0;
            mine.window = e.window ?? Infinity;
            mine.most = e.most ?? 0;
          }
          mine.grpc = e.grpc ?? [];
          drawDetail();
        } else if (e.type === 'row') {
          mine.row = e.row;
          drawHead();
        } else if (e.type === 'message') {
          mine.messages.push(e.message);
          const box = detail.querySelector('.messages');
          if (box && tab === 'messages') box.append(wsLine(e.message, mine.entry));
          // The page keeps the window bb sent: the oldest message goes (and its line).
          if (mine.messages.length > mine.window) {
            mine.messages.shift();
            mine.earlier++;
            if (box && tab === 'messages') box.querySelector('.msg')?.remove();
          }
          if (box && tab === 'messages') drawEarlier(box);
          drawHead();
        }
      });
    }

    function close() {
      if (closeDetail) closeDetail();
      closeDetail = undefined;
      current = undefined;
      selected = undefined;
      detail.hidden = true;
      split.classList.remove('open');
      schedule();
    }

    function drawHead() {
      const h = detail.querySelector('.dhead .what');
      if (!h || !current.row) return;
      const r = current.row;
      h.replaceChildren(el('span', '', `#${r.seq} ${r.method} `), text(el('bdi'), visible(current.entry.request.url)), el('span', 'badge st-' + r.state, `${r.status || '–'} ${r.state}${r.messages ? ` · ${r.messages} messages` : ''}`));
    }

    function drawDetail() {
      const { entry, row } = current;
      const scroll = detail.querySelector('.dbody')?.scrollTop ?? 0;
      const head = el('div', 'dhead');
      const x = el('button', 'x', '×');
      x.title = 'close';
      x.addEventListener('click', close);
      head.append(el('div', 'what'), x);
      const stream = row.kind !== 'http' || (entry._eventSourceMessages && entry._eventSourceMessages.length > 0);
      const tabs = el('div', 'dtabs');
      const names = ['headers', 'request', 'response'].concat(stream ? ['messages'] : [], ['timing']);
      if (!names.includes(tab)) tab = 'headers';
      for (const name of names) {
        const b = el('button', name === tab ? 'on' : '', name);
        b.dataset.tab = name;
        b.addEventListener('click', () => {
          tab = name;
          drawDetail();
        });
        tabs.append(b);
      }
      const dbody = el('div', 'dbody');
      dbody.append(TABS[tab](entry, row));
      detail.replaceChildren(head, tabs, dbody);
      drawHead();
      dbody.scrollTop = scroll;
    }

    // A conversation's listed messages before those the page holds: how many, and the way to ask for more.
    function drawEarlier(box) {
      const mine = current;
      let note = box.querySelector('.earlier');
      if (mine.earlier === 0) return note?.remove();
      // Made once; each new message changes its count only.
      if (!note) {
        box.prepend((note = el('p', 'earlier none')));
        note.append(el('span'));
        if (mine.window < mine.most) {
          const more = el('button', 'more', `show the latest ${mine.most.toLocaleString('en-US')}`);
          more.addEventListener('click', () => open(mine.key, 'messages', mine.most));
          note.append(' ', more);
        }
      }
      note.firstChild.textContent = `${mine.earlier.toLocaleString('en-US')} earlier messages are not shown: this view holds the latest ${mine.window.toLocaleString('en-US')} (the Frames tab the latest of all streams, the HAR every one).`;
    }

    function wsLine(m, entry) {
      const line = el('div', 'msg ' + m.type);
      const t0 = Date.parse(entry.startedDateTime);
      const ms = m.time > 1e11 ? m.time : m.time * 1000;
      line.append(el('span', 'm-time', '+' + Math.round(ms - t0) + ' ms'), el('span', 'm-dir', m.type === 'send' ? '↑ send' : m.type === 'receive' ? '↓ receive' : '⚠ error'), el('span', 'm-op', OPCODES[m.opcode] ?? String(m.opcode)));
      const data = el('div', 'm-data');
      if (m.opcode === 2) data.append(hexDump(bytesOf(m.data)));
      else if (m.opcode === 8 && m._bb) text(data, `${m._bb.code ?? ''} ${m._bb.reason ?? ''}`);
      else text(data, m.data);
      line.append(data);
      return line;
    }

    const TABS = {
      headers(entry) {
        const box = el('div');
        const r = entry.response;
        box.append(table('General', [
          { name: 'URL', value: entry.request.url },
          { name: 'Method', value: entry.request.method },
          { name: 'Status', value: r.status ? `${r.status} ${r.statusText}` : '–' },
          { name: 'Version', value: entry.request.httpVersion },
          { name: 'Connection', value: entry.connection ?? '' },
        ].concat(entry.comment ? [{ name: 'Notes', value: entry.comment }] : [], entry._bb && entry._bb.error ? [{ name: 'Error', value: `${entry._bb.error.code} ${entry._bb.error.message}` }] : [])));
        box.append(table('Request headers', entry.request.headers));
        if (entry.request.queryString.length > 0) box.append(table('Query', entry.request.queryString));
        if (entry.request._trailers) box.append(table('Request trailers', entry.request._trailers));
        box.append(table('Response headers', r.headers));
        if (r._trailers) box.append(table('Response trailers', r._trailers));
        return box;
      },
      request(entry) {
        const p = entry.request.postData;
        return p ? body(p.mimeType, p.text, p._encoding, entry.request.bodySize) : body('', undefined, undefined, 0);
      },
      response(entry) {
        const c = entry.response.content;
        return body(c.mimeType, c.text, c.encoding, c.size);
      },
      messages(entry, row) {
        const box = el('div', 'messages');
        if (row.kind === 'websocket') {
          for (const m of current.messages) box.append(wsLine(m, entry));
          drawEarlier(box);
        }
        for (const m of entry._eventSourceMessages ?? []) {
          const line = el('div', 'msg receive');
          line.append(el('span', 'm-dir', '↓ event'), el('span', 'm-op', m.eventName || 'message'), el('span', 'm-id', m.eventId ? 'id ' + m.eventId : ''));
          line.append(text(el('div', 'm-data'), m.data));
          box.append(line);
        }
        (entry._grpcMessages ?? []).forEach((m, i) => {
          const line = el('div', 'msg ' + m.type);
          line.append(el('span', 'm-dir', m.type === 'send' ? '↑ send' : '↓ receive'), el('span', 'm-op', 'grpc'));
          const data = el('div', 'm-data');
          const shown = current.grpc[i];
          if (shown) {
            // The decoded protobuf first; its bytes one click away.
            const hex = el('details', 'hex-of');
            hex.append(el('summary', '', 'hex'), hexDump(bytesOf(m.data)));
            data.append(protoTree(shown), hex);
          } else data.append(hexDump(bytesOf(m.data)));
          line.append(data);
          box.append(line);
        });
        if (!box.firstChild) box.append(el('p', 'none', 'no messages yet'));
        return box;
      },
      timing(entry, row) {
        const box = el('div', 'timing');
        const t = entry.timings;
        const total = Math.max(1, ['send', 'wait', 'receive'].reduce((s, k) => s + Math.max(0, t[k]), 0));
        box.append(el('p', 'meta', `started ${entry.startedDateTime}` + (row.endedAt ? ` · ${Math.round(row.endedAt - row.startedAt)} ms in all` : ' · under way')));
        for (const [k, label] of [['send', 'request sent'], ['wait', 'waiting (time to first byte)'], ['receive', 'response received']]) {
          const line = el('div', 'phase');
          const barEl = el('span', 'tbar t-' + k);
          barEl.style.width = (t[k] > 0 ? Math.max(1, (t[k] / total) * 100) : 0) + '%';
          line.append(el('span', 'tlabel', label), el('span', 'tval', t[k] >= 0 ? t[k].toFixed(1) + ' ms' : '–'), el('span', 'ttrack'));
          line.lastChild.append(barEl);
          box.append(line);
        }
        return box;
      },
    };
  });
})();
