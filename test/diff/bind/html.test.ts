// The attributes of an HTML page that issue values (diff/bind/html.ts), and
// what the binding takes from them (issued.ts): made tokens only, at places
// that name their element.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { htmlValues, isHtml } from '../../../diff/bind/html.js';
import { responseValues } from '../../../diff/bind/index.js';

const PAGE = `<!DOCTYPE html>
<html><head>
<meta charset="utf-8"><meta name="csrf-token" content="Xk9fQ2pL_7aB-3dE">
<meta name="description" content="The best widgets in 2026, made by hand">
<title>Order 1042</title></head>
<body><p>Your order 1042 is ready. <a href="/orders/1042/edit">Edit it</a> or <A HREF='/orders?page=2&amp;sort=new'>see all</A>.</p>
<form action="/orders/1042" method="post">
  <input type="hidden" name="authenticity_token" value="aB3xYz9_QrT-1kLm" autocomplete="off">
  <input type=hidden name=_method value=patch>
  <input type="text" name="note" value="typed 5555">
  <input type="submit" value="Save">
</form>
<form action='/orders/1042/cancel'><input type="hidden" name="authenticity_token" value="zZ8&#x2D;yY7wW6"></form>
</body></html>`;

describe('htmlValues', () => {
  it("reads hidden inputs by name, metas by name, links' and forms' targets by their number, entities decoded, in page order", () => {
    assert.deepEqual(htmlValues(PAGE), [
      { place: 'meta[csrf-token]', value: 'Xk9fQ2pL_7aB-3dE' },
      { place: 'meta[description]', value: 'The best widgets in 2026, made by hand' },
      { place: 'a#0@href', value: '/orders/1042/edit' },
      { place: 'a#1@href', value: '/orders?page=2&sort=new' },
      { place: 'form#0@action', value: '/orders/1042' },
      { place: 'input[authenticity_token]', value: 'aB3xYz9_QrT-1kLm' },
      { place: 'input[_method]', value: 'patch' },
      { place: 'form#1@action', value: '/orders/1042/cancel' },
      { place: 'input[authenticity_token]#1', value: 'zZ8-yY7wW6' },
    ]);
  });

  it('reads a hostile page as HTML\'s tokenizer does: a quarter million tags that never end, then a quote never closed', () => {
    assert.deepEqual(htmlValues('<a x'.repeat(250_000)), []);
    const page = '<input type="hidden" name="t" value="ok1234"><a href="x' + '<a title=y '.repeat(10_000) + "<input type='hidden' name='u' value='lost9999'>";
    // The first quote never closed takes the rest of the page into its tag, as HTML reads it.
    assert.deepEqual(htmlValues(page).map((v) => v.value), ['ok1234']);
  });

  it('is a page by its media type, or without one by its start', () => {
    assert.equal(isHtml('{"a":1}', 'text/html; charset=utf-8'), true);
    assert.equal(isHtml('<!doctype html><p>', undefined), true);
    assert.equal(isHtml('<html lang="en">', undefined), true);
    assert.equal(isHtml('<p>hi</p>', 'text/plain'), false);
    assert.equal(isHtml('<note>1</note>', undefined), false);
  });
});

describe('responseValues of an HTML page', () => {
  it('issues the made tokens of those attributes, never the words of the page or of its attributes', () => {
    const values = responseValues({ headers: [{ name: 'Content-Type', value: 'text/html; charset=utf-8' }], text: PAGE });
    assert.deepEqual(values, [
      { place: 'html:meta[csrf-token]~0', value: 'Xk9fQ2pL_7aB-3dE' },
      { place: 'html:a#0@href~1', value: '1042' },
      { place: 'html:form#0@action~1', value: '1042' },
      { place: 'html:input[authenticity_token]~0', value: 'aB3xYz9_QrT-1kLm' },
      { place: 'html:form#1@action~1', value: '1042' },
      { place: 'html:input[authenticity_token]#1~0', value: 'zZ8-yY7wW6' },
    ]);
  });
});
