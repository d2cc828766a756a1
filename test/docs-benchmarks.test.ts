import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// docs/benchmarks.md is where anyone finds today's figure: one table, one row per target, short cells. The history
// of every run lives in docs/bench-history.md; a figure that needs more than a cell links there.
const DOCS = join(import.meta.dirname, '..', 'docs');
const COLUMNS = ['what', 'target', 'figure', 'command', 'date'];
const MAX_CELL = 300;

/** A table row's cells: split on `|` outside code spans, `\|` kept as text. */
function cells(line: string): string[] {
  const out: string[] = [];
  let cell = '';
  let code = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && line[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (c === '`') {
      code = !code;
      cell += c;
    } else if (c === '|' && !code) {
      out.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  out.push(cell.trim());
  // The leading and trailing pipes leave an empty cell at each end.
  return out.slice(1, -1);
}

/** GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(join(DOCS, file), 'utf8');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

const text = readFileSync(join(DOCS, 'benchmarks.md'), 'utf8');
const lines = text.split('\n');

t.test('docs/benchmarks.md holds one table: what, target, figure, command, date', async (t) => {
  const tableLines = lines.flatMap((line, i) => (line.startsWith('|') ? [i] : []));
  t.ok(tableLines.length > 3, `${tableLines.length} table lines`);
  t.same(
    tableLines.filter((n, k) => k > 0 && n !== tableLines[k - 1]! + 1),
    [],
    'the table lines are one block',
  );
  t.same(cells(lines[tableLines[0]!]!), COLUMNS);
  t.match(lines[tableLines[1]!]!, /^\|(\s*:?-+:?\s*\|){5}$/, 'the header is followed by its separator');
});

t.test('every row of docs/benchmarks.md has all five cells, none over 300 characters', async (t) => {
  const rows = lines.filter((line) => line.startsWith('|')).slice(2);
  t.ok(rows.length >= 10, `${rows.length} rows`);
  const problems: string[] = [];
  for (const row of rows) {
    const c = cells(row);
    const what = c[0] ?? row.slice(0, 40);
    if (c.length !== COLUMNS.length) problems.push(`${what}: ${c.length} cells`);
    c.forEach((cell, i) => {
      if (cell === '') problems.push(`${what}: empty ${COLUMNS[i]}`);
      if (cell.length > MAX_CELL) problems.push(`${what}: ${COLUMNS[i]} has ${cell.length} characters`);
    });
    const date = c[4] ?? '';
    if (!/^(\d{4}-\d{2}-\d{2}|—)$/.test(date)) problems.push(`${what}: date "${date}" is not YYYY-MM-DD or —`);
  }
  t.same(problems, []);
});

t.test('the figures link to sections that exist, and to the history', async (t) => {
  const targets = [...text.matchAll(/\]:\s*(\S+)|\]\(([^)\s]+)\)/g)].map((m) => (m[1] ?? m[2])!);
  t.ok(
    targets.some((to) => to.startsWith('bench-history.md')),
    'the history is linked',
  );
  const broken = targets.filter((to) => {
    const [file, anchor] = to.split('#');
    if (!file || /^[a-z]+:/.test(file)) return false;
    try {
      return anchor !== undefined && !anchors(file).has(anchor);
    } catch {
      return true;
    }
  });
  t.same(broken, []);
});
