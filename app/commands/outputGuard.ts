import * as fs from 'fs';
import * as path from 'path';
import { sceneInputFiles } from '../../data/scene';

/** A path a command writes or reads, with what names it for the user: an option (`--output`) or an input ("left image"). */
export interface NamedPath {
  name: string;
  file: string;
}

/** The file a path ends at (links followed), as device and inode; undefined when nothing is there. */
function identity(file: string): { dev: number; ino: number } | undefined {
  try {
    const s = fs.statSync(file);
    return { dev: s.dev, ino: s.ino };
  } catch {
    return undefined;
  }
}

/** The path with every link resolved, of the file or of its nearest folder that exists (the rest may not exist yet). */
function resolvedPath(file: string): string {
  let head = path.resolve(file);
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(head), ...rest);
    } catch {
      const up = path.dirname(head);
      if (up === head) return path.resolve(file);
      rest.unshift(path.basename(head));
      head = up;
    }
  }
}

/**
 * Whether writing `output` would change the bytes of `input` or put the
 * output where the input is read: the same file by device and inode (a link
 * either way, a hard link, `./`, `..`, a relative path) or by resolved path.
 * A new file is written under a temporary name and renamed over the output
 * (data/atomicWrite.ts), so a link at the output's place would be replaced,
 * not followed; it is refused all the same, since the user named the input.
 */
export function samePlace(output: string, input: string): boolean {
  const a = identity(output);
  const b = identity(input);
  if (a && b && a.dev === b.dev && a.ino === b.ino) return true;
  return resolvedPath(output) === resolvedPath(input);
}

/**
 * Refuses, before any work, a command whose output would land on one of its
 * inputs (ground truth, masks and calib.txt included): one line naming the
 * option and the input.
 */
export function checkOutputsApart(outputs: NamedPath[], inputs: NamedPath[]): void {
  for (const o of outputs) {
    for (const i of inputs) {
      if (samePlace(o.file, i.file)) {
        const is = path.resolve(o.file) === path.resolve(i.file) ? 'is' : 'is the same file as';
        throw new Error(`${o.name}: ${o.file} ${is} the ${i.name} ${i.file}; an output never replaces an input, give another file`);
      }
    }
  }
}

/** Refuses two outputs of one command on one file (the later would replace the earlier): one line naming both options. */
export function checkOutputsDistinct(outputs: NamedPath[]): void {
  outputs.forEach((o, k) => {
    const other = outputs.slice(0, k).find((p) => samePlace(p.file, o.file));
    if (other) throw new Error(`${o.name}: ${o.file} is also the file of ${other.name}; give each output its own file`);
  });
}

/** The files of a scene folder a command reads, named for messages ("scene teddy's file"). */
export function sceneInputs(dir: string): NamedPath[] {
  return sceneInputFiles(dir).map((file) => ({ name: `input of scene ${path.basename(path.resolve(dir))}`, file }));
}
