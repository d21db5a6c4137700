/** Snowflakes are decimal strings: compare by length, then lexically (no BigInt needed). */
export function compareIds(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function maxId(a: string | null | undefined, b: string | null | undefined): string | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return compareIds(a, b) >= 0 ? a : b;
}

const EPOCH = 1420070400000n;

export function idTime(id: string): number {
  return Number((BigInt(id) >> 22n) + EPOCH);
}
