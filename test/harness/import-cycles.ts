// The import graph of the repository's own TypeScript, and its circles (issue 44 item 2). Every edge counts:
// static, type-only, re-export and dynamic `import()`, because a type-only circle still ties two files together.
// Run by `npm run lint` (this file as a script) and by test/harness/import-cycles.test.ts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SKIP = new Set(['node_modules', 'dist', 'data', '.tap', '.git', 'test-output']);

/** Every .ts file under `root` (repo-relative, `/`-separated), outside the folders no source lives in. */
export function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.scratch') || SKIP.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(relative(root, path).split(sep).join('/'));
    }
  };
  walk(root);
  return out.sort();
}

/** The files `file` imports, among the repository's own: relative specifiers resolved the way NodeNext does (.js → .ts). */
export function importsOf(root: string, file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
  const out = new Set<string>();
  for (const { fileName } of info.importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const abs = resolve(root, dirname(file), fileName);
    const candidates = [abs.replace(/\.js$/, '.ts'), abs.replace(/\.mjs$/, '.mts'), abs, `${abs}.ts`, join(abs, 'index.ts')];
    const hit = candidates.find((c) => c.endsWith('.ts') && existsSync(c));
    if (hit) out.add(relative(root, hit).split(sep).join('/'));
  }
  return [...out].sort();
}

/**
 * The circles of the import graph: one per strongly connected component of more than one file (or a file importing
 * itself), each given as one closed path through it, e.g. `a.ts → b.ts → a.ts`.
 */
export function findCycles(root: string): string[][] {
  const files = sourceFiles(root);
  const edges = new Map(files.map((f) => [f, importsOf(root, f)]));
  // Tarjan's strongly connected components, iteratively so a deep chain cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const start of files) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: start, i: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = edges.get(frame.node) ?? [];
      if (frame.i < targets.length) {
        const to = targets[frame.i++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1 || targets.includes(frame.node)) components.push(component.sort());
      }
    }
  }
  return components.map((component) => closedPath(component, edges));
}

/** One circle through a component: the shortest path from its first file back to itself, inside the component. */
function closedPath(component: string[], edges: Map<string, string[]>): string[] {
  const inside = new Set(component);
  const first = component[0]!;
  const from = new Map<string, string>();
  const queue = [first];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of edges.get(node) ?? []) {
      if (!inside.has(to)) continue;
      if (to === first) {
        const path = [first];
        for (let at = node; at !== first; at = from.get(at)!) path.splice(1, 0, at);
        return [...path, first];
      }
      if (!from.has(to)) {
        from.set(to, node);
        queue.push(to);
      }
    }
  }
  return [first, first];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const cycles = findCycles(root);
  for (const cycle of cycles) console.error(`import circle: ${cycle.join(' → ')}`);
  if (cycles.length > 0) process.exitCode = 1;
}
