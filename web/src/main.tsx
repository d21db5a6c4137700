import { createRoot } from 'react-dom/client';
import { discover } from './api/discovery.ts';
import { i18next, initI18n } from './i18n/index.ts';
import { App } from './shell/App.tsx';
import { findRoute } from './shell/routes.ts';
import './styles.css';

/** Boot: discovery (where the API and gateway are) and the locale, in parallel; then the shell. */
async function boot(): Promise<void> {
  const root = createRoot(document.getElementById('root') as HTMLElement);
  // The first page's chunk loads alongside discovery and the locale instead of after them.
  void findRoute(window.location.pathname)
    ?.preload()
    .catch(() => undefined);
  const [discovery] = await Promise.allSettled([discover(), initI18n()]);
  if (discovery.status === 'rejected') {
    root.render(
      <main className="card" id="main">
        <h1>{i18next.t('app.name')}</h1>
        <p role="alert">{i18next.t('app.discoveryFailed')}</p>
        <button type="button" className="primary" onClick={() => window.location.reload()}>
          {i18next.t('app.reload')}
        </button>
      </main>,
    );
    return;
  }
  root.render(<App discovery={discovery.value} />);
}

void boot();
