import { type ReactNode, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { takeFragmentParam } from '../../lib/fragment.ts';

type State = { kind: 'working' } | { kind: 'done' } | { kind: 'failed'; error: unknown };

/**
 * The shape every one-click emailed link shares (verify, authorise a new location): read the token from the
 * fragment, post it once, and say what happened.
 */
export function LinkResultPage({
  title,
  working,
  done,
  failed,
  run,
  after,
}: {
  title: string;
  working: string;
  done: string;
  failed: string;
  run: (token: string) => Promise<void>;
  /** Extra content under the result (links, a resend button). */
  after?: (state: State['kind']) => ReactNode;
}) {
  const { t } = useTranslation();
  const [state, setState] = useState<State>({ kind: 'working' });
  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const token = takeFragmentParam('token');
    if (!token) {
      setState({ kind: 'failed', error: null });
      return;
    }
    run(token).then(
      () => setState({ kind: 'done' }),
      (error: unknown) => setState({ kind: 'failed', error }),
    );
  }, [run]);
  return (
    <PageLayout title={title}>
      {state.kind === 'working' && (
        <p role="status" className="waiting">
          <span className="spinner" aria-hidden="true" /> {working}
        </p>
      )}
      {state.kind === 'done' && <Notice tone="success">{done}</Notice>}
      {state.kind === 'failed' && (
        <>
          <p role="alert" className="notice error">
            {failed}
          </p>
          {state.error && !isExpectedFailure(state.error) ? <ErrorNotice error={state.error} /> : null}
          {!state.error && <p>{t('reset.missing')}</p>}
        </>
      )}
      {after?.(state.kind)}
    </PageLayout>
  );
}

/** The link's own "invalid or expired" answer is what `failed` already says; other errors add a sentence. */
function isExpectedFailure(error: unknown): boolean {
  const code = (error as { displayCode?: () => string }).displayCode?.();
  return !!code && code.startsWith('INVALID_OR_EXPIRED_');
}
