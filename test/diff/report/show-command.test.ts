// The bb show command under a finding (diff/report/show-command.ts): the new
// capture's exchange of the first sample, the old one's for a missing entry,
// a path with spaces quoted; printed in the text report under real findings
// and in the HTML report (escaped) under every finding's samples.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderHtml, renderText } from '../../../diff/index.js';
import { exchangesOf, showCommand } from '../../../diff/report/show-command.js';
import { capture } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';
import { diffAgreeing } from '../diff-bounded.js';

describe('the bb show command of a finding', () => {
  const t = tempDir();

  it('opens the new side, the old one for a missing entry, and quotes a path a shell would split', async () => {
    const base = 'http://127.0.0.1:1';
    const r = await diffAgreeing(t, capture([{ url: `${base}/a`, body: { v: 1 } }, { url: `${base}/gone`, body: {} }]), capture([{ url: `${base}/a`, body: { v: 2 } }]));
    const x = exchangesOf(r);
    const changed = r.findings.find((f) => f.kind === 'changed')!;
    const missing = r.findings.find((f) => f.kind === 'missing')!;
    assert.equal(showCommand(changed, r, x), `bb show ${r.new.path} --entry '#1' --body`);
    assert.equal(showCommand(missing, r, x), `bb show ${r.old.path} --entry '#2' --body`);
    assert.equal(showCommand(changed, { old: r.old, new: { ...r.new, path: "my caps/it's.har" } }, x), `bb show 'my caps/it'\\''s.har' --entry '#1' --body`);
    assert.equal(showCommand({ samples: [] }, r, x), undefined);
    const text = renderText(r, { color: false });
    assert.ok(text.includes(`      e.g. GET /a\n      bb show ${r.new.path} --entry '#1' --body\n`), text);
    const html = await renderHtml(r);
    assert.ok(html.includes(`<p class="fopen">open the first: <code>bb`), 'the HTML report shows it');
  });
});
