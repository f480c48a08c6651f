import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { spawnSync } from 'child_process';
import { writeSceneFolder } from './support/tuneSupport';

/**
 * The package as a user gets it: the project packed by `npm pack` (from a
 * copy of the package's files, with dist/ as `prepare` builds it: the
 * checkout's dist/ is never written), unpacked into a fresh
 * project made by `npm init -y` and `tsc --init` with the TypeScript the
 * project pins, and the README's library example compiled there unchanged
 * with that tsconfig.json and run, as CommonJS and as ESM. No network: the
 * tarball is unpacked where `npm install` would put it and its dependencies
 * are linked from this checkout's node_modules.
 */

const ROOT = path.resolve(__dirname, '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-package-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Runs a command; a failure throws with its output, so the test says what went wrong. */
function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' }, timeout: 240000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The README's library example: the TypeScript block under "## Library API", as shown. */
function readmeExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Library API'));
  const m = /```ts\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('README.md: no ```ts block under "## Library API"');
  return m[1];
}

/**
 * Whether the checkout's dist/ was built from the sources as they are: every
 * source file of tsconfig.json's folders has its .js and .d.ts there, written
 * after the source was last changed (tsc writes every output of a build).
 */
function distIsFresh(): boolean {
  const config = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] };
  const sources: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ts$/.test(e.name) && !/\.d\.ts$/.test(e.name)) sources.push(p);
    }
  };
  for (const dir of config.include) walk(path.join(ROOT, dir));
  return sources.every((src) => {
    const out = path.join(ROOT, 'dist', path.relative(ROOT, src)).replace(/\.ts$/, '');
    const built = [`${out}.js`, `${out}.d.ts`].map((f) => (fs.existsSync(f) ? fs.statSync(f).mtimeMs : -1));
    return Math.min(...built) >= fs.statSync(src).mtimeMs;
  });
}

/** The package's tarball, as `npm pack` makes it. */
function pack(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
  const stage = path.join(tmp, 'stage');
  fs.mkdirSync(stage);
  // npm packs package.json and the README whatever `files` says.
  for (const f of ['package.json', 'README.md', ...pkg.files.filter((f) => f !== 'dist')]) fs.cpSync(path.join(ROOT, f), path.join(stage, f), { recursive: true });
  // dist/ as `prepare` builds it: the checkout's own when it is of the current sources (after `npm ci` or a build), else built here.
  if (distIsFresh()) fs.cpSync(path.join(ROOT, 'dist'), path.join(stage, 'dist'), { recursive: true });
  else run(process.execPath, [TSC, '-p', path.join(ROOT, 'tsconfig.json'), '--outDir', path.join(stage, 'dist')], stage);
  const out = run('npm', ['pack', '--ignore-scripts', '--pack-destination', tmp], stage).trim().split('\n');
  return path.join(tmp, out[out.length - 1]);
}

describe('the packed package in a fresh project', () => {
  const app = path.join(tmp, 'app');
  let contents: string[] = [];

  beforeAll(async () => {
    const tarball = pack();
    contents = run('tar', ['-tzf', tarball], tmp).split('\n').filter(Boolean);
    fs.mkdirSync(app);
    run('npm', ['init', '-y'], app);
    run(process.execPath, [TSC, '--init'], app);
    const installed = path.join(app, 'node_modules', 'stereocut');
    fs.mkdirSync(installed, { recursive: true });
    run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'], tmp);
    const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; bin: Record<string, string> };
    for (const dep of Object.keys(manifest.dependencies)) {
      fs.mkdirSync(path.dirname(path.join(app, 'node_modules', dep)), { recursive: true });
      fs.symlinkSync(path.join(ROOT, 'node_modules', dep), path.join(app, 'node_modules', dep), 'dir');
    }
    fs.mkdirSync(path.join(app, 'node_modules', '.bin'));
    for (const [name, file] of Object.entries(manifest.bin)) {
      fs.chmodSync(path.join(installed, file), 0o755);
      fs.symlinkSync(path.join('..', 'stereocut', file), path.join(app, 'node_modules', '.bin', name));
    }
    // The folders the example reads: small scenes in a layout the loader accepts, under the names it gives.
    await writeSceneFolder(path.join(app, 'middlebury', 'tsukuba'), { seed: 61, width: 64, height: 48, ndisp: 10 });
    await writeSceneFolder(path.join(app, 'middlebury', 'venus'), { seed: 62, width: 64, height: 48, ndisp: 10 });
    fs.writeFileSync(path.join(app, 'main.ts'), readmeExample());
    // Parameter studies come from the package's 'stereocut/tune' (the application's, beside the library's entry).
    fs.writeFileSync(path.join(app, 'study.ts'), [
      "import type { TuneOptions } from 'stereocut/tune';",
      "async function study(): Promise<void> {",
      "  const { tune } = await import('stereocut/tune');",
      "  const options: Pick<TuneOptions, 'scenes'> = { scenes: [] };",
      "  console.log(typeof tune, Array.isArray(options.scenes));",
      "}",
      "study();",
      '',
    ].join('\n'));
  }, 300000);

  test('the package holds the built library, the launcher and the docs the README links', () => {
    for (const f of ['package/dist/stereo/index.js', 'package/dist/stereo/index.d.ts', 'package/dist/app/tune/tune.js', 'package/dist/app/tune/tune.d.ts', 'package/bin/stereocut.js', 'package/docs/smrf.md', 'package/docs/reference-figures.md', 'package/README.md']) expect(contents).toContain(f);
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const local = [...readme.matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)].map((m) => m[1]);
    expect(local.length).toBeGreaterThan(0);
    for (const l of local.filter((l) => l.startsWith('docs/'))) expect(contents).toContain(`package/${l}`);
  });

  test.each([['CommonJS', 'commonjs'], ['ESM', 'module']])('the README\'s library example compiles unchanged with the tsconfig.json of `tsc --init`, as %s, and runs', (_, type) => {
    const pkg = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ ...pkg, type }, null, 2));
    fs.rmSync(path.join(app, 'main.js'), { force: true });
    run(process.execPath, [TSC, '-p', app], app);
    const out = run(process.execPath, ['main.js'], app);
    // First the tsukuba line (bad % at 1 px, the final energy, the times), then venus's.
    expect(out).toMatch(/^\d+(\.\d+)? \d+ \{/);
    expect(out).toMatch(/\nvenus \d+\n$/);
    expect(run(process.execPath, ['study.js'], app)).toBe('function true\n');
  }, 120000);

  test('`npx stereocut demo` runs from the installed package', () => {
    const out = run('npx', ['stereocut', 'demo'], app);
    expect(out).toMatch(/bad pixels \(nonocc, > 1 px\): \d+\.\d\d%/);
    expect(fs.existsSync(path.join(app, 'stereocut-demo', 'disp.png'))).toBe(true);
  }, 120000);
});
