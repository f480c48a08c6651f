import { Input } from '../runtime/gpujs/gpuJs';
import type { GPU, IKernelRunShortcut, IPipelineRunShortcut } from 'gpu.js';
import { checkWtaWindow } from '../../costs/wta';
import { pairwise, type EnergyBreakdown, type MrfEnergy } from '../../data/energy';
import { callInPlace, liveExecutor, returnFlatResults } from '../runtime/gpujs/onePassCalls';
import { compiledExecutor, type BufferLike, type ResidentBuffers } from '../runtime/gpujs/residentCalls';
import { bindSharedLiterals } from '../runtime/gpujs/sharedLiterals';
import { MAX_GPU_EXACT_CAPACITY } from '../../graphcut/gridGraph';
import { GpuPrecisionError } from '../maxflow/pushRelabel';
import type { GpuMoveCounters } from './callLog';
import { kernelSettings, type DeviceProgram } from './deviceProgram';
import { energyChunksSource, energyTermsSource, labelCountsSource, labelRowCountsSource, wtaCostsSource, wtaPickSource, wtaRowSumsSource } from '../costs/readoutKernels';
import type { DataSourceKind, ImageCostSpec } from '../costs/costKernels';

/**
 * Entries of a WTA chunk's [W, H, NC] intermediates: 2^24 floats (64 MiB)
 * each, so the Middlebury pairs take one or two chunks and a 3000×2000 pair
 * two labels a chunk.
 */
const WTA_CHUNK_ENTRIES = 1 << 24;
/** Auxiliary pipelines a program keeps (DeviceProgram.aux): a WTA and an energy pipeline per window or chunk in use, a few windows of a parameter sweep. */
const MAX_AUX_PIPELINES = 6;

/** What the readouts read from their solver: the program whose literals they bind, and the bounds of its energy's terms. */
export interface ReadoutSource {
  gpu: GPU;
  program: DeviceProgram;
  W: number;
  H: number;
  L: number;
  /** Rows per band (MrfEnergy.bandHeight; H for one band): the WTA's boxes stay inside a pixel's band. */
  bandHeight: number;
  sourceKind: DataSourceKind;
  costSpec: ImageCostSpec | null;
  /** The largest data cost: bounds the WTA's window sums. */
  maxDataCost: number;
  /** The largest w·V(a, b): with maxDataCost, bounds the energy's partial sums. */
  maxEdgeTerm: number;
  /** Whether the program is kept after its solver (else the WTA's chunk buffers are freed at once). */
  kept: boolean;
  counters: GpuMoveCounters;
}

/**
 * What the device computes for the driver besides the moves, from the same
 * data the moves read: the WTA initial labeling and the energy of a
 * labeling. Their pipelines live in the program (DeviceProgram.aux) and
 * bind its constant inputs; calls in flight are tracked so that the program
 * is kept or released only after them.
 */
export class DeviceReadouts {
  /** Calls of auxiliary pipelines not yet settled. */
  private readonly calls = new Set<Promise<unknown>>();
  /** The labels as f32 for energy(), kept between its calls (a call copies them when it is made); undefined while a call is being made. */
  private energyLabels?: Float32Array;

  constructor(private readonly s: ReadoutSource) {}

  /** The auxiliary calls in flight. */
  inFlight(): Promise<unknown>[] {
    return [...this.calls];
  }

