import { type ReactNode, useEffect, useId, useRef } from 'react';
import { useTranslation } from 'react-i18next';

/**
 * A modal dialog on the native <dialog> (focus trap, Escape and inert background come with it). The focus goes
 * to the child marked `data-autofocus` (the quick switcher's field), else to the first control, the close
 * button: React's `autoFocus` runs while the dialog is still closed, where nothing can take the focus. Closing
 * gives the focus back to the control that opened it.
 */
export function Dialog({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const { t } = useTranslation();
  useEffect(() => {
    const dialog = ref.current;
    // The control that opened the dialog: React removes the <dialog> before this effect's cleanup closes it, and a
    // dialog closed out of the document gives the focus back to nobody (the page's body), so it is done here.
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (dialog && !dialog.open) {
      dialog.showModal();
      dialog.querySelector<HTMLElement>('[data-autofocus]')?.focus();
    }
    return () => {
      dialog?.close();
      const lost =
        !document.activeElement ||
        document.activeElement === document.body ||
        !!dialog?.contains(document.activeElement);
      if (lost && opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      <div className="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="ghost icon" aria-label={t('chat.close')} onClick={onClose}>
          ✕
        </button>
      </div>
      {children}
    </dialog>
  );
}
