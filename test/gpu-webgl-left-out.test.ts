import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/*
 * gpu.js loaded without its WebGL backends (gpu/runtime/gpujs/gpuJs.ts). Jest
 * keeps a module registry of its own, in which Node's module cache, where
 * the stand-ins go, plays no part: these checks run the built code in child
 * processes of plain Node, as a user's process loads it.
 */

const root = path.join(__dirname, '..');
const dist = path.join(root, 'dist');

function node(script: string): { status: number | null; stdout: string; stderr: string } {
  if (!fs.existsSync(path.join(dist, 'gpu', 'runtime', 'gpujs', 'gpuJs.js'))) {
    throw new Error('dist/ is missing: run npm run build (npm ci does it through the prepare script)');
  }
  return spawnSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' });
}

describe('gpu.js without its WebGL backends', () => {
  test('the WebGL modules are stand-ins, every other module of gpu.js is the real one, and gpu.js answers as before', () => {
    const r = node(`
      const before = new Set(Object.keys(require.cache));
      const { GPU, Input } = require('./dist/gpu/runtime/gpujs/gpuJs');
      const real = require('gpu.js');
      const loaded = Object.keys(require.cache).filter((f) => !before.has(f) && f.includes('gpu.js' + require('path').sep + 'src'));
      const webgl = loaded.filter((f) => /[\\\\/](web-gl2?|headless-gl|gl)[\\\\/]/.test(f));
      // A stand-in has no children (it required nothing); the real WebGL kernel requires dozens of modules.
      const standIns = webgl.filter((f) => require.cache[f].children.length === 0);
      const gpu = new GPU({ mode: 'cpu' });
      const k = gpu.createKernel(function (a) { return a[this.thread.x] * 2 + 1; }, { output: [5] });
      console.log(JSON.stringify({
        sameClasses: GPU === real.GPU && Input === real.Input,
        webgl: webgl.length, standIns: standIns.length,
        webgpuLoaded: loaded.some((f) => f.endsWith(require('path').join('web-gpu', 'kernel.js'))),
        supported: [GPU.isWebGLSupported, GPU.isWebGL2Supported, GPU.isHeadlessGLSupported, GPU.isGPUSupported],
        kernel: Array.from(k([1, 2, 3, 4, 5])),
      }));
    `);
    expect(r.stderr).toBe('');
    const got = JSON.parse(r.stdout) as { sameClasses: boolean; webgl: number; standIns: number; webgpuLoaded: boolean; supported: boolean[]; kernel: number[] };
    expect(got.sameClasses).toBe(true);
    expect(got.webgl).toBe(8);
    expect(got.standIns).toBe(8);
    expect(got.webgpuLoaded).toBe(true);
    // What real gpu.js answers in Node, in a process of its own: the stand-ins change none of it.
    const plain = node(`const { GPU } = require('gpu.js'); console.log(JSON.stringify([GPU.isWebGLSupported, GPU.isWebGL2Supported, GPU.isHeadlessGLSupported, GPU.isGPUSupported]));`);
    expect(got.supported).toEqual(JSON.parse(plain.stdout));
    expect(got.supported.slice(0, 3)).toEqual([false, false, false]);
    expect(got.kernel).toEqual([3, 5, 7, 9, 11]);
  });

  test('where gpu.js was loaded first, nothing is replaced', () => {
    const r = node(`
      require('gpu.js');
      const { leaveOutWebGlBackends } = require('./dist/gpu/runtime/gpujs/internals');
      const webgl = require.resolve('gpu.js/src/backend/web-gl/kernel.js');
      const children = require.cache[webgl].children.length;
      console.log(JSON.stringify({ entered: leaveOutWebGlBackends(), children, same: require.cache[webgl].children.length === children }));
    `);
    expect(r.stderr).toBe('');
    const got = JSON.parse(r.stdout) as { entered: boolean; children: number; same: boolean };
    expect(got.entered).toBe(false);
    expect(got.children).toBeGreaterThan(0);
    expect(got.same).toBe(true);
  });

  test('a whole match through the launcher, on gpu.js, gives the energy of BK', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'stereocut-webgl-'));
    try {
      const energy = (backend: string): number => {
        const r = spawnSync(process.execPath, [path.join(root, 'bin', 'stereocut.js'), 'demo', '--backend', backend, '--width', '40', '--height', '30', '--out-dir', path.join(out, backend), '--json'], { encoding: 'utf8' });
        expect(r.status).toBe(0);
        const j = JSON.parse(r.stdout) as { finalEnergy: { total: number }; backend: string };
        if (backend !== 'bk') expect(j.backend).toMatch(/gpu/);
        return j.finalEnergy.total;
      };
      expect(energy('gpujs-cpu')).toBe(energy('bk'));
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
