import * as fs from 'fs';
import * as path from 'path';
import { spawn, type ChildProcess } from 'child_process';
import { generateSyntheticScene } from '../../data/synthetic';
import { writePfm, writePng } from '../../data/imageIO';
import { TS_REQUIRE_HOOK } from '../../data/sourceLoader';

/**
 * Test support for the research commands: scene folders written from the
 * synthetic generator (MiddEval3 layout: im0/im1.png, disp0GT.pfm,
 * mask0nocc.png, calib.txt) and the CLI spawned from the TypeScript sources.
 */

export const ROOT = path.resolve(__dirname, '..', '..');

export async function writeSceneFolder(dir: string, o: { seed: number; width?: number; height?: number; ndisp?: number; groundTruth?: boolean }): Promise<string> {
  const s = generateSyntheticScene({ seed: o.seed, width: o.width ?? 64, height: o.height ?? 48, ndisp: o.ndisp ?? 10 });
  fs.mkdirSync(dir, { recursive: true });
  await writePng(path.join(dir, 'im0.png'), s.left);
  await writePng(path.join(dir, 'im1.png'), s.right);
  fs.writeFileSync(path.join(dir, 'calib.txt'), `width=${s.left.width}\nheight=${s.left.height}\nndisp=${s.ndisp}\n`);
  if (o.groundTruth ?? true) {
    writePfm(path.join(dir, 'disp0GT.pfm'), s.left.width, s.left.height, s.groundTruth!);
    const mask = new Float32Array(s.left.width * s.left.height);
    for (let i = 0; i < mask.length; i++) mask[i] = s.masks.nonocc![i] ? 255 : 128;
    await writePng(path.join(dir, 'mask0nocc.png'), { width: s.left.width, height: s.left.height, channels: 1, data: mask, maxval: 255 });
  }
  return dir;
}

/** Starts `stereocut <args>` from the sources in a child process. */
export function spawnCli(args: string[], cwd = ROOT, env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const script = `require(${JSON.stringify(path.join(ROOT, 'app', 'cli.ts'))}).main(${JSON.stringify(args)}).then((c) => { process.exitCode = c; });`;
  return spawn(process.execPath, ['--require', TS_REQUIRE_HOOK, '-e', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

export function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawnCli(args);
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (d) => { stdout += d; });
    p.stderr!.on('data', (d) => { stderr += d; });
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Lists every file under a folder (relative paths), for "nothing was written" checks. */
export function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}
