import { type KeyboardEvent, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { createPortal } from 'react-dom';

export interface MenuEntry {
  /** The item's words, also its accessible name. */
  label: string;
  run: () => void;
  /** Drawn as a destructive action (leaving a server). */
  danger?: boolean;
}

/** Where a menu opens: the pointer's place, or beside the item it belongs to when opened from the keyboard. */
export interface MenuPlace {
  x: number;
  y: number;
}

/** Where a context menu opens for `event` on `element`: at the pointer, else (keyboard) beside the element. */
export function menuPlace(element: Element, event?: { clientX: number; clientY: number }): MenuPlace {
  // A contextmenu event from the keyboard (the ContextMenu key, Shift+F10) has no pointer: it comes at 0,0.
  if (event && (event.clientX !== 0 || event.clientY !== 0)) return { x: event.clientX, y: event.clientY };
  const box = element.getBoundingClientRect();
  return { x: box.right + 4, y: box.top };
}

/**
 * A context menu (WAI-ARIA menu pattern): `role="menu"` of `menuitem` buttons, the focus on the first item when it
 * opens, ArrowUp/ArrowDown (wrapping), Home and End move it, Enter or Space choose; Escape closes it and `onClose`
 * puts the focus back on the item it belongs to; Tab, a press outside or a resize close it. Kept inside the
 * window (a 375 px phone included) by moving it left or up when it would overflow.
 */
export function ContextMenu({
  label,
  place,
  entries,
  onClose,
}: {
  label: string;
  place: MenuPlace;
  entries: MenuEntry[];
  /** `refocus`: give the focus back to the item the menu belongs to (Escape, or a choice made). */
  onClose: (refocus: boolean) => void;
}) {
  const menu = useRef<HTMLDivElement>(null);
  const [at, setAt] = useState(place);
  const closeRef = useRef(onClose);
  closeRef.current = onClose;

  useLayoutEffect(() => {
    const element = menu.current;
    if (!element) return;
    const { width, height } = element.getBoundingClientRect();
    const margin = 4;
    setAt({
      x: Math.max(margin, Math.min(place.x, window.innerWidth - width - margin)),
      y: Math.max(margin, Math.min(place.y, window.innerHeight - height - margin)),
    });
    element.querySelector<HTMLElement>('[role="menuitem"]')?.focus();
  }, [place]);

  useEffect(() => {
    const outside = (event: Event) => {
      if (!menu.current?.contains(event.target as Node)) closeRef.current(false);
    };
    const resize = () => closeRef.current(false);
    document.addEventListener('pointerdown', outside, true);
    window.addEventListener('resize', resize);
    return () => {
      document.removeEventListener('pointerdown', outside, true);
      window.removeEventListener('resize', resize);
    };
  }, []);

  const onKeyDown = (event: KeyboardEvent) => {
    const items = [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];
    const index = items.indexOf(document.activeElement as HTMLElement);
    const focus = (next: number) => items[(next + items.length) % items.length]?.focus();
    if (event.key === 'Escape') onClose(true);
    else if (event.key === 'Tab') onClose(false);
    else if (event.key === 'ArrowDown') focus(index + 1);
    else if (event.key === 'ArrowUp') focus(index < 0 ? -1 : index - 1);
    else if (event.key === 'Home') focus(0);
    else if (event.key === 'End') focus(-1);
    else return;
    // Tab goes on to the next control of the page; the other keys are the menu's alone.
    if (event.key !== 'Tab') event.preventDefault();
    event.stopPropagation();
  };

  // In the page's body: inside the phone's navigation drawer, whose transform (sliding in) would otherwise be
  // what `position: fixed` is relative to.
  return createPortal(
    <div
      ref={menu}
      role="menu"
      aria-label={label}
      className="context-menu"
      style={{ left: at.x, top: at.y }}
      onKeyDown={onKeyDown}
      onContextMenu={(event) => event.preventDefault()}
    >
      {entries.map((entry) => (
        <button
          key={entry.label}
          type="button"
          role="menuitem"
          tabIndex={-1}
          className={entry.danger ? 'danger' : undefined}
          onClick={() => {
            onClose(true);
            entry.run();
          }}
        >
          {entry.label}
        </button>
      ))}
    </div>,
    document.body,
  );
}
