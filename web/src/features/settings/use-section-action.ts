import { useState } from 'react';
import { SudoCancelled } from '../../components/SudoPrompt.tsx';

/**
 * One action at a time in a settings section: `busy` names the running one (its button shows it), `message` is what
 * the last one did and `error` why it failed, for the section's notices. A sudo prompt the person cancelled is no
 * error. `describe` turns a failure into what the notice shows (the error itself by default).
 */
export function useSectionAction(describe: (caught: unknown) => unknown = (caught) => caught) {
  const [busy, setBusy] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const run = async (key: string, action: () => Promise<void>) => {
    setBusy(key);
    setError(null);
    setMessage(null);
    try {
      await action();
    } catch (caught) {
      if (!(caught instanceof SudoCancelled)) setError(describe(caught));
    } finally {
      setBusy(null);
    }
  };
  return { busy, message, setMessage, error, setError, run };
}
