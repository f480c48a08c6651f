/**
 * Gated passes that write nothing once their gate holds (WebGPU).
 *
 * A compiled plan cannot branch on the host: a move that has converged
 * still runs every pass recorded after its check. Gated kernels make those
 * passes cheap (pushRelabelKernels.ts, KernelGate), but a gated pass that
 * copies its input still reads and writes every value: a gated round cost
 * 0.4–0.7 of a full one in fits of per-call device times (H200,
 * gpuMoveSolver.ts, GATED_ROUND_COST).
 *
 * Nothing needs those copies when no pass that does work reads them. The
 * solver's rounds are built so: each round's last merge returns, when
 * gated, the state the round began with (carried to it), and the tally
 * ignores its check once gated. So a gated pass may return at once,
 * writing nothing, and leave in its output buffer whatever was there. Its
 * kernel returns the marker WRITE_FREE_VALUE when gated, and on WebGPU the
 * write of that marker is removed from the kernel's WGSL (the gated threads
 * only read the gate). (Skipping the passes outright with indirect
 * dispatches of zero workgroups was tried first: Dawn validates every
 * indirect dispatch with a dispatch and bind group of its own, and whole
 * runs took 6–8 times as long on the H200, at the same energies.)
 *
 * Safety rests on which outputs are read, so kernels declare their part
 * (`markKernel`):
 * - 'write-free': gated, the gate's input last; its output is leftovers
 *   when the gate holds.
 * - 'follower': computes from a write-free output (a reduction of a
 *   check's tiles); its output is leftovers with it.
 * - 'gate-aware': takes the gate's input last and, when it holds, reads no
 *   other input (the round's merge returns what it carries; the tally keeps
 *   its values).
 * `analyseGates` checks a traced plan: every pass that reads leftovers must
 * be gate-aware on the same gate, and no result and no gate may be
 * leftovers. Installed (`installWriteFreeGates`), every gpu.js plan is
 * checked when it is traced, on every backend, and one that breaks a rule
 * throws, naming the step, instead of computing with leftovers.
 *
 * On the other backends the marker is written: a gated pass's output is a
 * plane of 12345678 where the copy was. That makes every test on gpu.js's
 * CPU backend a test of the rule too: 12345678 is a check code with a cause
 * set (a reader that compares would count it) and an impossible excess,
 * height, flow and distance (one that computes would go astray).
 */
import { isWrappedGpuJsRelease } from './gpuJsRelease';

/** How a kernel takes part (see the module comment). */
export type GateRole = { kind: 'write-free' } | { kind: 'follower' } | { kind: 'gate-aware' };

const roles = new WeakMap<object, GateRole>();

/** Declares `kernel`'s part (a gpu.js kernel as createKernel returns it). */
export function markKernel(kernel: object, role: GateRole): void {
  roles.set(kernel, role);
}

/** The part `kernel` declared, if any. */
export function roleOf(kernel: object): GateRole | undefined {
  return roles.get(kernel);
}

/**
 * What a write-free kernel returns when gated: a marker the WGSL rewrite
 * finds, and on the other backends a value no reader could take for real
 * (f32-exact, above any height or check code a grid of fewer than 2^24
 * pixels has).
 */
export const WRITE_FREE_VALUE = '12345678.0';

/** gpu.js's WGSL for a root kernel's `return WRITE_FREE_VALUE;` (web-gpu/function-node.js, astReturnStatement). */
const MARKER_WRITE = `result[data_index] = ${WRITE_FREE_VALUE};return;`;

/**
 * Switches and counts: whether WGSL built from now on drops the marker's
 * write (gpuBench turns it off to compare), whether the rewrite and the
 * plan check are installed, the writes dropped, and the plans checked.
 */
export const writeFreeGates = { enabled: true, installed: false, rewrites: 0, plansChecked: 0 };

/** A step of a traced gpu.js plan, as the check reads it. */
export interface PlanStepLike {
  kernel: number;
  argBindings: ReadonlyArray<{ source: string; step?: number; index?: number }>;
}

/** What analyseGates found: per step the gate (a key) under which its output is leftovers, or ''; or the first rule broken. */
export type GateAnalysis = { leftoversOn: string[] } | { refused: string };

/** A gate's key: the step or pipeline argument a kernel's last argument comes from. */
function gateKey(s: PlanStepLike, i: number): string {
  const last = s.argBindings[s.argBindings.length - 1];
  if (last?.source === 'step') return `step ${last.step!}`;
  if (last?.source === 'pipelineArg') return `argument ${last.index!}`;
  // A literal gate is its step's own: nothing else can share it.
  return `a literal of step ${i}`;
}

/**
 * Checks the rules of the module comment over a traced plan:
 * `kernelRoles[k]` is the part of the plan's kernel k, `results` the steps
 * whose outputs the plan returns.
 */
