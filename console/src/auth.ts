/**
 * Sign-in through the service's own OAuth server: authorization code with PKCE (S256) for the
 * console's public client. Tokens live in memory only; the PKCE verifier and state survive the
 * redirect to the login page in sessionStorage and are deleted as soon as they are used.
 */
export interface Session {
  accessToken: string;
  refreshToken: string | null;
  scopes: Set<string>;
  tenantId: string;
  subject: string;
  expiresAt: number;
}

const PENDING = 'console.pending';
const CLIENT = 'console.client_id';

export const redirectUri = () => `${location.origin}/console/`;

function randomString(bytes = 32) {
  const data = crypto.getRandomValues(new Uint8Array(bytes));
  return base64Url(data);
}

function base64Url(data: Uint8Array) {
  let text = '';
  for (const byte of data) text += String.fromCharCode(byte);
  return btoa(text).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** The console's client id: from `?client_id=` (the link the shop's operator shares), else the last one used. */
export function clientIdFromPage(): string {
  const fromQuery = new URLSearchParams(location.search).get('client_id');
  if (fromQuery) localStorage.setItem(CLIENT, fromQuery);
  return fromQuery ?? localStorage.getItem(CLIENT) ?? '';
}

/** Sends the browser to the login and consent pages. */
export async function beginSignIn(clientId: string) {
  localStorage.setItem(CLIENT, clientId);
  const verifier = randomString();
  const state = randomString(16);
  const challenge = base64Url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
  );
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, clientId }));
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri(),
    response_type: 'code',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  location.assign(`/oauth/authorize?${query}`);
}

interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  scope: string;
  error?: string;
  error_description?: string;
}

function claims(token: string): { tenant_id?: string; sub?: string } {
  try {
    const payload = token.split('.')[1] ?? '';
    return JSON.parse(atob(payload.replaceAll('-', '+').replaceAll('_', '/')));
  } catch {
    return {};
  }
}

async function tokenRequest(parameters: Record<string, string>): Promise<Session> {
  const response = await fetch('/api/oauth/authorize', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(parameters),
  });
  const answer = (await response.json()) as TokenAnswer;
  if (!response.ok) throw new Error(answer.error_description ?? answer.error ?? `Sign-in failed (${response.status})`);
  const { tenant_id: tenantId = '', sub = '' } = claims(answer.access_token);
  return {
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token ?? null,
    scopes: new Set(answer.scope.split(' ').filter(Boolean)),
    tenantId,
    subject: sub,
    expiresAt: Date.now() + answer.expires_in * 1000,
  };
}

/** Back from the login page with `?code=`: exchanges it (once) and cleans the address bar. */
export async function completeSignIn(): Promise<Session | null> {
  const query = new URLSearchParams(location.search);
  const code = query.get('code');
  const error = query.get('error');
  const pending = sessionStorage.getItem(PENDING);
  if (!code && !error) return null;
  sessionStorage.removeItem(PENDING);
  history.replaceState(null, '', '/console/');
  if (error) throw new Error(query.get('error_description') ?? `Sign-in ended: ${error}`);
  if (!pending) throw new Error('This sign-in was not started here: sign in again.');
  const { verifier, state, clientId } = JSON.parse(pending) as { verifier: string; state: string; clientId: string };
  if (query.get('state') !== state) throw new Error('The sign-in answer does not match the request: sign in again.');
  return tokenRequest({
    grant_type: 'authorization_code',
    client_id: clientId,
    code: code!,
    redirect_uri: redirectUri(),
    code_verifier: verifier,
  });
}

export const refresh = (session: Session) =>
  tokenRequest({
    grant_type: 'refresh_token',
    client_id: localStorage.getItem(CLIENT) ?? '',
    refresh_token: session.refreshToken ?? '',
  });

/** Signs out by revoking the authorization (its access and refresh tokens). */
export async function signOut(session: Session) {
  await fetch('/api/oauth/revoke', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: localStorage.getItem(CLIENT) ?? '',
      token: session.refreshToken ?? session.accessToken,
    }),
  });
}
