import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

/**
 * The layering of the product's folders (DESIGN.md, "Structure"): imports run
 * down data → costs → gpu/runtime → gpu/costs → graphcut → gpu/maxflow →
 * expansion → gpu/move → stereo → app, so the library (everything but app/)
 * never depends on the application (the CLI, its commands, reports, the bench
 * command, the launcher's code cache) and can be used, built and reasoned
 * about without it. The device code's rooms (gpu/) sit each just above what it
 * needs: the runtime (with the backend registry, gpu/runtime/backends.ts,
 * beside the context it asks for an adapter) below the host's max-flow, so
 * that graphcut/ imports nothing of gpu/; the max-flow kernels above the grid graph they solve, the
 * move program above the MoveSolver interface it implements. The imports are read with the
 * TypeScript parser: static imports and re-exports, import() and require(),
 * and relative path strings (a worker started by path is a dependency too).
 */

const ROOT = path.resolve(__dirname, '..');
/** The product's folders, lowest first: each may import itself and those before it. */
const LAYERS = ['data', 'costs', 'gpu/runtime', 'gpu/costs', 'graphcut', 'gpu/maxflow', 'expansion', 'gpu/move', 'stereo', 'app'];
/** Folders that hold only layers (the device code's house: each of its rooms is a layer of its own). */
const HOUSES = ['gpu'];

/** The layer a module (or a path from the project root) belongs to: the longest layer that is a folder above it; -1 for none. */
function layerOf(module: string): number {
  let best = -1;
  LAYERS.forEach((l, i) => {
    if ((module === l || module.startsWith(`${l}/`)) && (best < 0 || l.length > LAYERS[best].length)) best = i;
  });
  return best;
}

interface Reference {
  /** The module referred to, relative to the project root, without extension (a folder's index resolved). */
  target: string;
  /** Whether only types are imported: gone from the compiled JavaScript. */
  typeOnly: boolean;
  /** A path to a file (a worker's entry) rather than an import: another thread's module, no cycle with this one. */
  byPath: boolean;
  line: number;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? sourceFiles(p) : d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') ? [p] : [];
  });
}

const files = LAYERS.flatMap((l) => sourceFiles(path.join(ROOT, l)));
const modules = new Set(files.map((f) => path.relative(ROOT, f).replace(/\.ts$/, '')));

/** The project module a relative specifier of `file` names, or undefined for a package or a file outside the product. */
function resolve(file: string, spec: string): string | undefined {
  if (!spec.startsWith('./') && !spec.startsWith('../')) return undefined;
  const bare = path.relative(ROOT, path.resolve(path.dirname(file), spec)).replace(/\.(ts|js)$/, '');
  if (modules.has(bare)) return bare;
  if (modules.has(`${bare}/index`)) return `${bare}/index`;
  // A path built from parts (path.join(__dirname, 'worker')) or a folder: kept by its layer for the layer check.
  return layerOf(bare) >= 0 ? bare : undefined;
}

function references(file: string): Reference[] {
  const text = fs.readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const out: Reference[] = [];
  const add = (spec: string, typeOnly: boolean, node: ts.Node, byPath = false): void => {
    const target = resolve(file, spec);
    if (target !== undefined) out.push({ target, typeOnly, byPath, line: sf.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.importClause?.isTypeOnly ?? false, node);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly, node);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true, node);
    } else if (ts.isCallExpression(node) && /^path\.(join|resolve)$/.test(node.expression.getText(sf)) && node.arguments.length > 1 &&
      ts.isIdentifier(node.arguments[0]) && node.arguments[0].text === '__dirname' && node.arguments.slice(1).every(ts.isStringLiteral)) {
      // A file next to this one by path (a worker's entry): path.join(__dirname, 'stripWorker.js').
      add(`./${node.arguments.slice(1).map((a) => (a as ts.StringLiteral).text).join('/')}`, false, node, true);
    } else if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && !ts.isImportDeclaration(node.parent) && !ts.isExportDeclaration(node.parent) && !ts.isLiteralTypeNode(node.parent)) {
      // import('…'), require('…') and any other relative path in a string.
      const call = ts.isCallExpression(node.parent) ? node.parent : undefined;
      const imported = call !== undefined && (call.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(call.expression) && call.expression.text === 'require'));
      add(node.text, false, node, !imported);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const graph = new Map(files.map((f) => [path.relative(ROOT, f).replace(/\.ts$/, ''), references(f)]));

describe('import layering', () => {
  test('the parser sees the imports (the checks below are not vacuous)', () => {
    expect(graph.size).toBeGreaterThan(150);
    expect(graph.get('app/cli')?.map((r) => r.target)).toContain('stereo/params');
    expect(graph.get('stereo/index')?.map((r) => r.target)).toContain('stereo/match');
    // A worker started by path: the strip pool's thread.
    expect(graph.get('stereo/stripRunner')?.map((r) => r.target)).toContain('stereo/stripWorker');
  });

  test('every source file of a house lies in one of its rooms', () => {
    const homeless = HOUSES.flatMap((h) => sourceFiles(path.join(ROOT, h))).map((f) => path.relative(ROOT, f)).filter((f) => layerOf(f) < 0);
    expect(homeless).toEqual([]);
    expect(graph.has('gpu/move/gpuMoveSolver')).toBe(true);
  });

  test('no library file imports the application (app/), by import, require or path', () => {
    const offending: string[] = [];
    for (const [module, refs] of graph) {
      if (module.startsWith('app/')) continue;
      for (const r of refs) if (r.target.startsWith('app/')) offending.push(`${module}.ts:${r.line} → ${r.target}`);
    }
    expect(offending).toEqual([]);
  });

  test('the host\'s max-flow (graphcut/) imports nothing of the device code (gpu/): seen folder by folder, no arrow runs up', () => {
    const offending: string[] = [];
    for (const [module, refs] of graph) {
      if (!module.startsWith('graphcut/')) continue;
      for (const r of refs) if (r.target.startsWith('gpu/')) offending.push(`${module}.ts:${r.line} → ${r.target}`);
    }
    expect(offending).toEqual([]);
    expect(graph.get('gpu/runtime/backends')?.map((r) => r.target)).toContain('gpu/runtime/context');
  });

  test(`each folder imports only itself and the folders before it: ${LAYERS.join(' → ')}`, () => {
    const offending: string[] = [];
    for (const [module, refs] of graph) {
      for (const r of refs) if (layerOf(r.target) > layerOf(module)) offending.push(`${module}.ts:${r.line} → ${r.target}`);
    }
    expect(offending).toEqual([]);
  });

  test('no import cycle (type-only imports aside: the build drops them; a worker started by path runs apart)', () => {
    // Tarjan's strongly connected components over the modules' value imports.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const cycles: string[][] = [];
    const connect = (v: string): void => {
      index.set(v, index.size);
      low.set(v, index.get(v)!);
      stack.push(v);
      onStack.add(v);
      for (const r of graph.get(v) ?? []) {
        const w = r.target;
        if (r.typeOnly || r.byPath || !graph.has(w)) continue;
        if (!index.has(w)) {
          connect(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) !== index.get(v)) return;
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).some((r) => !r.typeOnly && !r.byPath && r.target === v)) cycles.push(component.sort());
    };
    for (const v of graph.keys()) if (!index.has(v)) connect(v);
    expect(cycles).toEqual([]);
  });
});
