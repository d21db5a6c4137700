/**
 * Runs `work` once for each index below `count`, at most `inFlight` at a time: each of `inFlight` workers takes
 * the next index as soon as its last one is done (the gateway and identify benchmarks' client loops).
 */
export async function eachInFlight(
  count: number,
  inFlight: number,
  work: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) await work(next++);
    }),
  );
}
