// The frames tab: every WebSocket message of the capture in bb's order, live,
// one lane per connection (the message's mark sits in its connection's lane,
// ↑ sent by the client, ↓ received from the server), its payload beside it.
// A search box keeps the frames that match, with the query language and the
// script of `bb frames --html` (bbFrameSearch, inspect/frames-search.ts: words,
// "phrases", dir:send, dir:receive, conn:X). A simple live picture; `bb frames
// --html` draws a finished capture.
//
// Captured text reaches the page through textContent only (bb.el).
'use strict';

(function () {
  const { el, feed, view, virtualList } = window.bb;
  const ROW = 22;
  const LANE = 22;
  const OPCODES = { 0: 'cont', 1: 'text', 2: 'binary', 8: 'close', 9: 'ping', 10: 'pong', '-1': 'error' };

  /** What a frame's row shows of its payload: text (cut), a binary one's size, a close's code and reason. */
  function payload(frame) {
    if (frame.close) return `${frame.close.code ?? ''} ${frame.close.reason ?? ''}`.trim();
    if (frame.opcode === 2) return `${Math.floor((frame.length * 3) / 4)} bytes binary`;
    return frame.data + (frame.length > frame.data.length ? ' …' : '');
  }

  /** A connection's lane label: its path and query (what tells two connections to one host apart) and its #seq. */
  function laneLabel(label, labels, row) {
    let where = row.url;
    try {
      const u = new URL(row.url);
      where = u.pathname + u.search;
    } catch {
      // shown as recorded
    }
    return (labels.length > 1 ? label + ' ' : '') + '#' + row.seq + ' ' + where;
  }

  view('frames', (root) => {
    let labels = [];
    const lanes = new Map(); // label/seq → { index, text }

    const bar = el('div', 'filters');
    const search = el('input', 'f-frames');
    search.placeholder = 'search payloads · dir:send · conn:chat';
    search.spellcheck = false;
    const count = el('span', 'count');
    bar.append(search, count);
    const legend = el('div', 'lanes-legend');
    const body = el('div', 'left frames');
    root.append(bar, legend, body);

    const list = virtualList(body, {
      rowHeight: ROW,
      cells: ['c-seq', 'c-time', 'c-lanes', 'c-op', 'c-data'],
      onDraw: (n, total) => (count.textContent = n === total ? `${total} frames on ${lanes.size} connections` : `${n} of ${total} frames`),
      fill(r, f) {
        const lane = lanes.get(f.conn);
        r.className = 'row frame ' + f.frame.type;
        const c = r.children;
        c[0].textContent = '#' + f.frame.seq;
        c[1].textContent = new Date(f.frame.time * 1000).toISOString().slice(11, 23);
        c[2].style.width = Math.max(1, lanes.size) * LANE + 'px';
        let mark = c[2].firstChild;
        if (!mark) {
          mark = el('span', 'mark');
          c[2].append(mark);
        }
        mark.textContent = f.frame.type === 'send' ? '↑' : f.frame.type === 'receive' ? '↓' : '⚠';
        mark.style.left = (lane ? lane.index : 0) * LANE + 'px';
        mark.title = lane ? lane.text : '';
        c[3].textContent = OPCODES[f.frame.opcode] ?? String(f.frame.opcode);
        c[4].textContent = payload(f.frame);
        c[4].title = lane ? lane.text : '';
      },
    });

    // One chip per lane, numbered as the lane columns are (1 the leftmost).
    function drawLegend() {
      legend.replaceChildren(...[...lanes.values()].map((l) => el('span', 'lane-name', `${l.index + 1}: ${l.text}`)));
    }

    // What bbFrameSearch reads of a frame and of the lanes (lane ids are their keys).
    const searchItem = (f) => ({ text: f.hay, dir: f.frame.type === 'send' ? 0 : 1, lane: lanes.get(f.conn)?.index ?? -1 });
    const laneList = () => [...lanes.entries()].map(([id, l]) => ({ id, text: l.text }));
    let query = '';
    search.addEventListener('input', () => {
      query = search.value;
      // One index over the frames known now; a frame that comes later is tested on its own.
      const all = list.items();
      const shown = window.bbFrameSearch.run(window.bbFrameSearch.build(all.map(searchItem), laneList()), query);
      if (shown === null) return list.filter(undefined);
      const hits = new Set(Array.from(shown, (i) => all[i]));
      const known = new Set(all);
      list.filter((f) => (known.has(f) ? hits.has(f) : window.bbFrameSearch.run(window.bbFrameSearch.build([searchItem(f)], laneList()), query)?.length > 0));
    });

    feed('frames', undefined, (e) => {
      if (e.type === 'captures') labels = e.labels;
      else if (e.type === 'connection') {
        const key = e.label + '/' + e.row.seq;
        const known = lanes.get(key);
        const text = laneLabel(e.label, labels, e.row) + (e.row.state === 'closed' ? ' (closed)' : '');
        if (known) known.text = text;
        else lanes.set(key, { index: lanes.size, text });
        drawLegend();
      } else if (e.type === 'frame') {
        const conn = e.label + '/' + e.exchange;
        const lane = lanes.get(conn);
        list.add({ conn, frame: e.frame, hay: payload(e.frame) });
      }
      list.schedule();
    });
  });
})();
