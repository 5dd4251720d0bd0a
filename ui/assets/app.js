// bb's live view, the shell every view shares: tabs from /api/views, one
// script per view (views/<name>.js, which calls bb.view(name, mount)), feeds
// as EventSource streams of JSON events, and small DOM helpers.
//
// Captured content is hostile: it reaches the page only through textContent
// (bb.el) and data: URLs the views build; nothing here sets innerHTML.
'use strict';

(function () {
  const mounts = new Map();
  const panes = new Map();

  /** An element with a class and text (textContent: never parsed as HTML). */
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  /**
   * Subscribes to /feed/<name>[?key=]: onEvent gets each event; returns a
   * close function. A feed starts with a snapshot of what bb knows; when the
   * page fell behind (bb stopped writing to it: a background tab, a slow
   * machine) or reconnected, onEvent gets {type: 'resync'} and then a fresh
   * snapshot: the view drops what it drew from this feed and draws again.
   */
  function feed(name, key, onEvent) {
    const url = '/feed/' + encodeURIComponent(name) + (key === undefined ? '' : '?key=' + encodeURIComponent(key));
    const source = new EventSource(url);
    let opened = false;
    source.onmessage = (m) => {
      const event = JSON.parse(m.data);
      if (event.type === 'resync') showResync(name);
      onEvent(event);
    };
    source.onopen = () => {
      setConn(true);
      // EventSource reconnected by itself: bb sends a snapshot, as to a new page.
      if (opened) {
        showResync(name);
        onEvent({ type: 'resync' });
      }
      opened = true;
    };
    source.onerror = () => setConn(source.readyState === EventSource.OPEN);
    return () => source.close();
  }

  let resyncs = 0;

  /** Says in the header that a feed was drawn again from a snapshot (updates it missed were skipped, not replayed). */
  function showResync(name) {
    const r = document.getElementById('resync');
    resyncs++;
    r.hidden = false;
    r.dataset.count = String(resyncs);
    r.textContent = resyncs === 1 ? 'resynced' : `resynced ×${resyncs}`;
    r.title = `the page fell behind or reconnected; ${name} was drawn again from bb's current state at ${new Date().toLocaleTimeString()}`;
  }

  function setConn(up) {
    const c = document.getElementById('conn');
    c.textContent = up ? 'live' : 'disconnected';
    c.className = 'conn ' + (up ? 'up' : 'down');
  }

  /**
   * Registers a view: mount(container) draws it once, when it is first shown
   * and its script has loaded. A view opens its feeds when mounted: a browser
   * keeps only six connections to one host, so tabs never looked at hold none.
   */
  function view(name, mount) {
    mounts.set(name, mount);
    mountIfShown(name);
  }

  function mountIfShown(name) {
    const pane = panes.get(name);
    const mount = mounts.get(name);
    if (!pane || !mount || pane.hidden || pane.dataset.mounted) return;
    pane.dataset.mounted = '1';
    mount(pane);
  }

  function show(name) {
    for (const [n, pane] of panes) pane.hidden = n !== name;
    for (const tab of document.querySelectorAll('#tabs button')) tab.classList.toggle('on', tab.dataset.view === name);
    mountIfShown(name);
  }

  /**
   * A list of a growing array of items that draws only the rows in sight
   * (each `rowHeight` px): a few dozen elements whatever the length, reused as
   * it scrolls, redrawn at most once a frame. `cells` are the class names of
   * each row's spans; fill(rowElement, item) draws one; onDraw(shown, total)
   * follows each draw. add() appends (shown at once when it passes the
   * filter), insert() puts one before others (a late item of an ordered
   * list), replace() changes one, filter(test) shows only the items it
   * passes (undefined: all), clear() empties it, reveal(item) scrolls to one.
   * With `keep`, the list holds the latest items only: past keep + a tenth
   * the oldest go, down to keep, and onDrop(dropped) is told them.
   * At the end of the list, it keeps to the end.
   */
  function virtualList(parent, { rowHeight, cells, fill, onClick, onDraw, keep = Infinity, onDrop }) {
    const list = el('div', 'list');
    list.tabIndex = 0;
    // The rows sit inside the spacer, which clips them: the list scrolls as far as the items, no farther.
    const spacer = el('div', 'spacer');
    list.append(spacer);
    parent.append(list);
    const pool = [];
    const items = [];
    let shown = [];
    let test;
    let refilter = false;
    let grew = false;
    let pending = false;
    // An item to bring into view at the next draw (reveal()).
    let revealing;
    function draw() {
      pending = false;
      const follow = grew && revealing === undefined && list.scrollTop + list.clientHeight >= list.scrollHeight - rowHeight;
      grew = false;
      if (refilter) {
        refilter = false;
        shown = [];
        for (let i = 0; i < items.length; i++) if (!test || test(items[i])) shown.push(i);
      }
      if (onDraw) onDraw(shown.length, items.length);
      spacer.style.height = shown.length * rowHeight + 'px';
      if (follow) list.scrollTop = list.scrollHeight;
      if (revealing !== undefined) {
        const at = shownAt(items.indexOf(revealing));
        revealing = undefined;
        // Centred, unless it is in sight already.
        const top = at * rowHeight;
        if (at >= 0 && (top < list.scrollTop || top + rowHeight > list.scrollTop + list.clientHeight)) list.scrollTop = Math.max(0, top - (list.clientHeight - rowHeight) / 2);
      }
      const first = Math.max(0, Math.floor(list.scrollTop / rowHeight) - 2);
      const n = Math.max(0, Math.min(shown.length - first, Math.ceil(list.clientHeight / rowHeight) + 4));
      while (pool.length < n) {
        const r = el('div', 'row');
        for (const cls of cells) r.append(el('span', cls));
        if (onClick) r.addEventListener('click', () => onClick(r.bbItem));
        spacer.append(r);
        pool.push(r);
      }
      for (let k = 0; k < pool.length; k++) {
        const r = pool[k];
        r.hidden = k >= n;
        if (r.hidden) continue;
        r.bbItem = items[shown[first + k]];
        r.style.top = (first + k) * rowHeight + 'px';
        fill(r, r.bbItem);
      }
    }
    /** Where item index `i` is among the shown (they are in order), or -1. */
    function shownAt(i) {
      let lo = 0;
      let hi = shown.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (shown[mid] < i) lo = mid + 1;
        else hi = mid;
      }
      return i >= 0 && shown[lo] === i ? lo : -1;
    }
    // Past keep and its slack, the oldest items go (add() and insert() call it before they answer).
    function dropOldest() {
      if (items.length <= keep + Math.ceil(keep / 10)) return;
      const dropped = items.splice(0, items.length - keep);
      if (revealing !== undefined && dropped.includes(revealing)) revealing = undefined;
      refilter = true;
      if (onDrop) onDrop(dropped);
    }
    function schedule() {
      if (pending) return;
      pending = true;
      requestAnimationFrame(draw);
    }
    list.addEventListener('scroll', schedule);
    window.addEventListener('resize', schedule);
    return {
      list,
      schedule,
      /** Appends an item; returns its index. */
      add(item) {
        items.push(item);
        if (!refilter && (!test || test(item))) shown.push(items.length - 1);
        grew = true;
        dropOldest();
        schedule();
        return items.length - 1;
      },
      /** Puts an item at `index`, before the items from there on (at the end: add). */
      insert(index, item) {
        if (index >= items.length) return this.add(item);
        items.splice(index, 0, item);
        refilter = true;
        const before = items.length;
        dropOldest();
        schedule();
        return index - (before - items.length);
      },
      /** Changes the item at `index` (it may enter or leave the filter). */
      replace(index, item) {
        items[index] = item;
        if (test) refilter = true;
        schedule();
      },
      /** Removes every item (a feed's resync: its snapshot follows). */
      clear() {
        items.length = 0;
        shown = [];
        refilter = true;
        schedule();
      },
      /** Shows only the items `next` passes; undefined shows all. */
      filter(next) {
        test = next;
        refilter = true;
        schedule();
      },
      /** Scrolls `item` into sight at the next draw (after a filter change, among the items it shows). */
      reveal(item) {
        revealing = item;
        schedule();
      },
      /** The items shown, in order. */
      shownItems: () => shown.map((i) => items[i]),
      /** Every item, in order (filtered or not). */
      items: () => items.slice(),
    };
  }

  let token = '';

  /**
   * Asks the command to do something (POST /action/<name> with a JSON body and
   * this run's token); resolves to the JSON answer, rejects with its error sentence.
   */
  async function action(name, body) {
    const res = await fetch('/action/' + encodeURIComponent(name), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-BB-Token': token },
      body: JSON.stringify(body),
    });
    const answer = await res.json().catch(() => ({ error: 'HTTP ' + res.status }));
    if (!res.ok) throw new Error(answer.error || 'HTTP ' + res.status);
    return answer;
  }

  const openers = new Map();
  const opening = new Map();

  /** Registers what opening something in view `name` does (bb.open(name, what) calls it). */
  function opener(name, fn) {
    openers.set(name, fn);
    if (opening.has(name)) fn(opening.get(name));
    opening.delete(name);
  }

  /** Shows view `name` and opens `what` there (an exchange's key in the capture view); kept until the view registers. */
  function open(name, what) {
    show(name);
    const fn = openers.get(name);
    if (fn) fn(what);
    else opening.set(name, what);
  }

  /** Captured text with its controls and bidi characters written as \u202E (core/visible.ts, served as /shared.js): for titles and one-line labels. */
  function visible(text) {
    return window.bbVisibleText(String(text ?? ''));
  }

  /**
   * Captured text among bb's own words: a <bdi> (its direction isolated from the text around it) holding
   * visible(text), so a U+202E in a request cannot reverse what bb writes after it.
   */
  function captured(text, cls) {
    return el('bdi', cls, visible(text));
  }

  window.bb = { el, feed, view, virtualList, action, opener, open, visible, captured };

  fetch('/api/views')
    .then((r) => r.json())
    .then(({ title, views, token: t }) => {
      token = t;
      document.title = title;
      document.getElementById('title').textContent = title;
      const tabs = document.getElementById('tabs');
      for (const v of views) {
        const pane = el('section', 'view');
        pane.hidden = true;
        pane.dataset.view = v.name;
        document.getElementById('views').append(pane);
        panes.set(v.name, pane);
        const tab = el('button', '', v.title);
        tab.dataset.view = v.name;
        tab.addEventListener('click', () => show(v.name));
        tabs.append(tab);
        const script = document.createElement('script');
        script.src = 'views/' + encodeURIComponent(v.name) + '.js';
        document.head.append(script);
      }
      if (views.length > 0) show(views[0].name);
    });
})();