  /**
   * The WTA labeling of costs/wta.ts (box sums over window × window clipped
   * at the borders, a banded energy's at its bands' borders too, ties to the smaller label), computed on the device from
   * the data the moves read (the volume or the images) in one pipeline
   * call that reads back only the labels. Labels go in chunks of at most
   * `chunkEntries` / (W·H), so the intermediates stay small on a
   * 3000×2000 pair. Undefined when a window sum could reach 2^24, where
   * f32 stops being exact (the host's WTA sums in doubles).
   */
  async wta(window: number, chunkEntries = WTA_CHUNK_ENTRIES): Promise<Uint16Array | undefined> {
    checkWtaWindow(window, 'WTA');
    if (!Number.isInteger(chunkEntries) || chunkEntries < 1) throw new Error(`gpu expansion: WTA chunk of ${String(chunkEntries)} entries`);
    if (window * window * this.s.maxDataCost >= MAX_GPU_EXACT_CAPACITY) return undefined;
    const { W, H, L, gpu } = this.s;
    const n = W * H;
    const NC = Math.max(1, Math.min(L, Math.floor(chunkEntries / n)));
    const chunks = Math.ceil(L / NC);
    const key = `wta ${window} ${NC}`;
    const pipe = this.auxPipeline(key, () => {
      const constants = { W, H, L, NC, WIN: window, R: (window - 1) / 2, BH: this.s.bandHeight };
      const costs = gpu.createKernel(wtaCostsSource(this.s.sourceKind, this.s.costSpec), kernelSettings([W, H, NC], constants));
      const rows = gpu.createKernel(wtaRowSumsSource(), kernelSettings([W, H, NC], constants));
      // The chunk's place decides the pick's inputs and output: the first has no best so far, the last returns only the labels.
      const pick = (first: boolean, last: boolean): IKernelRunShortcut => gpu.createKernel(wtaPickSource(first, last), kernelSettings(last ? [W, H] : [W, H, 2], constants));
      const pickOnly = chunks === 1 ? pick(true, true) : undefined;
      const pickFirst = chunks > 1 ? pick(true, false) : undefined;
      const pickMiddle = chunks > 2 ? pick(false, false) : undefined;
      const pickLast = chunks > 1 ? pick(false, true) : undefined;
      const literals = this.s.program.literals;
      const data = literals[0];
      const wta = gpu.createPipeline(function () {
        bindSharedLiterals(literals);
        let best: unknown = null;
        for (let c = 0; c < chunks; c++) {
          const RS = rows(costs(data, c * NC));
          if (chunks === 1) best = pickOnly!(RS, 0);
          else if (c === 0) best = pickFirst!(RS, 0);
          else best = (c === chunks - 1 ? pickLast! : pickMiddle!)(RS, best, c * NC);
        }
        return best;
      });
      returnFlatResults(wta);
      return wta;
    });
    try {
      const labels = new Uint16Array(n);
      readLabels((await this.auxCall(pipe())) as ArrayLike<ArrayLike<number>>, labels, W, H);
      return labels;
    } finally {
      // A program that is not kept (above 2^20 pixels, webasm) frees the chunk buffers at once: 64 MiB each at 3000×2000, not needed by the moves.
      if (!this.s.kept) await this.dropAuxPipeline(key);
    }
  }

  /**
   * The program's auxiliary pipeline under `key` (DeviceProgram.aux), made
   * by `make` when it has none; most recently used last.
   */
  private auxPipeline(key: string, make: () => IPipelineRunShortcut): IPipelineRunShortcut {
    const aux = this.s.program.aux;
    let pipe = aux.get(key);
    if (pipe) aux.delete(key);
    else {
      pipe = make();
      this.s.counters.auxPipelines++;
    }
    aux.set(key, pipe);
    while (aux.size > MAX_AUX_PIPELINES) {
      const [oldest] = aux.keys();
      void this.dropAuxPipeline(oldest);
    }
    return pipe;
  }

  /** Removes the auxiliary pipeline under `key` and destroys it (after its call in flight). */
  private async dropAuxPipeline(key: string): Promise<void> {
    const pipe = this.s.program.aux.get(key);
    if (!pipe) return;
    this.s.program.aux.delete(key);
    await pipe.destroy();
  }

  /** A call of an auxiliary pipeline, tracked until it settles (see inFlight). */
  private auxCall<T>(call: Promise<T>): Promise<T> {
    this.calls.add(call);
    const settled = (): void => { this.calls.delete(call); };
    call.then(settled, settled);
    return call;
  }

