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

  /** Subscribes to /feed/<name>[?key=]: onEvent gets each event; returns a close function. */
  function feed(name, key, onEvent) {
    const url = '/feed/' + encodeURIComponent(name) + (key === undefined ? '' : '?key=' + encodeURIComponent(key));
    const source = new EventSource(url);
    source.onmessage = (m) => onEvent(JSON.parse(m.data));
    source.onopen = () => setConn(true);
    source.onerror = () => setConn(source.readyState === EventSource.OPEN);
    return () => source.close();
  }

  function setConn(up) {
    const c = document.getElementById('conn');
    c.textContent = up ? 'live' : 'disconnected';
    c.className = 'conn ' + (up ? 'up' : 'down');
  }

  /** Registers a view: mount(container) draws it once, when its script has loaded. */
  function view(name, mount) {
    mounts.set(name, mount);
    const pane = panes.get(name);
    if (pane) mount(pane);
  }

  function show(name) {
    for (const [n, pane] of panes) pane.hidden = n !== name;
    for (const tab of document.querySelectorAll('#tabs button')) tab.classList.toggle('on', tab.dataset.view === name);
  }

  window.bb = { el, feed, view };

  fetch('/api/views')
    .then((r) => r.json())
    .then(({ title, views }) => {
      document.title = title;
      document.getElementById('title').textContent = title;
      const tabs = document.getElementById('tabs');
      for (const v of views) {
        const pane = el('section', 'view');
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
