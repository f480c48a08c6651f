/**
 * Running worker threads and child processes from TypeScript sources.
 *
 * Compiled code (dist/) starts workers from their .js files. Under ts-jest,
 * or in a checkout that was never built, only the .ts files exist, and a
 * worker thread does not inherit jest's transform; these snippets register a
 * minimal require hook that transpiles .ts files with the TypeScript compiler
 * already in devDependencies (type checking stays with `tsc`).
 */

/**
 * JavaScript that makes `require('x.ts')` work in the process or thread it
 * runs in. The compiler is named by absolute path: eval'd code resolves
 * modules from the current folder, which need not be the project.
 */
export function tsRequireHook(): string {
  return `
(() => {
  const Module = require('module');
  if (Module._extensions['.ts']) return;
  const ts = require(${JSON.stringify(require.resolve('typescript'))});
  const fs = require('fs');
  Module._extensions['.ts'] = (module, filename) => {
    const out = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
      fileName: filename,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true, sourceMap: false },
    });
    module._compile(out.outputText, filename);
  };
})();
`;
}

/** Whether this module itself runs from a .ts file (ts-jest or the hook above) rather than from dist/. */
export function runningFromSource(): boolean {
  return __filename.endsWith('.ts');
}

/**
 * Worker source for a module path without extension: the compiled .js when
 * this code is compiled, else a bootstrap that loads the .ts through the hook.
 */
export function workerEntry(modulePathNoExt: string): { code: string; eval: boolean } {
  if (!runningFromSource()) return { code: `${modulePathNoExt}.js`, eval: false };
  return { code: `${tsRequireHook()}\nrequire(${JSON.stringify(`${modulePathNoExt}.ts`)});`, eval: true };
}
