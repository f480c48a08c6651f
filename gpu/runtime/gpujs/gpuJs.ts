import { leaveOutWebGlBackends } from './internals';

/**
 * gpu.js's classes as the project's code takes them: every value import of
 * gpu.js goes through this module (types may come from 'gpu.js' itself),
 * which loads gpu.js without its WebGL backends. Those never run in Node,
 * but gpu.js's entry loads them all, a good part of its loading time in a
 * fresh process (internals.ts, leaveOutWebGlBackends).
 */
leaveOutWebGlBackends();

// eslint-disable-next-line @typescript-eslint/no-require-imports
const gpuJs = require('gpu.js') as typeof import('gpu.js');

export const GPU = gpuJs.GPU;
export type GPU = import('gpu.js').GPU;
export const Input = gpuJs.Input;
export type Input = import('gpu.js').Input;
/** A kernel output kept on the device (WebGPU), which a kernel also takes as an array argument without copying it. */
export const WebGPUBufferResult = (gpuJs as unknown as { WebGPUBufferResult: new (settings: { buffer: object; output: number[]; context: unknown; kernel: unknown }) => object }).WebGPUBufferResult;
