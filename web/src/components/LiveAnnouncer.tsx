import { useEffect, useRef } from 'react';

/**
 * A polite live region for screen readers whose words are not page text: it lives in a closed shadow root, so
 * the accessibility tree (and so a screen reader) has it, while a search of the page's text (the browser's
 * find, a by-text test locator) finds what is on screen once, not again in the announcement
 * (docs/web.md#accessibility). The host draws nothing.
 */
export function LiveAnnouncer({ text, sequence = 0 }: { text: string; sequence?: number }) {
  const host = useRef<HTMLDivElement>(null);
  const region = useRef<HTMLDivElement | null>(null);
  useEffect(() => {
    const element = host.current;
    if (!element || region.current) return;
    const root = element.attachShadow({ mode: 'closed' });
    const live = document.createElement('div');
    live.setAttribute('role', 'status');
    live.setAttribute('aria-live', 'polite');
    live.setAttribute('aria-atomic', 'true');
    root.append(live);
    region.current = live;
  }, []);
  // A new `sequence` with the same words says them again: emptied first, then filled a moment later, so the
  // change is one a screen reader reads out rather than nothing.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the sequence is what asks for the words again
  useEffect(() => {
    const live = region.current;
    if (!live) return;
    if (live.textContent !== text || !text) {
      live.textContent = text;
      return;
    }
    live.textContent = '';
    const timer = window.setTimeout(() => {
      live.textContent = text;
    }, 100);
    return () => window.clearTimeout(timer);
  }, [text, sequence]);
  return <div ref={host} className="visually-hidden" />;
}
