import type { Argv } from 'yargs';

/**
 * The disparity range of a pair given on the command line (match,
 * export-mrf): --ndisp N (disparities 0..N−1, as before) or --max-disp N,
 * optionally raised at the bottom by --min-disp M; label l is disparity
 * M + l, so the energy has max − min + 1 labels.
 */
export interface RangeArgs {
  ndisp?: number;
  'min-disp'?: number;
  'max-disp'?: number;
}

export interface LabelRange {
  minDisp: number;
  /** Number of labels. */
  ndisp: number;
}

function nonNegativeInteger(name: string, v: number | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new Error(`--${name}: got '${String(v)}', expected an integer ≥ 0`);
  return v;
}

/** Resolves and checks the range against the image width; every error names its option. */
export function labelRange(a: RangeArgs, width: number): LabelRange {
  const minDisp = nonNegativeInteger('min-disp', a['min-disp']) ?? 0;
  const maxGiven = nonNegativeInteger('max-disp', a['max-disp']);
  if (maxGiven !== undefined && a.ndisp !== undefined) throw new Error('--max-disp: give either --ndisp or --max-disp, not both');
  if (maxGiven === undefined && a.ndisp === undefined) throw new Error('--ndisp: give the disparity range, --ndisp N (disparities 0..N−1) or --max-disp N');
  if (a.ndisp !== undefined && (!Number.isInteger(a.ndisp) || a.ndisp <= 0 || a.ndisp >= width)) {
    throw new Error(`--ndisp: got '${a.ndisp}', expected an integer with 0 < ndisp < the image width ${width}`);
  }
  const maxDisp = maxGiven ?? (a.ndisp as number) - 1;
  if (minDisp > maxDisp) throw new Error(`--min-disp: ${minDisp} is above the largest disparity ${maxDisp}`);
  if (maxDisp >= width) throw new Error(`--max-disp: ${maxDisp} is not below the image width ${width}`);
  return { minDisp, ndisp: maxDisp - minDisp + 1 };
}

/** --ndisp / --min-disp / --max-disp as match and export-mrf declare them; without a range it is a usage error, as a missing required option is. */
export function withRangeOptions<T>(y: Argv<T>) {
  return y
    .option('ndisp', { type: 'number', describe: 'number of disparities (labels 0..ndisp−1); or give --max-disp' })
    .option('min-disp', { type: 'number', describe: 'smallest disparity: label l is disparity min-disp + l (default 0)' })
    .option('max-disp', { type: 'number', describe: 'largest disparity (instead of --ndisp)' })
    .check((a: { ndisp?: unknown; 'max-disp'?: unknown }) => {
      if (a.ndisp === undefined && a['max-disp'] === undefined) throw new Error('Missing required argument: ndisp (or give --max-disp)');
      return true;
    });
}
