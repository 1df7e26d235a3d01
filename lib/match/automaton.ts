/**
 * An Aho–Corasick automaton over line ids (SPEC §5.5): every pattern of a
 * set is found in ONE pass over a file's ids, whatever the number of
 * patterns, each pattern reporting at most `cap` occurrences (the first ones
 * in the direction of the scan). A pattern that has reported `cap` is
 * saturated and skipped from then on: its node is unlinked from the output
 * chains as they are walked (path compression), so a file of `}` with a
 * thousand all-`}` chunks costs O(n + patch + cap × patterns), not
 * O(n × patterns).
 *
 * The transitions are a dense table (state × column of the id) when the
 * patterns hold few distinct ids — a low-entropy file, runs of `}` — and
 * the table is small next to the scan ({@linkcode denseCells}): one array
 * read per id then, no hash probe and no failure-link walk. Otherwise a
 * hash of the trie's edges with failure links (any alphabet, memory linear
 * in the patterns).
 *
 * @module
 */

/**
 * Largest dense table (cells) built for a scan of `n` ids over patterns of
 * `total` ids: linear in the two, so building it never costs more than a
 * constant times the scan it replaces.
 */
export function denseCells(n: number, total: number): number {
  return 2 * (n + total) + 4096;
}

/** Open-addressing table (node, id) → child node, on typed arrays. */
class Edges {
  #mask: number;
  #node: Int32Array;
  #id: Int32Array;
  #child: Int32Array;
  #size = 0;

  constructor(expected: number) {
    let capacity = 64;
    while (capacity < 2 * expected) capacity *= 2;
    this.#mask = capacity - 1;
    this.#node = new Int32Array(capacity).fill(-1);
    this.#id = new Int32Array(capacity);
    this.#child = new Int32Array(capacity);
  }

