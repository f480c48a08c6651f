/**
 * Passes skipped on the device once their gate holds (WebGPU).
 *
 * A compiled plan cannot branch on the host: a move that has converged
 * still runs every pass recorded after its check. Gated kernels turn those
 * passes into copies (pushRelabelKernels.ts, KernelGate), which still cost
 * a full dispatch that reads and writes every value: a gated round cost
 * 0.4–0.7 of a full one in fits of per-call device times (H200,
 * gpuMoveSolver.ts, GATED_ROUND_COST).
 *
 * WebGPU can take a dispatch's workgroup counts from a buffer
 * (dispatchWorkgroupsIndirect), and a dispatch of zero workgroups runs
 * nothing. So when a one-pass call records a plan (gpuOnePassCalls.ts), each
 * pass gated on a value that a step of the plan computes (the gate step: a
 * move's tally) is dispatched indirectly; right after the gate step, a small
 * shader of this module writes the counts: zero when the gate's condition
 * holds, the pass's own counts otherwise.
 *
 * A skipped pass writes nothing, so its output buffer keeps what an earlier
 * step left there. That is safe when every step that runs and reads such an
 * output ignores it while the gate holds, and no result of the call is one.
 * Kernels declare their part (`markKernel`):
 * - 'skippable': gated, the gate's input last; skipped when it holds.
 * - 'follower': reads a skippable pass's output and nothing that matters
 *   when it is skipped (a reduction of a check's tiles); skipped with it.
 * - 'gate-aware': takes the gate's input last and, when it holds, reads no
 *   other input (the round's last merge returns the state the round began
 *   with; the tally keeps its values).
 * Before a plan's passes are first recorded, `analyseSkips` checks those
 * rules over the plan's steps and results; a plan that breaks one is
 * recorded with every pass dispatched as before, and the refusal is counted
 * with its reason.
 *
 * Off WebGPU nothing is skipped: the gated kernels copy as before, with the
 * same results. `skippedPasses.emulate` makes every skippable kernel return
 * SKIPPED_VALUE when gated instead, so that tests on gpu.js's CPU backend
 * see what a skipped pass would leave behind, and fail if anything reads it.
 */

/** How a kernel takes part in skipping (see the module comment). */
export type SkipRole =
  | { kind: 'skippable'; /** the gate's condition in WGSL, on g: array<f32> */ condition: string }
  | { kind: 'follower' }
  | { kind: 'gate-aware' };

const roles = new WeakMap<object, SkipRole>();

/** Declares `kernel`'s part (a gpu.js kernel as createKernel returns it). */
export function markKernel(kernel: object, role: SkipRole): void {
  roles.set(kernel, role);
}

/** The part `kernel` declared, if any. */
export function roleOf(kernel: object): SkipRole | undefined {
  return roles.get(kernel);
}

/**
 * Switches and counts: whether recorded calls skip (gpuBench turns it off
 * to compare), whether gated skippable kernels compiled from now on return
 * SKIPPED_VALUE (tests), the plans analysed with and without skips, and the last
 * reason a plan was refused.
 */
export const skippedPasses = { enabled: true, emulate: false, plans: 0, refused: 0, lastRefusal: '' };

/**
 * The value a skippable kernel returns when gated under emulation, standing
 * for whatever a skipped pass leaves: 3 is a check code with both causes
 * set (a reader that compares would count it) and a wrong excess, height,
 * flow and distance for nearly every pixel (one that computes would go
 * astray). NaN would not do: comparisons with it are false, which reads as
 * "nothing to report".
 */
export const SKIPPED_VALUE = '3.0';

/** A step of a traced gpu.js plan, as the analysis reads it. */
export interface PlanStepLike {
  kernel: number;
  argBindings: ReadonlyArray<{ source: string; step?: number }>;
}

/** What analyseSkips found: per step the gate step it skips on (-1: it always runs), and per gate step its condition; or why nothing may be skipped. */
export type SkipAnalysis = { gateOf: Int32Array; conditions: Map<number, string> } | { refused: string };

/**
 * Which steps of a plan may be skipped, on which gate step, checked against
 * the rules of the module comment. `kernelRoles[k]` is the part of the
 * plan's kernel k; `results` are the steps whose outputs the call returns.
 */
