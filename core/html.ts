// What every self-contained page of bb shares (the diff report, bb frames
// --html, the live view): escaping, the head with its CSP, JSON for a script
// element. In core/ so that inspect/ (and any page) escapes with the same
// function as the diff report without loading diff/ or jsondiffpatch.

/** Escapes text for HTML content and quoted attributes: & < > " '. */
export function esc(s: unknown): string {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * The head of one of bb's self-contained pages, up to and including
 * `<body>`: a CSP that lets only the nonce's script run and loads nothing
 * (`style.nonced`: only the nonce's style too; else inline styles are
 * allowed, as jsondiffpatch's view needs), no referrer, the title escaped.
 */
export function pageHead(title: string, nonce: string, style: { css: string; nonced: boolean }): string {
  const styleSrc = style.nonced ? `'nonce-${nonce}'` : "'unsafe-inline'";
  const csp = `default-src 'none'; style-src ${styleSrc}; script-src 'nonce-${nonce}'; img-src 'none'; base-uri 'none'; form-action 'none'`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style${style.nonced ? ` nonce="${nonce}"` : ''}>${style.css}</style>
</head><body>`;
}

/** JSON safe inside <script type="application/json">: cannot end the element or the line. */
export function scriptJson(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
