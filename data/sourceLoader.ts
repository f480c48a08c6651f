import * as path from 'path';

/**
 * Running worker threads and child processes from TypeScript sources.
 *
 * Compiled code (dist/) starts workers from their .js files. Under ts-jest,
 * or in a checkout that was never built, only the .ts files exist, and a
 * worker thread or child process does not inherit jest's transform: it loads
 * TS_REQUIRE_HOOK first (`--require`), a require hook that transpiles .ts
 * files, and then the .ts module by its name like any other.
 */

/** The require hook's file (JavaScript: it runs before any TypeScript can); only runs from the sources use it. */
export const TS_REQUIRE_HOOK = path.join(__dirname, 'tsRequireHook.js');

/** Whether this module itself runs from a .ts file (ts-jest or the hook) rather than from dist/. */
export function runningFromSource(): boolean {
  return __filename.endsWith('.ts');
}

/**
 * How a worker thread loads the module at a path without extension: its
 * file, and the options the thread needs to load it (the require hook, from
 * the sources; the thread's own options are not the parent's then, which
 * may hold some a thread refuses).
 */
export function workerModule(modulePathNoExt: string): { filename: string; execArgv?: string[] } {
  if (!runningFromSource()) return { filename: `${modulePathNoExt}.js` };
  return { filename: `${modulePathNoExt}.ts`, execArgv: ['--require', TS_REQUIRE_HOOK] };
}
