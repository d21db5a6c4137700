import { type Dispatch, type SetStateAction, useCallback, useEffect, useRef, useState } from 'react';

/**
 * What a section shows from the API: fetched when it mounts and whenever `source` (the API client it reads) changes,
 * again on `reload()`; undefined until the first answer. A failure goes to `onError`, the section's error notice,
 * which its actions share.
 */
export function useLoaded<T>(
  fetch: () => Promise<T>,
  source: unknown,
  onError: (error: unknown) => void,
): [T | undefined, Dispatch<SetStateAction<T | undefined>>, () => Promise<void>] {
  const [value, setValue] = useState<T | undefined>(undefined);
  // The latest callbacks, so that a caller's inline arrows do not make a new `reload` on every render.
  const latest = useRef({ fetch, onError });
  latest.current = { fetch, onError };
  // biome-ignore lint/correctness/useExhaustiveDependencies: `source` is the one input that should fetch again.
  const reload = useCallback(async () => {
    try {
      setValue(await latest.current.fetch());
    } catch (caught) {
      latest.current.onError(caught);
    }
  }, [source]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return [value, setValue, reload];
}