export function analyseGates(steps: readonly PlanStepLike[], kernelRoles: ReadonlyArray<GateRole | undefined>, results: readonly number[]): GateAnalysis {
  const leftoversOn: string[] = new Array(steps.length).fill('');
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    const role = kernelRoles[s.kernel];
    const read = s.argBindings.filter((b) => b.source === 'step' && leftoversOn[b.step!] !== '').map((b) => b.step!);
    if (role?.kind === 'write-free') {
      leftoversOn[i] = gateKey(s, i);
      if (s.argBindings[s.argBindings.length - 1]?.source === 'step' && read.includes(s.argBindings[s.argBindings.length - 1].step!)) {
        return { refused: `step ${i} is gated on leftovers (step ${s.argBindings[s.argBindings.length - 1].step!})` };
      }
    }
    if (read.length === 0) continue;
    const gates = new Set(read.map((p) => leftoversOn[p]));
    if (role?.kind === 'write-free' && [...gates].every((g) => g === leftoversOn[i])) continue;
    if (role?.kind === 'follower' && gates.size === 1) {
      leftoversOn[i] = [...gates][0];
      continue;
    }
    if (role?.kind === 'gate-aware' && gates.size === 1 && gates.has(gateKey(s, i))) {
      // Its gate is read as it is; a gate that is leftovers is refused below.
      const gate = s.argBindings[s.argBindings.length - 1];
      if (!(gate.source === 'step' && leftoversOn[gate.step!] !== '')) continue;
    }
    return { refused: `step ${i} reads step ${read[0]}, whose output is leftovers while ${leftoversOn[read[0]]} holds` };
  }
  for (const r of results) if (leftoversOn[r] !== '') return { refused: `the plan returns step ${r}, whose output is leftovers while ${leftoversOn[r]} holds` };
  return { leftoversOn };
}

/** The traced plan of a gpu.js pipeline (pipeline.js, _buildPlan), as the check reads it. */
interface TracedPlan {
  steps: PlanStepLike[];
  kernels: Array<{ shortcut: object }>;
  results: { entries: Array<{ binding: { source: string; step?: number } }> };
}

/** Throws when `plan` breaks a rule; plans without write-free kernels pass unread. */
export function checkTracedPlan(plan: TracedPlan): void {
  const kernelRoles = plan.kernels.map((k) => roleOf(k.shortcut));
  if (!kernelRoles.some((r) => r?.kind === 'write-free')) return;
  writeFreeGates.plansChecked++;
  const results = plan.results.entries.filter((e) => e.binding.source === 'step').map((e) => e.binding.step!);
  const a = analyseGates(plan.steps, kernelRoles, results);
  if ('refused' in a) throw new Error(`gpu pipeline: ${a.refused}; a gated pass writes nothing once its gate holds, so only a gate-aware kernel on the same gate may read it (graphcut/gpuWriteFreeGates.ts)`);
}

/** `wgsl` with the marker's writes dropped (the gated threads return without writing). */
export function withoutMarkerWrites(wgsl: string): string {
  const parts = wgsl.split(MARKER_WRITE);
  writeFreeGates.rewrites += parts.length - 1;
  return parts.join('return;');
}

/**
 * Checks every gpu.js plan when it is traced, and drops the marker's writes
 * from the WGSL of WebGPU kernels built from now on while enabled
 * (idempotent). Returns false, changing nothing, when gpu.js is not the
 * version this was written for or lacks a member it wraps.
 */
export function installWriteFreeGates(): boolean {
  if (writeFreeGates.installed) return true;
  let kernelProto: { assembleWGSL(): string };
  let pipelineProto: { _buildPlan(): TracedPlan };
  try {
    kernelProto = (require('gpu.js/src/backend/web-gpu/kernel.js') as { WebGPUKernel: { prototype: { assembleWGSL(): string } } }).WebGPUKernel.prototype;
    pipelineProto = (require('gpu.js/src/pipeline.js') as { Pipeline: { prototype: { _buildPlan(): TracedPlan } } }).Pipeline.prototype;
  } catch {
    return false;
  }
  if (!isWrappedGpuJsRelease() || typeof kernelProto.assembleWGSL !== 'function' || typeof pipelineProto._buildPlan !== 'function') return false;
  const assemble = kernelProto.assembleWGSL;
  kernelProto.assembleWGSL = function (this: object) {
    const wgsl = assemble.call(this);
    return writeFreeGates.enabled ? withoutMarkerWrites(wgsl) : wgsl;
  };
  const buildPlan = pipelineProto._buildPlan;
  pipelineProto._buildPlan = function (this: object) {
    const plan = buildPlan.call(this);
    checkTracedPlan(plan);
    return plan;
  };
  writeFreeGates.installed = true;
  return true;
}
