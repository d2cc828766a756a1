/**
 * Lists comment lines of the source that carry run figures or work-log notes, which belong in docs/ (a comment says
 * why; a figure it needs is a link to the docs section that holds it). comment-figures.test.ts runs it in the suite:
 *
 *   node --import tsx test/harness/comment-figures.ts [--include-bench] [--counts] [path ...]
 *
 * Without paths it reads every tracked *.ts outside test/, bench/ (unless --include-bench), node_modules and dist.
 * Prints `file:line [kinds] text`, or with --counts one `count file` line per file; exits 1 when anything is found.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** What marks a comment as a measurement or a work-log note, by kind (the kinds are printed with each line). */
export const PATTERNS: ReadonlyArray<readonly [kind: string, pattern: RegExp]> = [
  ['session', /\bsessions? \d+|\bthis session\b/i],
  ['issue', /\bissues? \d+/i],
  ['approx', /[≈~]\s?\d/],
  // A ratio (`0.957×`, `4× slower`), not a product (`8 × 2083`, `64 × k`, `1×1`).
  ['ratio', /\d(\.\d+)?\s?×(?!\s?(\d|[a-z]\b|\())|\b\d+\.\d+x\b/],
  ['measured', /\d+(\.\d+)?\s?[–-]\s?\d+(\.\d+)?\s?(ms|µs|s|MiB|GiB|MB|GB|%)(?![\w/])|\b\d+\.\d+\s?(ms|µs|s|MiB|GiB)\b|\d\s?% of\b/],
  ['percentile', /\bp(50|95|99)\s(of\s)?\d/],
  ['before-after', /\d\s?(ms|µs|s)?\s?→\s?[≈\d]/],
  ['work-log', /\.scratch|\bwhile writing this\b/i],
  ['commit', /\((?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\)/],
];

export interface Finding {
  file: string;
  line: number;
  kinds: string[];
  text: string;
}

/** Every comment of a TypeScript source, as parsed by the compiler (strings, templates and regexes are not comments). */
export function comments(source: string, fileName = 'x.ts'): Array<{ pos: number; end: number }> {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const seen = new Map<number, { pos: number; end: number }>();
  const add = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) seen.set(r.pos, { pos: r.pos, end: r.end });
  };
  const visit = (node: ts.Node) => {
    add(ts.getLeadingCommentRanges(source, node.getFullStart()));
    add(ts.getTrailingCommentRanges(source, node.getEnd()));
    node.getChildren(sf).forEach(visit);
  };
  visit(sf);
  return [...seen.values()].sort((a, b) => a.pos - b.pos);
}

/** The comment lines of one file that match a pattern, numbered from 1. */
export function scan(file: string, source: string): Finding[] {
  const found: Finding[] = [];
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  for (const { pos, end } of comments(source, file)) {
    const first = sf.getLineAndCharacterOfPosition(pos).line;
    source
      .slice(pos, end)
      .split('\n')
      .forEach((text, i) => {
        const kinds = PATTERNS.filter(([, re]) => re.test(text)).map(([kind]) => kind);
        if (kinds.length > 0) found.push({ file, line: first + i + 1, kinds, text: text.trim() });
      });
  }
  return found;
}

export function sourceFiles(root: string, includeBench: boolean): string[] {
  return execFileSync('git', ['ls-files', '*.ts'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f !== '' && !f.endsWith('.d.ts'))
    .filter((f) => !/^(test|node_modules|dist)\//.test(f) && (includeBench || !f.startsWith('bench/')));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const root = join(import.meta.dirname, '..', '..');
  const paths = args.filter((a) => !a.startsWith('--'));
  const files = paths.length > 0 ? paths : sourceFiles(root, args.includes('--include-bench'));
  const findings = files.flatMap((f) => scan(f, readFileSync(join(root, f), 'utf8')));
  if (args.includes('--counts')) {
    const counts = new Map<string, number>();
    for (const f of findings) counts.set(f.file, (counts.get(f.file) ?? 0) + 1);
    for (const [file, n] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`${String(n).padStart(4)} ${file}`);
  } else {
    for (const f of findings) console.log(`${f.file}:${f.line} [${f.kinds.join(',')}] ${f.text}`);
  }
  console.log(`${findings.length} comment lines in ${new Set(findings.map((f) => f.file)).size} files`);
  process.exitCode = findings.length > 0 ? 1 : 0;
}
