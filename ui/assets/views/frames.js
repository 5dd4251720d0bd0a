// The frames tab: every message of the capture's streams in bb's order, live
// (WebSocket messages, SSE events, gRPC messages both ways), one lane per
// connection, event stream or gRPC call, labelled as `bb frames` labels them
// (the message's mark sits in its stream's lane, ↑ sent by the client, ↓
// received from the server), its payload beside it. Clicking a frame opens
// its exchange in the Exchanges tab.
// A search box keeps the frames that match, with the query language and the
// script of `bb frames --html` (bbFrameSearch, inspect/frames-search.ts: words,
// "phrases", dir:send, dir:receive, conn:X); Enter jumps to the next match
// (Shift+Enter back) and marks it, Escape clears the search with the marked
// frame kept in sight among all the others. A simple live picture of the
// latest frames: bb sends the last KEPT when the tab opens and the tab keeps
// as many as they come (ui/frames-feed.ts FRAMES_SHOWN); `bb frames --html`
// draws a finished capture whole.
//
// Captured text reaches the page through textContent only (bb.el).
'use strict';

(function () {
  const { el, feed, view, virtualList, open, visible, captured } = window.bb;
  const ROW = 22;
  const LANE = 22;
  // Frames a late one is compared with to find its place (it is late by a pull, a few hundred ms).
  const LOOK_BACK = 5000;
  // Frames the tab keeps, the latest (bb's snapshot sends as many: frames-feed.ts FRAMES_SHOWN); past it the oldest
  // go, a tenth at a time.
  const KEPT = 50000;
  const OPCODES = { 0: 'cont', 1: 'text', 2: 'binary', 8: 'close', 9: 'ping', 10: 'pong', '-1': 'error' };

  /** What a frame's row shows of its payload: a stream message's preview, text (cut), a binary one's size, a close's code and reason. */
  function payload(frame) {
    if (frame.text !== undefined) return frame.text;
    if (frame.close) return `${frame.close.code ?? ''} ${frame.close.reason ?? ''}`.trim();
    if (frame.opcode === 2) return `${Math.floor((frame.length * 3) / 4)} bytes binary`;
    return frame.data + (frame.length > frame.data.length ? ' …' : '');
  }

  /** A lane's label: the capture's (several), the feed's text (bb frames's label), and whether it ended. */
  function laneLabel(label, labels, row, text) {
    const ended = row.kind === 'websocket' ? (row.state === 'closed' ? ' (closed)' : '') : row.endedAt !== undefined ? ' (ended)' : '';
    return (labels.length > 1 ? label + ' ' : '') + text + ended;
  }

  view('frames', (root) => {
    let labels = [];
    const lanes = new Map(); // label/seq → { index, text }
    const placed = []; // the listed frames' capture and seq, in list order
    const framesOf = new Map(); // lane key → its frames in the list
    let older = false; // frames came before the window: the count says they are not listed

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
      keep: KEPT,
      onDrop: (dropped) => {
        placed.splice(0, dropped.length);
        for (const f of dropped) framesOf.set(f.conn, framesOf.get(f.conn) - 1);
        if (dropped.includes(current)) current = undefined;
        older = true;
        // A lane that ended with no frame left in the list goes; the others close up, in their order.
        let index = 0;
        for (const [key, lane] of lanes) {
          if ((framesOf.get(key) ?? 0) === 0 && lane.ended) {
            lanes.delete(key);
            framesOf.delete(key);
          } else lane.index = index++;
        }
        drawLegend();
      },
      cells: ['c-seq', 'c-time', 'c-lanes', 'c-op', 'c-data'],
      onClick: (f) => open('capture', f.conn),
      onDraw: (n, total) =>
        (count.textContent =
          (n === total ? `${total} frames on ${lanes.size} connections` : `${n} of ${total} frames`) +
          (older ? ' (older ones not listed: bb frames on the HAR lists all)' : '')),
      fill(r, f) {
        const lane = lanes.get(f.conn);
        r.className = 'row frame ' + f.frame.type + (f === current ? ' sel' : '');
        const c = r.children;
        c[0].textContent = Number.isInteger(f.frame.seq) ? '#' + f.frame.seq : '';
        c[1].textContent = new Date(f.frame.time * 1000).toISOString().slice(11, 23);
        c[2].style.width = Math.max(1, lanes.size) * LANE + 'px';
        let mark = c[2].firstChild;
        if (!mark) {
          mark = el('span', 'mark');
          c[2].append(mark);
        }
        mark.textContent = f.frame.type === 'send' ? '↑' : f.frame.type === 'receive' ? '↓' : '⚠';
        mark.style.left = (lane ? lane.index : 0) * LANE + 'px';
        mark.title = lane ? visible(lane.text) : '';
        c[3].textContent = f.frame.kind ?? OPCODES[f.frame.opcode] ?? String(f.frame.opcode);
        c[4].textContent = visible(payload(f.frame));
        c[4].title = lane ? visible(lane.text) : '';
      },
    });

    // One chip per lane, numbered as the lane columns are (1 the leftmost).
    function drawLegend() {
      legend.replaceChildren(...[...lanes.values()].map((l) => {
        const chip = el('span', 'lane-name', `${l.index + 1}: `);
        chip.append(captured(l.text));
        return chip;
      }));
    }

    // What bbFrameSearch reads of a frame and of the lanes (lane ids are their keys).
    const searchItem = (f) => ({ text: f.hay, dir: f.frame.type === 'send' ? 0 : 1, lane: lanes.get(f.conn)?.index ?? -1 });
    const laneList = () => [...lanes.entries()].map(([id, l]) => ({ id, text: l.text }));
    // The frame Enter jumped to: marked, and kept in sight when the search changes (Escape shows it among all).
    let current;
    function jump(step) {
      const shown = list.shownItems();
      if (shown.length === 0) return;
      const at = current === undefined ? -1 : shown.indexOf(current);
      current = shown[at < 0 ? (step > 0 ? 0 : shown.length - 1) : (at + step + shown.length) % shown.length];
      list.reveal(current);
    }
    search.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        jump(e.shiftKey ? -1 : 1);
      } else if (e.key === 'Escape' && search.value !== '') {
        search.value = '';
        search.dispatchEvent(new Event('input'));
      }
    });

    let query = '';
    search.addEventListener('input', () => {
      query = search.value;
      // One index over the frames known now; a frame that comes later is tested on its own.
      const all = list.items();
      const shown = window.bbFrameSearch.run(window.bbFrameSearch.build(all.map(searchItem), laneList()), query);
      if (current !== undefined) list.reveal(current);
      if (shown === null) return list.filter(undefined);
      const hits = new Set(Array.from(shown, (i) => all[i]));
      const known = new Set(all);
      list.filter((f) => (known.has(f) ? hits.has(f) : window.bbFrameSearch.run(window.bbFrameSearch.build([searchItem(f)], laneList()), query)?.length > 0));
    });

    feed('frames', undefined, (e) => {
      // The lanes and frames again from bb's snapshot; the search stays.
      if (e.type === 'resync') {
        current = undefined;
        older = false;
        lanes.clear();
        framesOf.clear();
        placed.length = 0;
        list.clear();
        drawLegend();
      } else if (e.type === 'captures') labels = e.labels;
      else if (e.type === 'window') older = true;
      else if (e.type === 'connection') {
        const key = e.label + '/' + e.row.seq;
        const known = lanes.get(key);
        const text = laneLabel(e.label, labels, e.row, e.text);
        const ended = e.row.kind === 'websocket' ? e.row.state === 'closed' : e.row.endedAt !== undefined;
        if (known) Object.assign(known, { text, ended });
        else lanes.set(key, { index: lanes.size, text, ended });
        drawLegend();
      } else if (e.type === 'frame') {
        const conn = e.label + '/' + e.exchange;
        const item = { conn, frame: e.frame, hay: payload(e.frame) + (e.frame.strings ? ' ' + e.frame.strings : '') };
        // bb's order is a capture's own (seq): a stream's message read late, or an SSE event placed among
        // numbered records, goes before the later ones of its capture; other captures' keep their arrival order.
        let at = placed.length;
        for (let k = placed.length - 1; k >= 0 && k >= placed.length - LOOK_BACK; k--) {
          if (placed[k].label !== e.label) continue;
          if (placed[k].seq <= e.frame.seq) break;
          at = k;
        }
        placed.splice(at, 0, { label: e.label, seq: e.frame.seq });
        framesOf.set(conn, (framesOf.get(conn) ?? 0) + 1);
        list.insert(at, item);
      }
      list.schedule();
    });
  });
})();
