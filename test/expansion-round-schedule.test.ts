/**
 * The round schedule of the device moves (gpu/move/roundSchedule.ts), with
 * no device: its choice against a brute-force evaluation of the cost model
 * over every round choice, and the state it keeps between calls.
 */
import { seededRandom } from '../data/random';
import {
  ADAPT_WINDOW, CALL_COST_IN_ROUNDS, FLOWS_COST_IN_ROUNDS, GATED_ROUND_COST, MAX_ROUNDS, ROUND_CHOICES, RoundSchedule, type RoundScheduleOptions,
} from '../gpu/move/roundSchedule';

const base: RoundScheduleOptions = {
  initialRounds: 4, bfsPasses: 16, maxBfsPasses: 1000, fixedRounds: false, gate: true, flowsInOut: true, resume: true,
  planCompileRounds: 10, planCompileRoundsPerRound: 2.5,
};

/** The model's cost of serving `needs` with R-round plans: calls until each move's need is covered (continued, or redone with doubled rounds). */
function costOf(o: RoundScheduleOptions, needs: readonly number[], R: number, resume: boolean, compiled: boolean): number {
  const perCall = CALL_COST_IN_ROUNDS + (o.flowsInOut ? FLOWS_COST_IN_ROUNDS : 0);
  const overshoot = o.gate ? GATED_ROUND_COST : 1;
  let cost = compiled ? 0 : o.planCompileRounds + o.planCompileRoundsPerRound * R;
  for (const need of needs) {
    let done = 0;
    let r = R;
    for (;;) {
      const left = resume ? need - done : need;
      cost += Math.min(r, Math.max(left, 0)) + overshoot * Math.max(r - Math.max(left, 0), 0) + perCall;
      if (r >= left || (!resume && r === MAX_ROUNDS)) break;
      if (resume) done += r;
      r = Math.min(2 * r, MAX_ROUNDS);
    }
  }
  return cost;
}

describe('round schedule', () => {
  test('round choices are 1, then powers of two and their halfway points up to MAX_ROUNDS', () => {
    expect(ROUND_CHOICES.slice(0, 8)).toEqual([1, 2, 3, 4, 6, 8, 12, 16]);
    expect(Math.max(...ROUND_CHOICES)).toBe(MAX_ROUNDS);
  });

  test('cheapestRounds picks a choice of least model cost on 300 random histories (gated or not, resumed or redone, some plans compiled)', () => {
    const rand = seededRandom(26);
    for (let t = 0; t < 300; t++) {
      const o: RoundScheduleOptions = { ...base, gate: rand() < 0.5, flowsInOut: rand() < 0.7, planCompileRounds: Math.floor(rand() * 40), planCompileRoundsPerRound: rand() * 4 };
      const compiledSet = new Set(ROUND_CHOICES.filter(() => rand() < 0.2));
      const s = new RoundSchedule(o, (R) => compiledSet.has(R));
      const needs = Array.from({ length: 1 + Math.floor(rand() * 12) }, () => Math.floor(rand() ** 2 * 60));
      const resume = rand() < 0.5;
      const chosen = s.cheapestRounds(needs, resume);
      const costs = ROUND_CHOICES.map((R) => costOf(o, needs, R, resume, compiledSet.has(R)));
      const least = Math.min(...costs);
      expect(ROUND_CHOICES).toContain(chosen);
      expect(costs[ROUND_CHOICES.indexOf(chosen)]).toBeCloseTo(least, 9);
      // Ties go to the fewest rounds.
      expect(chosen).toBe(ROUND_CHOICES[costs.findIndex((c) => Math.abs(c - least) < 1e-9)]);
    }
  });

  test('finished moves adapt the rounds per start kind from the last ADAPT_WINDOW needs, and restore the BFS passes', () => {
    const s = new RoundSchedule({ ...base, planCompileRounds: 0, planCompileRoundsPerRound: 0 }, () => true);
    expect([s.rounds('cold'), s.rounds('warm'), s.bfs]).toEqual([4, 4, 16]);
    s.bfsFellShort();
    s.bfsFellShort();
    expect(s.bfs).toBe(64);
    s.movesDone([0, 0, 0, 1], 'warm');
    expect(s.bfs).toBe(16);
    expect(s.rounds('cold')).toBe(4);
    const warm = s.rounds('warm');
    expect(warm).toBe(s.cheapestRounds([0, 0, 0, 1], true));
    // Only the last ADAPT_WINDOW needs count: a long run of 12s outweighs the early small needs.
    s.movesDone(Array.from({ length: ADAPT_WINDOW }, () => 12), 'cold');
    expect(s.rounds('cold')).toBe(s.cheapestRounds(Array.from({ length: ADAPT_WINDOW }, () => 12), true));
    expect(s.rounds('warm')).toBe(warm);
  });

  test('fixed rounds never adapt; redone moves double up to MAX_ROUNDS; BFS passes stop at their bound', () => {
    const s = new RoundSchedule({ ...base, fixedRounds: true, maxBfsPasses: 40 }, () => true);
    s.movesDone([50, 60], 'cold');
    expect(s.rounds('cold')).toBe(4);
    for (let i = 0; i < 20; i++) s.doubleRounds('cold');
    expect(s.rounds('cold')).toBe(MAX_ROUNDS);
    for (let i = 0; i < 5; i++) s.bfsFellShort();
    expect(s.bfs).toBe(40);
  });

  test('a continuation serves the recent needs beyond what the move spent, or doubles the last call when none was that long', () => {
    const s = new RoundSchedule({ ...base, planCompileRounds: 0, planCompileRoundsPerRound: 0 }, () => true);
    s.movesDone([3, 5, 9, 20], 'cold');
    expect(s.continuation(4, 4, 'cold')).toBe(s.cheapestRounds([1, 5, 16], true));
    expect(s.continuation(25, 6, 'cold')).toBe(12);
    expect(s.continuation(25, MAX_ROUNDS, 'warm')).toBe(MAX_ROUNDS);
  });
});
