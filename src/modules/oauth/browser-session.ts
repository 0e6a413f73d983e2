import { createHmac, randomBytes } from 'node:crypto';
import { secretsEqual } from '../auth';

/** Cookie of a signed-in user: read by the login page and by the authorization session endpoint. */
export const LOGIN_COOKIE = 'cp_oauth_login';
/** Random per-browser value that CSRF tokens are bound to. */
export const BROWSER_COOKIE = 'cp_oauth_browser';
/** How long a user stays signed in on the login page. */
export const LOGIN_TTL_SECONDS = 12 * 3600;

export interface SignedInUser {
  userId: string;
  tenantId: string;
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

/**
 * The browser side of the login and consent page: a signed login cookie (HttpOnly, SameSite=Lax, so
 * a top-level redirect from the client's site carries it and silent authorization works) and CSRF
 * tokens, each an HMAC of the authorization session and a random per-browser cookie. Keys derive
 * from the master key, so every process accepts what another issued.
 */
export class BrowserSessions {
  private readonly key: Buffer;

  constructor(
    masterKey: string,
    private readonly secure: boolean,
  ) {
    this.key = createHmac('sha256', masterKey).update('oauth-browser-sessions').digest();
  }

  private mac(value: string) {
    return createHmac('sha256', this.key).update(value).digest('base64url');
  }

  private cookie(name: string, value: string, path: string, maxAge: number) {
    return `${name}=${value}; Path=${path}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${this.secure ? '; Secure' : ''}`;
  }

  /** `Set-Cookie` value that signs a user in for LOGIN_TTL_SECONDS. */
  loginCookie(user: SignedInUser): string {
    const value = `${user.userId}.${user.tenantId}.${Math.floor(Date.now() / 1000) + LOGIN_TTL_SECONDS}`;
    return this.cookie(LOGIN_COOKIE, `${value}.${this.mac(`login|${value}`)}`, '/', LOGIN_TTL_SECONDS);
  }

  /** The user a request's login cookie names, if its signature holds and it has not expired. */
  signedInUser(cookieHeader: string | undefined): SignedInUser | null {
    const raw = parseCookies(cookieHeader).get(LOGIN_COOKIE);
    const parts = raw?.split('.');
    if (!parts || parts.length !== 4) return null;
    const [userId, tenantId, expires, mac] = parts as [string, string, string, string];
    if (!secretsEqual(mac, this.mac(`login|${userId}.${tenantId}.${expires}`))) return null;
    if (Number(expires) * 1000 <= Date.now()) return null;
    return { userId, tenantId };
  }

  /** The browser's CSRF binding, and a `Set-Cookie` value when it has none yet. */
  browserId(cookieHeader: string | undefined): { id: string; setCookie?: string } {
    const existing = parseCookies(cookieHeader).get(BROWSER_COOKIE);
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return { id: existing };
    const id = randomBytes(32).toString('base64url');
    return { id, setCookie: this.cookie(BROWSER_COOKIE, id, '/oauth', LOGIN_TTL_SECONDS) };
  }

  csrfToken(sessionId: string, browserId: string): string {
    return this.mac(`csrf|${sessionId}|${browserId}`);
  }

  /** Whether a submitted form carries the CSRF token of this session and this browser. */
  checkCsrf(sessionId: string, cookieHeader: string | undefined, token: string | undefined): boolean {
    const browser = parseCookies(cookieHeader).get(BROWSER_COOKIE);
    return Boolean(browser && token && secretsEqual(token, this.csrfToken(sessionId, browser)));
  }
}
