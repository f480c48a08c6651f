import * as fs from 'fs';
import * as path from 'path';
import { spawnSync } from 'child_process';

/**
 * Command lines of the docs as a shell gives them to stereocut: the
 * README's examples found in its text, their words expanded by bash with
 * STEREO_DATA set, and stereocut's own arguments among those words.
 */

const ROOT = path.resolve(__dirname, '..', '..');

/** The README's command lines: `npx stereocut …` in sh blocks and in inline code, `$ stereocut …` in transcripts, and npm's commands. */
export function readmeExamples(readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')): string[] {
  const out: string[] = [];
  for (const block of readme.matchAll(/```(sh|text)\n([\s\S]*?)```/g)) {
    for (const line of block[2].split('\n')) {
      const cmd = line.replace(/\s+#.*$/, '').trim();
      if (block[1] === 'sh' && /^(npx stereocut|npm) /.test(cmd)) out.push(cmd);
      if (block[1] === 'text' && cmd.startsWith('$ stereocut ')) out.push(cmd.slice(2));
    }
  }
  for (const m of readme.matchAll(/`(npx stereocut [^`]+)`/g)) out.push(m[1]);
  return out;
}

/** The command line's words as bash expands them in `cwd` with STEREO_DATA set to `data` (a path that does not exist when absent). */
export function shellWords(cmd: string, cwd: string, data: string | undefined): string[] {
  const r = spawnSync('bash', ['-c', `printf '%s\\0' ${cmd}`], { cwd, encoding: 'utf8', env: { ...process.env, STEREO_DATA: data ?? '/nonexistent' } });
  if (r.status !== 0) throw new Error(`bash could not expand ${cmd}: ${r.stderr}`);
  return r.stdout.split('\0').slice(0, -1);
}

/** stereocut's arguments among a command line's words: after `npx stereocut` / `stereocut`, or those of the npm script it names. */
export function stereocutArgs(words: string[]): string[] {
  if (words[0] === 'npx' && words[1] === 'stereocut') return words.slice(2);
  if (words[0] === 'stereocut') return words.slice(1);
  if (words[0] === 'npm' && words[1] === 'run') {
    const script = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts[words[2]];
    const m = /^node dist\/app\/cli\.js (.*)$/.exec(script ?? '');
    if (!m) throw new Error(`npm run ${words[2]}: not a stereocut script (${script})`);
    return [...m[1].split(' '), ...words.slice(3)];
  }
  throw new Error(`not a stereocut command line: ${words.join(' ')}`);
}