  /** Energy of a labeling reduced on the device in exact partial sums (the energy has no volume on the host). */
  async energy(labels: Uint16Array): Promise<EnergyBreakdown> {
    const { W, H } = this.s;
    const { CH, pipe } = this.energyPipeline();
    // An overlapping call (the first compiles before it copies its argument) takes an array of its own.
    const labelsF = this.energyLabels?.length === labels.length ? this.energyLabels : new Float32Array(labels.length);
    this.energyLabels = undefined;
    labelsF.set(labels);
    let partials: unknown;
    try {
      // In place where the pipeline is compiled: gpu.js's own call would copy the labels into a fresh array first.
      [partials] = (await this.auxCall(callInPlace(pipe as unknown as (...a: unknown[]) => Promise<unknown>, [new Input(labelsF as unknown as number[], [W, H])]))) as unknown[];
    } finally {
      this.energyLabels = labelsF;
    }
    const chunks = Math.ceil(W / CH);
    if (ArrayBuffer.isView(partials)) return energyOfPartials(partials as Float32Array, H, chunks);
    // gpu.js's own results (backends without one-pass calls): planes of rows.
    const planes = partials as ArrayLike<ArrayLike<ArrayLike<number>>>;
    const flat = new Float64Array(2 * H * chunks);
    for (let z = 0, i = 0; z < 2; z++) for (let y = 0; y < H; y++) for (let c = 0; c < chunks; c++, i++) flat[i] = planes[z][y][c];
    return energyOfPartials(flat, H, chunks);
  }

  /**
   * What a cycle's driver needs of the labels a cycle ended with, computed
   * where they are (a buffer `labels` of `residency`'s device, [W, H]
   * f32), in one call that reads back only a few numbers: their energy,
   * the same partial sums energy() adds, and the pixels of each label.
   * Null when gpu.js gave the pipeline no one-pass executor (the caller
   * then reads the labels and asks energy()).
   */
  async cycleEnd(labels: BufferLike, residency: ResidentBuffers): Promise<{ energy: EnergyBreakdown; labelCounts: Float64Array } | null> {
    const { W, H, L } = this.s;
    const { CH, pipe } = this.energyPipeline();
    // Shaped arguments only for a compile (the energy of the initial labels has compiled it in most runs).
    const ex = liveExecutor(pipe) ?? await compiledExecutor(pipe, [new Input(new Float32Array(W * H) as unknown as number[], [W, H])]);
    if (!ex) return null;
    const results = await this.auxCall(residency.submit(ex, { hostArgs: [], deviceArgs: [[0, labels]], keep: [], read: [0, 1] }));
    try {
      const [partials, counts] = results.views;
      if (counts.length !== L) throw new Error(`gpu expansion: the cycle's label counts have ${counts.length} entries, the energy ${L} labels`);
      return { energy: energyOfPartials(partials, H, Math.ceil(W / CH)), labelCounts: Float64Array.from(counts) };
    } finally {
      results.release();
    }
  }

  /**
   * The energy's pipeline and CH, its columns per partial sum. Its results:
   * the partial sums, [ceil(W / CH), H, 2], and the pixels of each label,
   * [L] (flat on a one-pass executor, as the resident submit reads them).
   * One pipeline for energy() and cycleEnd(): a fresh process compiles it
   * once.
   */
  private energyPipeline(): { CH: number; pipe: IPipelineRunShortcut } {
    const { W, H, L, gpu } = this.s;
    // Columns per partial sum: a sum of CH terms of at most maxTerm each stays below 2^24, so it is exact in f32.
    const maxTerm = Math.max(1, this.s.maxDataCost, 2 * this.s.maxEdgeTerm);
    const CH = Math.max(1, Math.min(W, Math.floor(MAX_GPU_EXACT_CAPACITY / maxTerm)));
    const pipe = this.auxPipeline(`energy ${CH}`, () => {
      const chunks = Math.ceil(W / CH);
      const constants = { W, H, INF: W * H + 1, L, CH };
      const terms = gpu.createKernel(energyTermsSource(this.s.sourceKind, this.s.costSpec), kernelSettings([W, H, 2], constants));
      const sums = gpu.createKernel(energyChunksSource(), kernelSettings([chunks, H, 2], constants));
      const rowCounts = gpu.createKernel(labelRowCountsSource(), kernelSettings([L, H], constants));
      const counts = gpu.createKernel(labelCountsSource(), kernelSettings([L], constants));
      const literals = this.s.program.literals;
      const [data, wt, vt] = literals;
      const energyPipe = gpu.createPipeline(function (LB: unknown) {
        bindSharedLiterals(literals);
        return [sums(terms(LB, data, wt, vt)), counts(rowCounts(LB))];
      });
      returnFlatResults(energyPipe);
      return energyPipe;
    });
    return { CH, pipe };
  }
}