export function analyseSkips(steps: readonly PlanStepLike[], kernelRoles: ReadonlyArray<SkipRole | undefined>, results: readonly number[]): SkipAnalysis {
  const n = steps.length;
  const lastRead = new Int32Array(n).fill(-1);
  steps.forEach((s, i) => s.argBindings.forEach((b) => { if (b.source === 'step') lastRead[b.step!] = Math.max(lastRead[b.step!], i); }));
  const gateOf = new Int32Array(n).fill(-1);
  const conditions = new Map<number, string>();
  const gateInput = (s: PlanStepLike): number => {
    const last = s.argBindings[s.argBindings.length - 1];
    return last !== undefined && last.source === 'step' ? last.step! : -1;
  };
  for (let i = 0; i < n; i++) {
    const role = kernelRoles[steps[i].kernel];
    if (role?.kind === 'skippable') {
      const g = gateInput(steps[i]);
      if (g < 0) continue;
      const known = conditions.get(g);
      if (known !== undefined && known !== role.condition) return { refused: `step ${i} skips on step ${g} under a second condition` };
      conditions.set(g, role.condition);
      gateOf[i] = g;
    } else if (role?.kind === 'follower') {
      // Skipped with the skippable outputs it reads, while their gate's value is still live (its buffer region is rewritten only after).
      const gates = new Set<number>();
      for (const b of steps[i].argBindings) if (b.source === 'step' && gateOf[b.step!] >= 0) gates.add(gateOf[b.step!]);
      if (gates.size === 1) {
        const [g] = gates;
        if (lastRead[g] >= i) gateOf[i] = g;
      }
    }
  }
  for (let i = 0; i < n; i++) {
    if (gateOf[i] >= 0) continue;
    const role = kernelRoles[steps[i].kernel];
    for (const b of steps[i].argBindings) {
      if (b.source !== 'step' || gateOf[b.step!] < 0) continue;
      if (role?.kind !== 'gate-aware' || gateInput(steps[i]) !== gateOf[b.step!]) {
        return { refused: `step ${i} runs and reads step ${b.step!}, which is skipped on step ${gateOf[b.step!]}` };
      }
    }
  }
  for (const r of results) if (gateOf[r] >= 0) return { refused: `the call returns step ${r}, which may be skipped` };
  for (const g of conditions.keys()) if (gateOf[g] >= 0) return { refused: `gate step ${g} is itself skipped` };
  return { gateOf, conditions };
}

/** The writer of the workgroup counts: thread k writes shape k's counts, with x = 0 when the gate's condition holds. */
export function countsWriterSource(condition: string): string {
  return `@group(0) @binding(0) var<storage, read> g: array<f32>;
@group(0) @binding(1) var<storage, read> shapes: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let k = 3u * id.x;
  if (k + 2u >= arrayLength(&shapes)) { return; }
  let skip = ${condition};
  counts[k] = select(shapes[k], 0u, skip);
  counts[k + 1u] = shapes[k + 1u];
  counts[k + 2u] = shapes[k + 2u];
}`;
}

/** GPUBufferUsage bits. */
const STORAGE = 0x80;
const INDIRECT = 0x100;
/** minStorageBufferOffsetAlignment's largest allowed value: every region starts on it. */
const REGION_ALIGN = 256;

/** The parts of a WebGPU device the skips use. */
export interface SkipDevice {
  createBuffer(d: { size: number; usage: number; mappedAtCreation?: boolean }): { getMappedRange(): ArrayBuffer; unmap(): void; destroy(): void };
  createShaderModule(d: { code: string }): unknown;
  createComputePipeline(d: { layout: 'auto'; compute: { module: unknown; entryPoint: string } }): { getBindGroupLayout(i: number): unknown };
  createBindGroup(d: { layout: unknown; entries: Array<{ binding: number; resource: { buffer: unknown; offset?: number; size?: number } }> }): unknown;
}

/** The members of gpu.js's WebGPU executor (2.24.1) that the skips read. */
export interface SkipExecutor {
  plan?: { steps: PlanStepLike[]; kernels: Array<{ shortcut: object }>; results: { entries: Array<{ binding: { source: string; step?: number } }> } };
  _planBuffers: Array<{ buffer: unknown }> | null;
  _passes: Array<{ groups: number[] }> | null;
  _device: unknown;
}

/** How a call records skips: per pass its byte offset in `counts` (-1: dispatched directly), and per step the counts writer to dispatch after it. */
export interface SkipPlan {
  counts: unknown;
  offsets: Int32Array;
  writers: Array<{ pipeline: unknown; bindGroup: unknown; groups: number } | null>;
  skippable: number;
  release(): void;
}

const plans = new WeakMap<object, SkipPlan | null>();
const writerPipelines = new WeakMap<object, Map<string, { getBindGroupLayout(i: number): unknown }>>();

/**
 * The skips of `ex`'s calls, made on its device the first time they are
 * asked for: null when skipping is off, the executor is not what this was
 * written against, the plan has no skippable pass, or analyseSkips refused.
 */
