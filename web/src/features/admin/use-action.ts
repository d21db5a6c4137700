import { useState } from 'react';
import { SudoCancelled } from '../../components/SudoPrompt.tsx';

/** Runs one admin action at a time, keeping its error for an `<ErrorNotice>` and the sentence it answers. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const result = await action();
      setDone(typeof result === 'string' ? result : null);
    } catch (caught) {
      if (!(caught instanceof SudoCancelled)) setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, done, run };
}

/** "a\nb, c" → ["a", "b", "c"]: one entry per line (commas accepted too), blanks dropped. */
export function lines(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