/** The energy from the energy pipeline's partial sums, flat: plane 0 the data term, plane 1 the smoothness, each H rows of `chunks` sums (all integers below 2^24), added in double precision. */
function energyOfPartials(partials: ArrayLike<number>, H: number, chunks: number): EnergyBreakdown {
  let data = 0;
  let smooth = 0;
  const plane = H * chunks;
  for (let i = 0; i < plane; i++) {
    data += partials[i];
    smooth += partials[plane + i];
  }
  return { data, smoothness: smooth, total: data + smooth };
}

/** A [W, H] labels result into `labels`: flat on the fused executors (returnFlatResults), rows where gpu.js shapes them; f32 → uint16 is exact for labels. */
export function readLabels(out: ArrayLike<ArrayLike<number>>, labels: Uint16Array, W: number, H: number): void {
  if (ArrayBuffer.isView(out)) {
    labels.set(out as unknown as Float32Array);
    return;
  }
  for (let y = 0, p = 0; y < H; y++) {
    const row = out[y];
    for (let x = 0; x < W; x++, p++) labels[p] = row[x];
  }
}

/** The largest of the first n values (0 when none is larger): a plain loop, which a fresh process runs faster than Math.max over three arguments. */
function largest(values: ArrayLike<number>, n: number): number {
  let m = 0;
  for (let i = 0; i < n; i++) if (values[i] > m) m = values[i];
  return m;
}

/** The largest terms of an energy the device moves accept: they bound the flows, the WTA's window sums and the energy's partial sums. */
export interface TermBounds {
  /** The largest data cost (the volume's largest entry, or the images' τ·scale). */
  maxDataCost: number;
  /** The largest w·V(a, b) of a smoothness term (w bounded by the larger of a pair's two weight values when the energy has a pair: PairSource). */
  maxEdgeTerm: number;
}

/**
 * The bounds of `energy`'s terms, after refusing (GpuPrecisionError) an
 * energy whose graphs could hold a value that f32 does not represent
 * exactly: heights up to W·H + 1, raw image costs, and the excess and
 * capacities a move's graph can reach.
 */
export function exactTermBounds(energy: MrfEnergy, spec: ImageCostSpec | null): TermBounds {
  const source = energy.data;
  const n = energy.width * energy.height;
  if (n + 2 > MAX_GPU_EXACT_CAPACITY) throw new GpuPrecisionError(`grid has ${n} pixels; heights up to ${n + 1} exceed 2^24`);
  let maxD = 0;
  if (source.kind === 'volume') {
    const D = source.costs;
    for (let i = 0; i < D.length; i++) if (D[i] > maxD) maxD = D[i];
  } else if (spec) {
    maxD = spec.maxCost;
    // Census: 16 bits per channel (a 16-bit half of a code word); the others: 8-bit samples, gradients differ by up to 510.
    const rawMax = (spec.kind === 'census' ? 16 : spec.kind === 'sad' ? 255 : spec.kind === 'ssd' ? 255 * 255 : 1275) * spec.channels;
    if (rawMax * spec.scale > MAX_GPU_EXACT_CAPACITY) throw new GpuPrecisionError(`raw costs up to ${rawMax}·${spec.scale} exceed 2^24`);
  }
  // With a pair the device makes the weights, and the host never reads them: its two values bound them.
  const pair = energy.pairSource;
  const maxW = pair ? Math.max(pair.plain, pair.cued) : Math.max(largest(energy.wH, n), largest(energy.wV, n));
  // V(a, b) depends on |a − b| alone (data/energy.ts pairwise): its largest value is over the L distances from label 0.
  let maxV = 0;
  for (let d = 0; d < energy.labels; d++) maxV = Math.max(maxV, pairwise(energy.smoothness, energy.truncation, 0, d));
  // Unary: |D(α) − D(l)| plus two terms of at most w·V per incident edge; excess can also receive 4 edge capacities of at most 2·w·V.
  const bound = maxD + 16 * maxW * maxV;
  if (bound > MAX_GPU_EXACT_CAPACITY) throw new GpuPrecisionError(`excess and capacities can reach ${bound}, above the f32-exact bound 2^24`);
  return { maxDataCost: maxD, maxEdgeTerm: maxW * maxV };
}
