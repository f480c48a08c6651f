/**
 * The state layout shared by the push-relabel kernel sources on a 4-connected grid.
 *
 * The sources are generated as strings, not written as TypeScript functions,
 * because gpu.js parses a kernel's JavaScript text: compiling through tsc or
 * instrumenting for coverage would change that text under it.
 *
 * Layout (every kernel reads and writes the same [W, H, 4] state S):
 *   S[0] v(p) = e(p) − rt(p): the excess where positive, minus the residual
 *        capacity p → sink where negative   S[1] height h(p)
 *   S[2] fR(p): signed flow on p → p+1     S[3] fD(p): signed flow on p → p+W
 * and reads the constant capacities C [W, H, 4]:
 *   C[0] c(p → p+1)  C[1] c(p+1 → p)  C[2] c(p → p+W)  C[3] c(p+W → p)
 * Residuals: p → right = C0 − fR, p → left = C1(p−1) + fR(p−1),
 *            p → down = C2 − fD, p → up = C3(p−W) + fD(p−W).
 *
 * One signed plane holds both excess and sink residual because flow that
 * reaches a pixel with sink residual goes to the sink first: a push to the
 * sink never breaks the labeling (the sink's height is fixed), so it is
 * done the moment the flow arrives, and a pixel never holds excess and sink
 * residual at once. Every state pass writes four planes instead of five,
 * and the passes are bound by memory traffic.
 *
 * gpu.js threads write only their own output element and have no barriers or
 * atomics, so every step is a gather: a thread recomputes the push decisions
 * of the pixels around it (they depend only on the previous state) instead of
 * receiving them. thread.z selects which of the four fields the thread writes.
 */

export const STATE_PLANES = 4;
export const CAPACITY_PLANES = 4;
export const PLANE = { net: 0, height: 1, flowRight: 2, flowDown: 3 } as const;

/** The kernel constants as the sources name them. */
export const W = 'this.constants.W';
export const H = 'this.constants.H';
export const INF = 'this.constants.INF';
