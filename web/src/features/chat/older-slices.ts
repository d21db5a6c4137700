import { useCallback, useEffect, useState } from 'react';
import type { Message } from '../../api/chat-types.ts';

/** Rows of an older page put on the page per animation frame (docs/web.md#the-history-window). */
export const SLICE_ROWS = 10;

/**
 * A page of older messages loaded above the rows on screen is rendered a slice at a time, one slice of
 * SLICE_ROWS per animation frame, the newest first (the rows nearest the viewport): rendering a page of 50
 * rows in one commit was a long task (docs/performance.md#the-chat-view-at-scale). A page loaded while a
 * slice is pending joins the rows still to render. Everything else (a window replaced by a jump or "Jump to
 * present", live messages at the bottom, the oldest end dropped) is rendered at once. The pending frame is
 * cancelled when the list unmounts, so switching channel mid-slice leaves nothing behind.
 *
 * Returns the index in `items` of the first message to render (0: all of them) and `showAll`, which renders
 * the rest at once (a jump needs its target on the page).
 */
export function useOlderSlices(items: readonly Message[]): { start: number; showAll: () => void } {
  /** The oldest message of the window at the last render. */
  const [oldest, setOldest] = useState(items[0]?.id);
  /** The oldest message rendered; undefined when all are. */
  const [shownFrom, setShownFrom] = useState<string | undefined>(undefined);
  const first = items[0]?.id;
  let from = shownFrom;
  if (first !== oldest) {
    // The window's start moved. Older messages were put above the oldest one rendered when it is still there
    // and no longer first; otherwise there is nothing to hold back. (State adjusted during render: React renders
    // again at once, before committing.)
    const boundary = shownFrom ?? oldest;
    from = boundary !== undefined && indexOf(items, boundary) > 0 ? boundary : undefined;
    setOldest(first);
    if (from !== shownFrom) setShownFrom(from);
  }
  const start = from === undefined ? 0 : Math.max(0, indexOf(items, from));

  useEffect(() => {
    if (start === 0) return;
    const frame = requestAnimationFrame(() =>
      setShownFrom(start > SLICE_ROWS ? items[start - SLICE_ROWS]?.id : undefined),
    );
    return () => cancelAnimationFrame(frame);
  }, [start, items]);

  const showAll = useCallback(() => setShownFrom(undefined), []);
  return { start, showAll };
}

const indexOf = (items: readonly Message[], id: string) => items.findIndex((m) => m.id === id);
