/**
 * The data term D_p(d) as gpu.js kernel statements: read from the uploaded
 * volume, or recomputed from the images data term (intensities, gradients,
 * or census codes as 16-bit halves) exactly as costs/dataCost.ts computes it
 * on the host. Every move kernel and the device WTA take their costs from
 * here, so the host and the device cannot disagree on a cost kind.
 *
 *   DV [L, W, H]     data costs, DV[y][x][l]          (volume source)
 *   IM [W·C, H, 6]   left, right, ∂x left, ∂y left, ∂x right, ∂y right,
 *                    8-bit samples, channels interleaved  (image source);
 *                    for census costs planes 0 and 1 hold the left and right
 *                    census codes as C 16-bit halves per pixel, least
 *                    significant first (f32 holds 16-bit integers exactly),
 *                    computed on the device from the grey images
 *                    (censusKernel.ts)
 * Every value is an integer below 2^24, so f32 arithmetic on them is exact.
 */
import type { CostSpec } from '../../data/energy';
import { validateCensusWindow, type CensusWindow } from '../../costs/census';
import { censusHalves } from './censusKernel';

/** How the data term D_p(d) reaches the kernels. */
export type DataSourceKind = 'volume' | 'images';

/** What the image-source kernels need to recompute DataCostMatcher's costs. */
export interface ImageCostSpec {
  kind: 'sad' | 'ssd' | 'sad+sgrad' | 'census';
  /** Samples per pixel in IM: image channels, or 16-bit code halves for census. */
  channels: number;
  scale: number;
  maxCost: number;
  border: 'tau' | 'clamp';
  /** Disparity of label 0 (label l compares x with x − minDisp − l). Default 0. */
  minDisp?: number;
  /** Census only: the window the device computes the codes over (censusKernel.ts; channels = 2·censusWords). */
  censusWindow?: CensusWindow;
}

const IMAGE_COST_KINDS: readonly string[] = ['sad', 'ssd', 'sad+sgrad', 'census'];

/** An images data term's spec as the kernels read it; throws for a cost kind or border rule the kernels do not compute. */
export function imageCostSpec(spec: CostSpec): ImageCostSpec {
  const { kind, channels, scale, maxCost } = spec;
  const border = (spec as { border?: unknown }).border;
  if (!IMAGE_COST_KINDS.includes(kind)) throw new Error(`gpu expansion: the device does not compute '${kind}' costs`);
  if (border !== 'tau' && border !== 'clamp') throw new Error(`gpu expansion: unknown border rule '${String(border)}'`);
  const minDisp = (spec as { minDisp?: unknown }).minDisp ?? 0;
  if (typeof minDisp !== 'number' || !Number.isInteger(minDisp) || minDisp < 0) throw new Error(`gpu expansion: label offset must be an integer ≥ 0 (got ${String(minDisp)})`);
  if (kind !== 'census') return { kind: kind as ImageCostSpec['kind'], channels, scale, maxCost, border, minDisp };
  const censusWindow = validateCensusWindow((spec as { censusWindow?: CensusWindow }).censusWindow as CensusWindow);
  if (channels !== censusHalves(censusWindow)) throw new Error(`gpu expansion: census ${censusWindow.width}x${censusWindow.height} codes have ${censusHalves(censusWindow)} halves per pixel, the spec says ${channels}`);
  return { kind, channels, scale, maxCost, border, minDisp, censusWindow };
}

/**
 * Statements that set `target` to D at pixel (X, Y) for disparity/label `d`.
 * The image form mirrors DataCostMatcher.costRow: x − d < 0 gets τ·scale
 * ('tau') or the comparison against right column 0 ('clamp').
 */
export function dataCost(source: DataSourceKind, spec: ImageCostSpec | null, target: string, X: string, Y: string, d: string): string {
  if (source === 'volume') return `let ${target} = DV[${Y}][${X}][${d}];`;
  if (!spec) throw new Error('gpu expansion: image data source without a cost spec');
  const C = spec.channels;
  const v = `${target}_`;
  const offset = spec.minDisp ? ` - ${spec.minDisp.toFixed(1)}` : '';
  const lines: string[] = [`let ${target} = 0.0;`, `let ${v}xr = ${X} - ${d}${offset};`, `let ${v}ok = 1.0;`];
  if (spec.border === 'tau') lines.push(`if (${v}xr < 0.0) { ${v}ok = 0.0; ${target} = ${spec.maxCost.toFixed(1)}; }`);
  else lines.push(`if (${v}xr < 0.0) { ${v}xr = 0.0; }`);
  lines.push(`if (${v}ok > 0.0) {`, `  let ${v}raw = 0.0;`);
  if (spec.kind === 'census') {
    // Hamming distance bit by bit in f32 arithmetic (no integer bit operations on every device): b = h − 2·floor(h / 2).
    for (let c = 0; c < C; c++) {
      lines.push(
        `  let ${v}a${c} = IM[0][${Y}][${X} * ${C}.0 + ${c}.0];`,
        `  let ${v}b${c} = IM[1][${Y}][${v}xr * ${C}.0 + ${c}.0];`,
        `  for (let ${v}i${c} = 0; ${v}i${c} < 16; ${v}i${c}++) {`,
        `    const ${v}ha${c} = Math.floor(${v}a${c} / 2.0);`,
        `    const ${v}hb${c} = Math.floor(${v}b${c} / 2.0);`,
        `    ${v}raw = ${v}raw + Math.abs((${v}a${c} - 2.0 * ${v}ha${c}) - (${v}b${c} - 2.0 * ${v}hb${c}));`,
        `    ${v}a${c} = ${v}ha${c};`,
        `    ${v}b${c} = ${v}hb${c};`,
        '  }',
      );
    }
    lines.push(`  ${target} = Math.min(${v}raw * ${spec.scale.toFixed(1)}, ${spec.maxCost.toFixed(1)});`, '}');
    return lines.join('\n    ');
  }
  for (let c = 0; c < C; c++) {
    const il = `${X} * ${C}.0 + ${c}.0`;
    const ir = `${v}xr * ${C}.0 + ${c}.0`;
    lines.push(`  let ${v}a${c} = IM[0][${Y}][${il}] - IM[1][${Y}][${ir}];`);
    if (spec.kind === 'ssd') lines.push(`  ${v}raw = ${v}raw + ${v}a${c} * ${v}a${c};`);
    else lines.push(`  ${v}raw = ${v}raw + Math.abs(${v}a${c});`);
    if (spec.kind === 'sad+sgrad') {
      lines.push(`  ${v}raw = ${v}raw + Math.abs(IM[2][${Y}][${il}] - IM[4][${Y}][${ir}]) + Math.abs(IM[3][${Y}][${il}] - IM[5][${Y}][${ir}]);`);
    }
  }
  lines.push(`  ${target} = Math.min(${v}raw * ${spec.scale.toFixed(1)}, ${spec.maxCost.toFixed(1)});`, '}');
  return lines.join('\n    ');
}

export function dataArg(source: DataSourceKind): string {
  return source === 'volume' ? 'DV' : 'IM';
}
