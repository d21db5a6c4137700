import { type RouteDef, route } from './router.tsx';

/**
 * The route table. Each feature folder owns its pages; a new feature adds its lines here and nothing else.
 * The paths the server puts in emails and redirects (/verify, /reset, /authorize-ip, /auth/email-revert,
 * /auth/sso/callback, /oauth2/authorize, /oauth2/authorized) must not move.
 */
export const ROUTES: RouteDef[] = [
  route('/', 'signed-in', () => import('../features/home/HomePage.tsx')),
  route('/login', 'signed-out', () => import('../features/auth/SignInPage.tsx')),
];

export function findRoute(pathname: string): RouteDef | undefined {
  return ROUTES.find((candidate) => candidate.path === pathname);
}