export function skipPlanFor(ex: SkipExecutor): SkipPlan | null {
  if (!skippedPasses.enabled) return null;
  const known = plans.get(ex);
  if (known !== undefined) return known;
  const made = makeSkipPlan(ex);
  plans.set(ex, made);
  return made;
}

/** Frees what skipPlanFor made for `ex` (with the executor). */
export function releaseSkipPlan(ex: object): void {
  plans.get(ex)?.release();
  plans.delete(ex);
}

function makeSkipPlan(ex: SkipExecutor): SkipPlan | null {
  const plan = ex.plan;
  const passes = ex._passes;
  const buffers = ex._planBuffers;
  if (!plan || !passes || !buffers || !Array.isArray(plan.steps) || !Array.isArray(plan.kernels) || passes.length !== plan.steps.length) return null;
  const kernelRoles = plan.kernels.map((k) => roleOf(k.shortcut));
  if (!kernelRoles.some((r) => r?.kind === 'skippable')) return null;
  const results = plan.results.entries.filter((e) => e.binding.source === 'step').map((e) => e.binding.step!);
  const analysis = analyseSkips(plan.steps, kernelRoles, results);
  skippedPasses.plans++;
  if ('refused' in analysis) {
    skippedPasses.refused++;
    skippedPasses.lastRefusal = analysis.refused;
    return null;
  }
  const { gateOf, conditions } = analysis;
  // One region of counts per buffer a gate step writes: a gate's buffer is rewritten only after its last reader, and every pass skipped on it reads it.
  const shapeIndex = new Map<string, number>();
  const shapes: number[] = [];
  for (let i = 0; i < passes.length; i++) {
    if (gateOf[i] < 0) continue;
    const key = passes[i].groups.join(',');
    if (!shapeIndex.has(key)) {
      shapeIndex.set(key, shapes.length / 3);
      shapes.push(passes[i].groups[0], passes[i].groups[1] ?? 1, passes[i].groups[2] ?? 1);
    }
  }
  if (shapes.length === 0) return null;
  const regionBytes = 4 * shapes.length;
  const stride = Math.ceil(regionBytes / REGION_ALIGN) * REGION_ALIGN;
  const regionOf = new Map<number, number>();
  for (const g of conditions.keys()) {
    const buffer = (plan.steps[g] as PlanStepLike & { outputBuffer: number }).outputBuffer;
    if (!regionOf.has(buffer)) regionOf.set(buffer, regionOf.size);
  }
  const device = ex._device as SkipDevice;
  const counts = device.createBuffer({ size: stride * regionOf.size, usage: STORAGE | INDIRECT });
  const shapeBuffer = device.createBuffer({ size: 4 * shapes.length, usage: STORAGE, mappedAtCreation: true });
  new Uint32Array(shapeBuffer.getMappedRange()).set(shapes);
  shapeBuffer.unmap();
  const offsets = new Int32Array(passes.length).fill(-1);
  const writers: SkipPlan['writers'] = new Array(passes.length).fill(null);
  let pipelines = writerPipelines.get(device);
  if (!pipelines) writerPipelines.set(device, (pipelines = new Map()));
  let skippable = 0;
  for (let i = 0; i < passes.length; i++) {
    const g = gateOf[i];
    if (g < 0) continue;
    const region = regionOf.get((plan.steps[g] as PlanStepLike & { outputBuffer: number }).outputBuffer)!;
    offsets[i] = region * stride + 12 * shapeIndex.get(passes[i].groups.join(','))!;
    skippable++;
  }
  for (const [g, condition] of conditions) {
    let pipeline = pipelines.get(condition);
    if (!pipeline) {
      pipeline = device.createComputePipeline({ layout: 'auto', compute: { module: device.createShaderModule({ code: countsWriterSource(condition) }), entryPoint: 'main' } });
      pipelines.set(condition, pipeline);
    }
    const buffer = (plan.steps[g] as PlanStepLike & { outputBuffer: number }).outputBuffer;
    const region = regionOf.get(buffer)!;
    const bindGroup = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: buffers[buffer].buffer } },
        { binding: 1, resource: { buffer: shapeBuffer } },
        { binding: 2, resource: { buffer: counts, offset: region * stride, size: regionBytes } },
      ],
    });
    writers[g] = { pipeline, bindGroup, groups: Math.ceil(shapes.length / 3 / 64) };
  }
  return {
    counts, offsets, writers, skippable,
    release: () => {
      (counts as { destroy(): void }).destroy();
      shapeBuffer.destroy();
    },
  };
}
