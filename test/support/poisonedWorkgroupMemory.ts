/**
 * Workgroup memory that does not start at zero, for the block kernels'
 * routines (gpu/maxflow/blockWorkgroup.ts): the device context turns Dawn's
 * zeroing of workgroup memory off (gpu/runtime/context.ts dawnFlags), so a
 * routine must write every workgroup variable before it reads it. A
 * routine given through `withPoisonedWorkgroupMemory` starts with every one
 * of them filled with a value it would read wrongly: its results can only
 * stay right if it never relies on the variable's start.
 */

/** The values a variable of each WGSL type is filled with: a height or distance no pixel has, all bits set. */
function poisonOf(type: string): string {
  switch (type) {
    case 'f32': return '3.5';
    case 'u32': return '0xffffffffu';
    case 'vec4<f32>': return 'vec4<f32>(3.5)';
    default: throw new Error(`withPoisonedWorkgroupMemory: no poison for a workgroup variable of type ${type}`);
  }
}

/**
 * `wgsl` with the routine `name` first filling each of the WGSL's workgroup
 * variables (by one thread, before a barrier: the routine's own first line
 * then runs on filled memory). Throws when the routine's head is not found.
 */
export function withPoisonedWorkgroupMemory(wgsl: string, name: string): string {
  const fills = [...wgsl.matchAll(/^var<workgroup> (\w+) : (.+);$/gm)].map(([, v, type]) => {
    const array = /^array<(.+), (\d+)>$/.exec(type);
    if (array) return `for (var k = 0; k < ${array[2]}; k++) { ${v}[k] = ${poisonOf(array[1])}; }`;
    const atomic = /^atomic<(.+)>$/.exec(type);
    if (atomic) return `atomicStore(&${v}, ${poisonOf(atomic[1])});`;
    return `${v} = ${poisonOf(type)};`;
  });
  const head = `fn ${name}(lid : vec3<u32>, wid : vec3<u32>) {`;
  if (fills.length === 0 || wgsl.split(head).length !== 2) throw new Error(`withPoisonedWorkgroupMemory: ${name} has no workgroup variables or not one head`);
  return wgsl.replace(head, `${head}\n  if (lid.x == 0u && lid.y == 0u) { ${fills.join(' ')} }\n  workgroupBarrier();`);
}
