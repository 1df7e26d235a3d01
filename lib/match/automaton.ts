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
 * @module
 */

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
  /** Child of the root by id (dense: the root is where most steps start). */
  readonly #rootNext: Int32Array;
  /** Ids any pattern holds: any other id sends the scan back to the root. */
  readonly #alphabet: Uint8Array;
  readonly #edges: Edges;
  readonly #depth: number[] = [0];
  readonly #fail: number[] = [0];
  /** Pattern ending at the node, or -1. */
  readonly #term: number[] = [-1];

  /** `patterns` must be distinct, non-empty, with ids in 1..`idCount`-1. */
  constructor(patterns: readonly Int32Array[], idCount: number) {
    this.#patterns = patterns;
    this.#rootNext = new Int32Array(idCount);
    this.#alphabet = new Uint8Array(idCount);
    let total = 0;
    for (const p of patterns) total += p.length;
    this.#edges = new Edges(total);
    // Children lists for the breadth-first pass that sets failure links.
    const childrenOf: number[][] = [[]];
    const idOf: number[] = [0];
    for (let k = 0; k < patterns.length; k++) {
      const p = patterns[k]!;
      let node = 0;
      for (let j = 0; j < p.length; j++) {
        const id = p[j]!;
        if (id <= 0 || id >= idCount) throw new RangeError("IdAutomaton: pattern ids must be in 1..idCount-1");
        this.#alphabet[id] = 1;
        let next = node === 0 ? (this.#rootNext[id] || -1) : this.#edges.get(node, id);
        if (next < 0) {
          next = this.#depth.length;
          this.#depth.push(j + 1);
          this.#fail.push(0);
          this.#term.push(-1);
          childrenOf.push([]);
          idOf.push(id);
          childrenOf[node]!.push(next);
          if (node === 0) this.#rootNext[id] = next;
          else this.#edges.set(node, id, next);
        }
        node = next;
      }
      this.#term[node] = k;
    }
    const queue: number[] = [...childrenOf[0]!];
    for (let q = 0; q < queue.length; q++) {
      const node = queue[q]!;
      for (const child of childrenOf[node]!) {
        const id = idOf[child]!;
        let f = this.#fail[node]!;
        let target = -1;
        while (true) {
          target = f === 0 ? (this.#rootNext[id] || -1) : this.#edges.get(f, id);
          if (target >= 0 || f === 0) break;
          f = this.#fail[f]!;
        }
        this.#fail[child] = node === 0 || target < 0 ? 0 : target;
        queue.push(child);
      }
    }
  }

  /**
   * Scan `ids` forward (or backward with `reverse`: then the automaton must
   * hold reversed patterns) and return, per pattern, the start positions of
   * its first `cap` occurrences in scan order (ascending forward, descending
   * backward).
   */
  scan(ids: Int32Array, reverse: boolean, cap: number, work: ScanWork = { steps: 0, reports: 0 }): Int32Array[] {
    const count = this.#patterns.length;
    const found: number[][] = Array.from({ length: count }, () => []);
    const nodes = this.#depth.length;
    const depth = Int32Array.from(this.#depth);
    const fail = Int32Array.from(this.#fail);
    const term = Int32Array.from(this.#term);
    // Nearest terminal node on the failure chain (itself excluded), then
    // rewritten to skip saturated ones.
    const out = new Int32Array(nodes).fill(-1);
    for (let v = 1; v < nodes; v++) out[v] = -2; // not yet known
    const outOf = (v: number): number => {
      if (v === 0) return -1;
      if (out[v] !== -2) return out[v]!;
      const f = fail[v]!;
      const r = f === 0 ? -1 : term[f]! >= 0 ? f : outOf(f);
      out[v] = r;
      return r;
    };
    // Resolve in breadth order (depth ascending) so the recursion stays shallow.
    const order = Array.from({ length: nodes }, (_, v) => v).sort((a, b) => depth[a]! - depth[b]!);
    for (const v of order) outOf(v);
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
    const rootNext = this.#rootNext;
    const alphabet = this.#alphabet;
    const edges = this.#edges;
    let live_ = count;
    let state = 0;
    let steps = 0;
    let reports = 0;
    const n = ids.length;
    for (let step = 0; step < n && live_ > 0; step++) {
      const i = reverse ? n - 1 - step : step;
      const id = ids[i]!;
      steps++;
      if (alphabet[id] !== 1) {
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
      if (state === 0) continue;
      // Every pattern ending here: the state itself, then its output chain.
      let t = term[state]! >= 0 && saturated[state] === 0 ? state : live(out[state]!);
      if (term[state]! < 0 || saturated[state] === 1) out[state] = t;
      while (t >= 0) {
        const k = term[t]!;
        const list = found[k]!;
        list.push(reverse ? i : i - depth[t]! + 1);
        reports++;
        if (list.length >= cap) {
          saturated[t] = 1;
          live_--;
        }
        const after = live(out[t]!);
        out[t] = after;
        t = after;
      }
    }
    work.steps += steps;
    work.reports += reports;
    return found.map((list) => Int32Array.from(list));
  }
}
