// The rule by which a command output shown in the docs is held to a real
// run: both texts are masked (what varies from run to run becomes a
// placeholder), then the block's lines must be a contiguous run of the real
// output's lines. The rule is here, apart from the runs, so its own table
// test (outputs.cli.test.ts) can state it.
//
// A shown block is an indented code block right after a marker line
// `<!-- output: NAME -->` (a blank line between them is allowed); NAME
// says which real run it comes from. A marker indented as a list item's text
// is followed by a block indented 4 more (a code block inside the item).
// Inside a block, a line `…` stands for any number of real lines, and a line
// starting with `$ ` is the command, shown, not compared (with the lines it
// continues onto when it ends in `\`). A run that shows its exit status
// (`$ echo $?`) has it as its last real line.

/** One shown output in a page. */
export interface ShownBlock {
  /** The page, relative to the repository ("docs/diff.md"). */
  page: string;
  /** 1-based line of the marker. */
  line: number;
  /** The run the marker names. */
  name: string;
  /** The block's lines, indentation of the code block (the marker's own and four spaces) removed. */
  lines: string[];
}

/** The marked blocks of one markdown page. */
export function shownBlocks(page: string, markdown: string): ShownBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShownBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = /^( *)<!-- output: (.+?) -->$/.exec(lines[i]);
    if (!marker) continue;
    const indent = `${marker[1]}    `;
    let at = i + 1;
    if (lines[at] === '') at++;
    const body: string[] = [];
    // An indented block runs over indented lines and blank lines between them.
    while (at < lines.length && (lines[at].startsWith(indent) || (lines[at].trim() === '' && lines[at + 1]?.startsWith(indent)))) {
      body.push(lines[at].slice(indent.length));
      at++;
    }
    blocks.push({ page, line: i + 1, name: marker[2], lines: body });
  }
  return blocks;
}

/**
 * What varies between runs, masked (in this order):
 * `file://` paths cut short by `…`; uuids → <UUID>; finding and row ids (`F` + 9 hex, 10 hex) → <ID>;
 * durations (`3 ms`, `1.2 s`) → <TIME>; sizes (`131 B`, `1.2 KB`) → <SIZE>;
 * a timing row's route, verdict and budget mark (rows are sorted by their change,
 * and under load a fast route's noisy ratio can sort above the slow one);
 * any other number (ports, counts, dates, ratios, p-values) → N;
 * runs of spaces after the indentation → one space (column padding).
 */
export function mask(line: string): string {
  return line
    .replace(/file:\/\/[^\s…]*…/g, 'file://<PATH>…')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<UUID>')
    .replace(/\b(F[0-9a-f]{9}|[0-9a-f]{10})\b/g, '<ID>')
    .replace(/[-+]?\d+(\.\d+)? ?(ms|s)\b/g, '<TIME>')
    .replace(/\d+(\.\d+)? ?(B|KB|MB|GB)\b/g, '<SIZE>')
    .replace(/^(\s*timing\/)\S+ \S+\s+(slower|faster|~|n too small|noisy)(?=\s)(.*?)(\s+OVER BUDGET)?$/, '$1<ROUTE> <VERDICT>$3')
    .replace(/[-+]?\d+(\.\d+)?(e[-+]?\d+)?/g, 'N')
    .replace(/(\S) {2,}/g, '$1 ')
    .trimEnd();
}

/**
 * Lines bb prints only when the machine is busy, which no doc shows: the
 * shadow's notice that its starved comparison worker was replaced at the end
 * (docs/shadow.md "Limits"; the docs test's own shadow run met it under a
 * loaded suite).
 */
export const BUSY_MACHINE_LINES: readonly RegExp[] = [/^the comparison worker got too little CPU at the end \(/];

/** The real output as lines: the run's folder dropped from paths (docs show them relative), colour-free, busy-machine notices left out. */
export function realLines(output: string, cwd: string): string[] {
  return output
    .split(`${cwd}/`)
    .join('')
    .replace(/\n$/, '')
    .split('\n')
    .filter((line) => !BUSY_MACHINE_LINES.some((busy) => busy.test(line)));
}

/** A block's output lines: its commands (`$ ` lines and the lines a trailing `\` continues them onto) left out. */
function shownOutput(block: readonly string[]): string[] {
  const out: string[] = [];
  let command = false;
  for (const line of block) {
    if (line.startsWith('$ ') || command) command = line.trimEnd().endsWith('\\');
    else out.push(line);
  }
  return out;
}

/**
 * Where the block differs from every contiguous run of the real lines, as a
 * sentence; undefined when it matches one. Both sides are masked first.
 */
export function shapeMismatch(block: readonly string[], real: readonly string[]): string | undefined {
  const want = shownOutput(block).map(mask);
  const have = real.map(mask);
  // Matches want[i..] against have[j..]: `…` takes zero or more lines.
  const from = (i: number, j: number): boolean => {
    if (i === want.length) return true;
    if (want[i] === '…') {
      for (let k = j; k <= have.length; k++) if (from(i + 1, k)) return true;
      return false;
    }
    return j < have.length && want[i] === have[j] && from(i + 1, j + 1);
  };
  for (let start = 0; start < Math.max(1, have.length); start++) if (from(0, start)) return undefined;
  // Say which line first fails against the real line it lines up with best (same first masked line, else line 0).
  const anchor = Math.max(0, have.indexOf(want[0]));
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '…') break;
    if (want[i] !== have[anchor + i]) return `line ${i + 1} of the block:\n  shown: ${want[i]}\n  real:  ${have[anchor + i] ?? '(no line)'}\nreal output (masked):\n${have.join('\n')}`;
  }
  return `the block is no contiguous run of the real output (masked):\n${have.join('\n')}`;
}
