import { gpuJsInternal } from '../../gpu/runtime/gpujs/internals';
/**
 * gpu.js's cpu backend with every read of a kernel's arrays checked: what
 * lets the WebGPU device run without Dawn's bounds checks
 * (gpu/runtime/context.ts, dawnFlags).
 *
 * On WebGPU a kernel reads an argument or constant array through a flat
 * index, x + W·(y + H·z), with no check of its own; without robustness an
 * index outside the buffer is undefined behaviour. The cpu backend compiles
 * the same kernel source to JavaScript that reads the same elements: an
 * Input through the same flat index, a kernel result through its rows, so
 * a read outside it, or outside its row, is `undefined` (or a TypeError for
 * a missing row or plane). Installed, the checks make such a read throw,
 * naming the kernel's expression.
 *
 * JavaScript evaluates only the taken side of `c ? a : b`, but gpu.js
 * lowers it to WGSL's select(), which evaluates both: a read there would be
 * made on the device even where the cpu backend skips it. So an array read
 * inside either side of a conditional expression is refused when the
 * kernel is built. (`&&` and `||` short-circuit in both languages.)
 */
type Emit = (this: FunctionNodeLike, ast: AstNode, retArr: string[]) => string[];
interface AstNode { type: string; computed?: boolean; test: AstNode; consequent: AstNode; alternate: AstNode }
interface FunctionNodeLike { astGeneric(ast: AstNode, retArr: string[]): string[]; name?: string }
interface NodePrototype { astMemberExpression: Emit; astConditionalExpression: Emit }

const { CPUFunctionNode } = gpuJsInternal<{ CPUFunctionNode: { prototype: NodePrototype } }>('cpu/function-node');

/** What the checks saw since they were installed. */
export interface ReadChecks {
  /** Reads checked at run time. */
  reads: number;
  /** Array reads compiled with a check, over all kernels built. */
  sites: number;
  /** Removes the checks (kernels built since keep theirs). */
  restore(): void;
}

const READ_CHECK = '__stereocutCheckedRead';

/**
 * Installs the checks on gpu.js's cpu function node: kernels built from
 * now on throw on a read outside an array, and a kernel with an array read
 * inside a conditional expression fails to build.
 */
export function installReadChecks(): ReadChecks {
  const proto = CPUFunctionNode.prototype;
  const member = proto.astMemberExpression;
  const conditional = proto.astConditionalExpression;
  let branches = 0;
  const checks: ReadChecks = {
    reads: 0,
    sites: 0,
    restore() {
      proto.astMemberExpression = member;
      proto.astConditionalExpression = conditional;
      delete (globalThis as Record<string, unknown>)[READ_CHECK];
    },
  };
  (globalThis as Record<string, unknown>)[READ_CHECK] = (value: unknown, site: string): unknown => {
    if (typeof value !== 'number') throw new RangeError(`kernel read outside its array: ${site}`);
    checks.reads++;
    return value;
  };
  proto.astConditionalExpression = function (ast, retArr) {
    // The base node's output, with the two sides marked as branches (the test is evaluated either way).
    retArr.push('(');
    this.astGeneric(ast.test, retArr);
    retArr.push('?');
    branches++;
    try {
      this.astGeneric(ast.consequent, retArr);
      retArr.push(':');
      this.astGeneric(ast.alternate, retArr);
    } finally {
      branches--;
    }
    retArr.push(')');
    return retArr;
  };
  proto.astMemberExpression = function (ast, retArr) {
    const out = member.call(this, ast, []);
    const text = out.join('');
    if (!ast.computed || !/^(user|constants)_\w+\[/.test(text)) {
      retArr.push(...out);
      return retArr;
    }
    if (branches > 0) throw new Error(`kernel ${this.name ?? '?'}: array read inside a conditional expression (WGSL's select reads both sides): ${text}`);
    checks.sites++;
    retArr.push(`${READ_CHECK}(${text}, ${JSON.stringify(text)})`);
    return retArr;
  };
  return checks;
}
