// The shadow view of `bb shadow --ui` (feeds in scenario/shadow/shadow-ui.ts):
// the run's totals and route table (requests, mirrored, equal, regressions,
// noise, errors, skipped, p50/p99 per target) as each report comes; the
// findings (class, kind, pattern and the values where its samples share them,
// routes, count; `bb diff`'s grouping and ids) with their samples and one
// action each to write it into the run's --config as a known entry (with the
// reason asked here) or as noise rules; and a sample opened: the request and
// the three answers side by side, the differing field highlighted.
//
// Every captured string reaches the page through textContent (bb.el).
'use strict';

(function () {
  const { el, feed, view, action, visible, captured } = window.bb;
  const TARGETS = ['primary', 'candidate', 'secondary'];
  const COUNTS = ['requests', 'mirrored', 'equal', 'regressions', 'noise', 'unclassified', 'errors'];

  /**
   * "response.body.items[0][\"@type\"]" → ['response', 'body', 'items', 0, '@type']; "[]" is -1 (any index). The
   * diff's own parser (diff/selector.ts parseFieldPath, served as /shared.js), so a quoted key is read as written.
   */
  const parsePath = (text) => window.bbParseFieldPath(String(text || ''));

  /** True when `path` is at or under `target` (-1 in target: any index). */
  function under(path, target) {
    if (!target || path.length < target.length) return false;
    return target.every((t, i) => (t === -1 ? typeof path[i] === 'number' : path[i] === t));
  }

  /** Pretty JSON as lines, the ones at or under `target` (segments of the body) marked. */
  function jsonView(value, target) {
    const pre = el('pre', 'json');
    const line = (indent, text, path) => {
      // JSON text already: a bidi character in a key or string is written as its JSON escape, \u202E.
      const l = el('div', under(path, target) ? 'jl hl' : 'jl', '  '.repeat(indent) + visible(text));
      pre.append(l);
    };
    (function walk(v, path, indent, prefix, comma) {
      if (v !== null && typeof v === 'object') {
        const arr = Array.isArray(v);
        const keys = arr ? v.map((_, i) => i) : Object.keys(v);
        if (keys.length === 0) return line(indent, prefix + (arr ? '[]' : '{}') + comma, path);
        line(indent, prefix + (arr ? '[' : '{'), path);
        keys.forEach((k, i) => walk(v[k], path.concat([k]), indent + 1, arr ? '' : JSON.stringify(k) + ': ', i < keys.length - 1 ? ',' : ''));
        line(indent, (arr ? ']' : '}') + comma, path);
      } else line(indent, prefix + JSON.stringify(v) + comma, path);
    })(value, [], 0, '', '');
    return pre;
  }

  /** One target's answer: status, headers, body; the field `target` (parsed path) marked. */
  function answerView(name, entry, target) {
    const col = el('div', 'answer');
    col.dataset.target = name;
    col.append(el('h4', '', name));
    if (!entry) {
      col.append(el('p', 'none', 'no answer recorded'));
      return col;
    }
    const res = entry.response || {};
    const status = el('p', 'status' + (under(['response', 'status'], target) ? ' hl' : ''), `${res.status} ${res.statusText || ''}`);
    col.append(status);
    const table = el('table', 'hdrs');
    for (const h of res.headers || []) {
      const tr = el('tr', under(['response', 'headers', String(h.name).toLowerCase()], target) ? 'hl' : '');
      tr.append(el('th', '', visible(h.name)), el('td', '', visible(h.value)));
      table.append(tr);
    }
    col.append(table);
    const c = res.content || {};
    const bodyTarget = target && target[0] === 'response' && target[1] === 'body' ? target.slice(2) : undefined;
    if (c.text === undefined || c.text === '') col.append(el('p', 'none', 'no body'));
    else if (c.encoding === 'base64') col.append(el('p', 'meta', `binary body, ${c.size} bytes`));
    else {
      let parsed;
      try { parsed = JSON.parse(c.text); } catch { parsed = undefined; }
      col.append(parsed !== undefined ? jsonView(parsed, bodyTarget) : el('pre', bodyTarget && bodyTarget.length === 0 ? 'hl' : '', c.text));
    }
    if (entry._bb && entry._bb.error) col.append(el('p', 'err', 'bb: ' + (entry._bb.error.message || entry._bb.error)));
    return col;
  }

  const show = (v) => (v === undefined ? '–' : JSON.stringify(v));

  view('shadow', (root) => {
    root.classList.add('shadow');
    let configPath = null;
    let targets = [];
    const top = el('div', 'filters');
    const totals = el('span', 'totals', 'waiting for the first report…');
    const note = el('span', 'count');
    top.append(totals, note);
    const body = el('div', 'sbody');
    const routesBox = el('div', 'routes');
    const findingsBox = el('div', 'findings');
    const sampleBox = el('div', 'sample');
    sampleBox.hidden = true;
    body.append(el('h3', '', 'Routes'), routesBox, el('h3', '', 'Findings'), findingsBox, sampleBox);
    root.append(top, body);
    const findingRows = new Map();
    let closeSample = () => {};

    function drawRoutes(report, latency) {
      const table = el('table', 'grid');
      const head = el('tr');
      for (const h of ['route', ...COUNTS, 'skipped', ...targets.map((t) => t + ' p50/p99')]) head.append(el('th', '', h));
      table.append(head);
      const rows = Object.entries(report.routes).concat([['all routes', report.totals]]);
      for (const [route, c] of rows) {
        const tr = el('tr', route === 'all routes' ? 'sum' : '');
        tr.append(el('td', 'route', visible(route)));
        for (const k of COUNTS) tr.append(el('td', 'n c-' + k + (k === 'regressions' && c[k] > 0 ? ' bad' : ''), c[k]));
        tr.append(el('td', 'skipped', Object.entries(c.skipped).map(([why, n]) => `${n} ${why}`).join(', ')));
        for (const t of targets) {
          const q = (latency[route] || {})[t];
          tr.append(el('td', 'n', q ? `${q[0]}/${q[1]} ms` : ''));
        }
        table.append(tr);
      }
      routesBox.replaceChildren(table);
    }

    function ratifyCell(f) {
      const cell = el('td', 'acts');
      const done = el('span', 'done');
      const knownBtn = el('button', 'act', 'known…');
      const noiseBtn = el('button', 'act', 'noise rule');
      const form = el('span', 'reason');
      form.hidden = true;
      const reason = el('input');
      reason.placeholder = 'why is this accepted?';
      const write = el('button', 'act', 'write');
      form.append(reason, write);
      for (const b of [knownBtn, noiseBtn]) {
        b.disabled = configPath === null;
        if (b.disabled) b.title = 'start bb shadow with --config FILE to write from the page';
      }
      const send = async (name, extra) => {
        done.textContent = 'writing…';
        try {
          const r = await action(name, { class: f.class, id: f.id, kind: f.kind, pattern: f.pattern, ...extra });
          done.textContent = (r.written ? 'written to ' : 'already in ') + r.config;
          done.className = 'done ok';
          form.hidden = true;
        } catch (err) {
          done.textContent = err.message;
          done.className = 'done err';
        }
      };
      knownBtn.addEventListener('click', () => {
        form.hidden = false;
        reason.focus();
      });
      write.addEventListener('click', () => send('known', { reason: reason.value }));
      reason.addEventListener('keydown', (e) => e.key === 'Enter' && send('known', { reason: reason.value }));
      noiseBtn.addEventListener('click', () => send('noise', {}));
      cell.append(knownBtn, noiseBtn, form, done);
      return cell;
    }

    const empty = el('p', 'none', 'no findings yet');
    const findingTable = el('table', 'grid');
    const findingHead = el('tr');
    for (const h of ['class', 'kind', 'field', 'routes', 'count', 'samples', '']) findingHead.append(el('th', '', h));
    findingTable.append(findingHead);
    findingsBox.append(empty, findingTable);

    function drawFindings(report) {
      const shown = new Set();
      // A status change's consequences (its 500's body) follow it on rows of their own, marked as following from it.
      for (const [f, under] of report.findings.flatMap((t) => [[t, undefined], ...(t.consequences || []).map((c) => [c, t])])) {
        const key = f.class + '\n' + f.id;
        shown.add(key);
        let r = findingRows.get(key);
        if (!r) {
          const tr = el('tr', 'finding ' + f.class);
          tr.dataset.pattern = f.pattern;
          const cells = { cls: el('td', 'cls', f.class), kind: el('td', '', f.kind), pattern: el('td', 'pattern'), routes: el('td', 'routes'), count: el('td', 'n'), samples: el('td', 'samples') };
          tr.append(cells.cls, cells.kind, cells.pattern, cells.routes, cells.count, cells.samples, ratifyCell(f));
          findingTable.append(tr);
          findingRows.set(key, (r = { tr, cells, ids: '' }));
        }
        // A field changed the same way on every sample says how (two findings of one field differ by their values).
        const same = f.kind === 'changed' && f.samples.length > 0 && f.samples.every((s) => show(s.primary) === show(f.samples[0].primary) && show(s.candidate) === show(f.samples[0].candidate));
        r.cells.pattern.replaceChildren(under ? '↳ ' : '', f.pattern ? captured(f.pattern) : '(whole exchange)', ...(same ? [' ', captured(show(f.samples[0].primary)), ' → ', captured(show(f.samples[0].candidate))] : []));
        r.cells.routes.replaceChildren(...f.routes.flatMap((route, i) => (i ? [', ', captured(route)] : [captured(route)])));
        r.cells.count.textContent = f.count;
        const ids = f.samples.map((s) => s.id).join(',');
        if (ids !== r.ids) {
          r.ids = ids;
          r.cells.samples.replaceChildren(...f.samples.map((s) => {
            const b = el('button', 'sample-link', '#' + s.id);
            b.title = visible(s.request);
            b.addEventListener('click', () => openSample(f, s));
            return b;
          }));
        }
      }
      // A finding the report no longer has (its only exchanges compared again once a later request bound their
      // values: scenario/shadow/compare.ts revise) leaves the table.
      for (const [key, r] of findingRows) {
        if (shown.has(key)) continue;
        r.tr.remove();
        findingRows.delete(key);
      }
      empty.hidden = findingRows.size > 0;
    }

    function openSample(f, s) {
      closeSample();
      sampleBox.hidden = false;
      const head = el('div', 'dhead');
      const x = el('button', 'x', '×');
      x.addEventListener('click', () => { closeSample(); sampleBox.hidden = true; });
      // What came from the traffic (the request, the field's keys, the values) isolated and its bidi characters shown.
      const what = el('span', 'what');
      what.append(captured(s.request), ` #${s.id}: `, f.pattern ? captured(f.pattern) : '(whole exchange)', ` ${f.kind} (${f.class})`);
      head.append(what, x);
      const values = el('p', 'values');
      values.append(el('span', '', 'primary '), captured(show(s.primary)), el('span', '', ' → candidate '), captured(show(s.candidate)));
      const req = el('div', 'request');
      const cols = el('div', 'answers');
      sampleBox.replaceChildren(head, values, req, cols);
      const target = parsePath(s.path !== undefined ? s.path : f.pattern);
      closeSample = feed('shadow-sample', String(s.id), (e) => {
        if (e.type !== 'answers') return;
        const p = e.answers.primary;
        if (p) {
          req.replaceChildren(el('h4', '', 'request'), el('pre', 'reqline', visible(`${p.request.method} ${p.request.url}`)));
          const t = p.request.postData && p.request.postData.text;
          if (t) req.append(el('pre', '', t));
        }
        cols.replaceChildren(...TARGETS.filter((n) => n in e.answers).map((n) => answerView(n, e.answers[n], target)));
      });
      sampleBox.scrollIntoView({ block: 'nearest' });
    }

    feed('shadow', undefined, (e) => {
      if (e.type === 'run') {
        configPath = e.config;
        targets = e.targets;
        note.textContent = configPath === null ? 'ratifying writes need bb shadow --config FILE' : 'ratified findings go to ' + configPath;
        return;
      }
      if (e.type !== 'report') return;
      const t = e.report.totals;
      const skipped = Object.values(t.skipped).reduce((a, b) => a + b, 0);
      totals.textContent = `${t.requests} requests · ${t.mirrored} mirrored · ${t.equal} equal · ${t.regressions} regressions · ${t.noise} noise · ${t.errors} errors${t.candidateErrors ? ` (${t.candidateErrors} the candidate's)` : ''} · ${skipped} skipped · rate ${(e.report.regressionRate * 100).toFixed(2)}%`;
      drawRoutes(e.report, e.latency || {});
      drawFindings(e.report);
    });
  });
})();