  #slot(node: number, id: number): number {
    let h = Math.imul(node + 1, 0x9e3779b1) ^ Math.imul(id, 0x85ebca6b);
    h ^= h >>> 16;
    h = Math.imul(h, 0x7feb352d);
    h ^= h >>> 15;
    return h & this.#mask;
  }

  get(node: number, id: number): number {
    for (let s = this.#slot(node, id); this.#node[s]! >= 0; s = (s + 1) & this.#mask) {
      if (this.#node[s] === node && this.#id[s] === id) return this.#child[s]!;
    }
    return -1;
  }

  set(node: number, id: number, child: number): void {
    if (2 * (this.#size + 1) > this.#mask + 1) this.#grow();
    let s = this.#slot(node, id);
    while (this.#node[s]! >= 0) s = (s + 1) & this.#mask;
    this.#node[s] = node;
    this.#id[s] = id;
    this.#child[s] = child;
    this.#size++;
  }

  #grow(): void {
    const [node, id, child] = [this.#node, this.#id, this.#child];
    const capacity = 2 * (this.#mask + 1);
    this.#mask = capacity - 1;
    this.#node = new Int32Array(capacity).fill(-1);
    this.#id = new Int32Array(capacity);
    this.#child = new Int32Array(capacity);
    this.#size = 0;
    for (let s = 0; s < node.length; s++) if (node[s]! >= 0) this.set(node[s]!, id[s]!, child[s]!);
  }
}

/** Work done by a scan, for the counters of the tests. */
export interface ScanWork {
  /** Ids read plus failure links followed. */
  steps: number;
  /** Occurrences recorded. */
  reports: number;
  /** Cells of dense transition tables built (0 when the scan used the edge hash). */
  cells: number;
}

/**
 * An automaton over a set of id sequences (no id 0).
 *
 * @example
 * ```ts
 * const a = new IdAutomaton([Int32Array.of(1, 2), Int32Array.of(2)], 3);
 * const hits = a.scan(Int32Array.of(1, 2, 2, 1, 2), false, 10);
 * hits.map((h) => [...h]); // [[0, 3], [1, 2, 4]]
 * ```
 */
export class IdAutomaton {
  readonly #patterns: readonly Int32Array[];
  /**
   * Column of each id (1 + its rank among the patterns' distinct ids), 0 for
   * ids no pattern holds: those send the scan back to the root.
   */
  readonly #column: Int32Array;
  /** Dense form: `#table[node × #width + column]` = next node (failure links folded in). */
  readonly #table: Int32Array | undefined;
  readonly #width: number;
  /** Hash form: child of the root by id, the other trie edges, failure links followed while scanning. */
  readonly #rootNext: Int32Array | undefined;
  readonly #edges: Edges | undefined;
  readonly #depth: Int32Array;
  readonly #fail: Int32Array;
  /** Pattern ending at the node, or -1. */
  readonly #term: Int32Array;
  /** Nodes other than the root in breadth-first order (depth ascending). */
  readonly #order: Int32Array;
  /** Dense-table cells not yet reported to a scan's work counters. */
  #cells: number;

  /**
   * `patterns` must be distinct, non-empty, with ids in 1..`idCount`-1.
   * `scanLength`: the ids a scan will read (bounds the dense table, {@linkcode denseCells}).
   */
  constructor(patterns: readonly Int32Array[], idCount: number, scanLength = 0) {
    this.#patterns = patterns;
    const column = new Int32Array(idCount);
    let width = 1;
    let total = 0;
    for (const p of patterns) {
      total += p.length;
      for (let j = 0; j < p.length; j++) {
        const id = p[j]!;
        if (id <= 0 || id >= idCount) throw new RangeError("IdAutomaton: pattern ids must be in 1..idCount-1");
        if (column[id] === 0) column[id] = width++;
      }
    }
    this.#column = column;
    this.#width = width;
    const maxNodes = total + 1;
    const depth = new Int32Array(maxNodes);
    const fail = new Int32Array(maxNodes);
    const term = new Int32Array(maxNodes).fill(-1);
    const order = new Int32Array(total);
    let nodes = 1;
    let ordered = 0;
    if (maxNodes * width <= denseCells(scanLength, total)) {
      // Dense: the trie's edges in the table (0 = none: the root is nobody's
      // child), then, row by row in breadth order, every missing entry from
      // the failure node's row, which is complete by then (shallower).
      const table = new Int32Array(maxNodes * width);
      for (let k = 0; k < patterns.length; k++) {
        const p = patterns[k]!;
        let node = 0;
        for (let j = 0; j < p.length; j++) {
          const cell = node * width + column[p[j]!]!;
          let next = table[cell]!;
          if (next === 0) {
            next = nodes++;
            depth[next] = j + 1;
            table[cell] = next;
          }
          node = next;
        }
        term[node] = k;
      }
      for (let c = 1; c < width; c++) if (table[c]! !== 0) order[ordered++] = table[c]!;
      for (let q = 0; q < ordered; q++) {
        const v = order[q]!;
        const row = v * width;
        const failRow = fail[v]! * width;
        for (let c = 1; c < width; c++) {
          const u = table[row + c]!;
          if (u === 0) table[row + c] = table[failRow + c]!;
          else {
            fail[u] = table[failRow + c]!;
            order[ordered++] = u;
          }
        }
      }
      this.#table = table.subarray(0, nodes * width);
      this.#cells = nodes * width;
      this.#rootNext = undefined;
      this.#edges = undefined;
    } else {
      const rootNext = new Int32Array(idCount);
      const edges = new Edges(total);
      // Children lists for the breadth-first pass that sets failure links.
      const childrenOf: number[][] = [[]];
      const idOf = new Int32Array(maxNodes);
      for (let k = 0; k < patterns.length; k++) {
        const p = patterns[k]!;
        let node = 0;
        for (let j = 0; j < p.length; j++) {
          const id = p[j]!;
          let next = node === 0 ? (rootNext[id] || -1) : edges.get(node, id);
          if (next < 0) {
            next = nodes++;
            depth[next] = j + 1;
            childrenOf.push([]);
            idOf[next] = id;
            childrenOf[node]!.push(next);
            if (node === 0) rootNext[id] = next;
            else edges.set(node, id, next);
          }
          node = next;
        }
        term[node] = k;
      }
      for (const child of childrenOf[0]!) order[ordered++] = child;
      for (let q = 0; q < ordered; q++) {
        const node = order[q]!;
        for (const child of childrenOf[node]!) {
          const id = idOf[child]!;
          let f = fail[node]!;
          let target = -1;
          while (true) {
            target = f === 0 ? (rootNext[id] || -1) : edges.get(f, id);
            if (target >= 0 || f === 0) break;
            f = fail[f]!;
          }
          fail[child] = node === 0 || target < 0 ? 0 : target;
          order[ordered++] = child;
        }
      }
      this.#table = undefined;
      this.#cells = 0;
      this.#rootNext = rootNext;
      this.#edges = edges;
    }
    this.#depth = depth.subarray(0, nodes);
    this.#fail = fail.subarray(0, nodes);
    this.#term = term.subarray(0, nodes);
    this.#order = order.subarray(0, ordered);
  }

  /**
   * Scan `ids` forward (or backward with `reverse`: then the automaton must
   * hold reversed patterns) and return, per pattern, the start positions of
   * its first `cap` occurrences in scan order (ascending forward, descending
   * backward).
   */
  scan(ids: Int32Array, reverse: boolean, cap: number, work: ScanWork = { steps: 0, reports: 0, cells: 0 }): Int32Array[] {
    const count = this.#patterns.length;
    const n = ids.length;
    work.cells += this.#cells;
    this.#cells = 0;
    // Occurrences in one flat array, `cap` slots per pattern (a pattern
    // cannot occur more often than the scan is long).
    const slots = Math.max(0, Math.min(cap, n));
    const found = new Int32Array(count * slots);
    const foundCount = new Int32Array(count);
    const nodes = this.#depth.length;
    const depth = this.#depth;
    const fail = this.#fail;
    const term = this.#term;
    // Nearest terminal node on the failure chain (itself excluded), resolved
    // in breadth order (its failure node's is known), then rewritten to skip
    // saturated ones.
    const out = new Int32Array(nodes).fill(-1);
    for (const v of this.#order) {
      const f = fail[v]!;
      out[v] = f === 0 ? -1 : term[f]! >= 0 ? f : out[f]!;
    }
    // Whether a node may still report: cleared when it is found to have no
    // live pattern left, so most steps of a long scan test one byte.
    const reporting = new Uint8Array(nodes);
    for (let v = 1; v < nodes; v++) reporting[v] = term[v]! >= 0 || out[v]! >= 0 ? 1 : 0;
    const saturated = new Uint8Array(nodes);
    /** The first node at or after `v` on its output chain that is not saturated, compressing the path. */
    const live = (v: number): number => {
      let r = v;
      while (r >= 0 && saturated[r] === 1) r = out[r]!;
      while (v >= 0 && saturated[v] === 1 && v !== r) {
        const next = out[v]!;
        out[v] = r;
        v = next;
      }
      return r;
    };
    let livePatterns = slots > 0 ? count : 0;
    let reports = 0;
    /** Record every live pattern ending at `state` (the scan is at `i`). */
    const report = (state: number, i: number): void => {
      const own = term[state]! >= 0 && saturated[state] === 0;
      let t = own ? state : live(out[state]!);
      if (!own) {
        out[state] = t;
        if (t < 0) reporting[state] = 0;
      }
      while (t >= 0) {
        const k = term[t]!;
        found[k * slots + foundCount[k]!] = reverse ? i : i - depth[t]! + 1;
        reports++;
        if (++foundCount[k]! >= slots) {
          saturated[t] = 1;
          livePatterns--;
          if (t === state && out[state]! < 0) reporting[state] = 0;
        }
        const after = live(out[t]!);
        out[t] = after;
        t = after;
      }
    };
    const column = this.#column;
    let steps = 0;
    let state = 0;
    const table = this.#table;
    if (table !== undefined) {
      // One table read per id.
      const width = this.#width;
      let step = 0;
      for (; step < n && livePatterns > 0; step++) {
        const i = reverse ? n - 1 - step : step;
        state = table[state * width + column[ids[i]!]!]!;
        if (reporting[state] === 1) report(state, i);
      }
      steps += step;
    } else {
      const rootNext = this.#rootNext!;
      const edges = this.#edges!;
      for (let step = 0; step < n && livePatterns > 0; step++) {
        const i = reverse ? n - 1 - step : step;
        const id = ids[i]!;
        steps++;
        if (column[id] === 0) {
          state = 0;
          continue;
        }
        let next = -1;
        while (true) {
          next = state === 0 ? (rootNext[id] || -1) : edges.get(state, id);
          if (next >= 0 || state === 0) break;
          state = fail[state]!;
          steps++;
        }
        state = next < 0 ? 0 : next;
        if (reporting[state] === 1) report(state, i);
      }
    }
    work.steps += steps;
    work.reports += reports;
    const result: Int32Array[] = new Array(count);
    for (let k = 0; k < count; k++) result[k] = found.subarray(k * slots, k * slots + foundCount[k]!);
    return result;
  }
}
