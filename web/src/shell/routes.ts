import { type RouteDef, route } from './router.tsx';

/**
 * The route table. Each feature folder owns its pages; a new feature adds its lines here and nothing else.
 * The paths the server puts in emails and redirects (/verify, /reset, /authorize-ip, /auth/email-revert,
 * /auth/sso/callback, /oauth2/authorize, /oauth2/authorized, /oauth2/logout) must not move.
 */
export const ROUTES: RouteDef[] = [
  // `/` shows nothing of its own: the shell sends a signed-in person to the chat (CHAT_HOME), anyone else to
  // sign-in. Its chunk is the chat's, so the boot preloads what comes next.
  route('/', 'signed-in', () => import('../features/chat/ChatPage.tsx')),
  route('/settings', 'signed-in', () => import('../features/settings/SettingsPage.tsx')),
  route('/login', 'signed-out', () => import('../features/auth/SignInPage.tsx')),
  route('/register', 'signed-out', () => import('../features/auth/RegisterPage.tsx')),
  route('/forgot', 'any', () => import('../features/auth/ForgotPage.tsx')),
  route('/reset', 'any', () => import('../features/auth/ResetPage.tsx')),
  route('/verify', 'any', () => import('../features/auth/VerifyPage.tsx')),
  route('/auth/email-revert', 'any', () => import('../features/auth/EmailRevertPage.tsx')),
  route('/authorize-ip', 'any', () => import('../features/auth/AuthorizeIpPage.tsx')),
  route('/auth/sso/callback', 'any', () => import('../features/auth/SsoCallbackPage.tsx')),
  route('/oauth2/authorize', 'signed-in', () => import('../features/oauth2/ConsentPage.tsx')),
  route('/oauth2/authorized', 'any', () => import('../features/oauth2/AuthorizedPage.tsx')),
  // RP-initiated logout: the end-session endpoint sends the browser here (docs/oauth2.md#rp-initiated-logout).
  route('/oauth2/logout', 'any', () => import('../features/oauth2/LogoutPage.tsx')),
  // Chat (issue 18): every /channels/… URL is one page that reads the rest of the path itself.
  route('/channels/*', 'signed-in', () => import('../features/chat/ChatPage.tsx')),
  route('/invite/*', 'any', () => import('../features/chat/InvitePage.tsx')),
  // Developer portal (issue 15): the list, then one page per application.
  route('/developers', 'signed-in', () => import('../features/developers/DevelopersPage.tsx')),
  route('/developers/applications/*', 'signed-in', () => import('../features/developers/ApplicationPage.tsx')),
  // Admin panel (issue 15): one chunk for /admin and its sections; the page itself checks the account's ACLs.
  route('/admin', 'signed-in', () => import('../features/admin/AdminPage.tsx')),
  route('/admin/*', 'signed-in', () => import('../features/admin/AdminPage.tsx')),
];

/** Exact paths, or a prefix for paths ending in `/*` (the page reads the rest of the path). */
export function findRoute(pathname: string): RouteDef | undefined {
  return ROUTES.find((candidate) =>
    candidate.path.endsWith('/*') ? pathname.startsWith(candidate.path.slice(0, -1)) : candidate.path === pathname,
  );
}
