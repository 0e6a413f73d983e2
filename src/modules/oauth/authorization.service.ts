import { randomBytes } from 'node:crypto';
import { writeTransaction, type Db, type DbOrTx } from '../../kernel/db';
import { isUuid } from '../../kernel/ids';
import type { OAuthAuthorizationSession, OAuthClient, User } from '../../__generated__/prisma/client';
import type { SignedInUser } from './browser-session';
import { isClientIdUrl, type MetadataDocumentClients } from './client-metadata/metadata-clients';
import { oauthError } from './oauth.errors';
import * as repository from './oauth.repository';
import { describeScope, OPENID, resolveScopes, scopesCovered } from './oauth.scopes';
import { verifyPassword, UNKNOWN_USER_HASH } from './passwords';
import type { SignInThrottle } from './sign-in/sign-in-throttle';
import { requestedResources } from './resources';
import { AUTHORIZATION_CODE_TTL } from './oauth.constants';
import { opaqueToken, tokenHash } from './tokens';
import { AppError } from '../../kernel/errors';

/** How long an authorization session (and so its `forward_uri`) stays usable, in seconds. */
export const SESSION_TTL = 600;

/** Query of `GET /api/oauth/session/authorize`. */
export interface AuthorizeRequest {
  client_id?: string;
  redirect_uri?: string;
  response_type?: string;
  scope?: string;
  tenant?: string;
  state?: string;
  nonce?: string;
  silent?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  /** RFC 8707: the resources the tokens are for; repeated for several. */
  resource?: string | string[];
}

export interface AuthorizationSessionView {
  forward_uri: string;
  client_name: string;
  client_redirect_uri: string;
  scope: { id: string; description: string }[];
  is_authorization_approved: boolean;
  is_id_token_issued: boolean;
  expires_in: number;
}

export type AuthorizeOutcome =
  { kind: 'session'; session: AuthorizationSessionView } | { kind: 'redirect'; location: string };

export type OpenSession = OAuthAuthorizationSession & { client: OAuthClient };

/** Why the login page cannot continue a session. */
export class SessionUnusable extends Error {}

/** What a sign-in on the login page comes to. */
export type SignInResult =
  | { kind: 'signed-in'; user: User }
  /** Wrong e-mail address or password: one answer for both. */
  | { kind: 'refused' }
  /** Too many failures of the account or from the address: refused whatever the password, until the lock ends. */
  | { kind: 'locked'; retryAfterSeconds: number };

/** How users' e-mail addresses are stored (lowercased) and so looked up and counted. */
const normaliseEmail = (email: string) => email.trim().toLowerCase();

/** base64url of a SHA-256: what S256 challenges look like. */
const challengePattern = /^[A-Za-z0-9_-]{43}$/;

/** `redirectUri` with parameters added to its query (its own query kept, as RFC 6749 section 3.1.2 asks). */
function redirectWith(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== null) url.searchParams.append(name, value);
  return url.toString();
}

/**
 * The authorization endpoint: validates an authorization request, then either answers a session for
 * the login and consent page (`forward_uri`) or, for `silent` requests, redirects at once. Also the
 * steps of that page: sign in, approve or deny, each ending in a redirect to the client.
 */
export class AuthorizationService {
  constructor(
    private readonly db: Db,
    private readonly issuer: string,
    private readonly throttle: SignInThrottle,
    /** Clients whose client_id is the URL of their metadata document. */
    private readonly metadataClients: MetadataDocumentClients,
  ) {}

  /**
   * 400 (never a redirect) for any invalid parameter. `silent=true`: 302 to the redirect URI with a
   * code when the user is signed in and has approved these scopes, else with `login_required` or
   * `consent_required`. Otherwise 200 with a session whose `forward_uri` the user must visit.
   */
  async authorize(request: AuthorizeRequest, signedIn: SignedInUser | null): Promise<AuthorizeOutcome> {
    if (!request.client_id) throw oauthError('invalid_request', 'client_id is required');
    const client = isUuid(request.client_id)
      ? await repository.findClient(this.db, request.client_id)
      : isClientIdUrl(request.client_id)
        ? await this.metadataClients.fromDocument(request.client_id)
        : null;
    if (!client) throw oauthError('invalid_request', 'unknown client_id');
    if (request.tenant !== undefined && client.tenantId !== null && request.tenant !== client.tenantId) {
      throw oauthError('invalid_request', 'the client does not belong to this tenant');
    }
    if (!request.redirect_uri) throw oauthError('invalid_request', 'redirect_uri is required');
    if (!client.redirectUris.includes(request.redirect_uri)) {
      throw oauthError(
        'invalid_request',
        'redirect_uri is not one of the exact redirect URIs registered for the client',
      );
    }
    if (request.response_type === undefined) throw oauthError('invalid_request', 'response_type is required');
    if (request.response_type !== 'code') throw oauthError('unsupported_response_type', 'response_type must be code');
    // RFC 8707 section 2: with a valid redirect URI, invalid_target is answered by redirecting to it.
    let resources: string[];
    try {
      resources = requestedResources(request.resource, client, this.issuer);
    } catch (error) {
      if (!(error instanceof AppError) || !error.reason?.startsWith('invalid_target: ')) throw error;
      const description = error.reason.slice('invalid_target: '.length);
      return {
        kind: 'redirect',
        location: redirectWith(request.redirect_uri, {
          error: 'invalid_target',
          error_description: description,
          state: request.state,
          iss: this.issuer,
        }),
      };
    }
    const scopes = resolveScopes(request.scope, client.scopes, { openid: true });
    const codeChallenge = this.codeChallenge(request, client);
    if (request.silent !== undefined && request.silent !== 'true' && request.silent !== 'false') {
      throw oauthError('invalid_request', 'silent must be true or false');
    }

    const user = await this.userOf(signedIn, client);
    const approved =
      user !== null &&
      (await this.hasConsent(user.id, client.id, scopes)) &&
      (await this.approvalRefusal(user, client)) === null;
    if (request.silent === 'true') {
      const state = request.state;
      if (!user)
        return {
          kind: 'redirect',
          location: redirectWith(request.redirect_uri, { error: 'login_required', state, iss: this.issuer }),
        };
      if (!approved)
        return {
          kind: 'redirect',
          location: redirectWith(request.redirect_uri, { error: 'consent_required', state, iss: this.issuer }),
        };
      const code = await this.issueCode({
        client,
        userId: user.id,
        redirectUri: request.redirect_uri,
        scopes,
        resources,
        codeChallenge,
        nonce: request.nonce ?? null,
      });
      return { kind: 'redirect', location: redirectWith(request.redirect_uri, { code, state, iss: this.issuer }) };
    }

    const id = randomBytes(24).toString('base64url');
    await repository.insertAuthorizationSession(this.db, {
      id,
      clientId: client.id,
      redirectUri: request.redirect_uri,
      scopes,
      resources,
      state: request.state ?? null,
      nonce: request.nonce ?? null,
      codeChallenge,
      expiresAt: new Date(Date.now() + SESSION_TTL * 1000),
    });
    return {
      kind: 'session',
      session: {
        forward_uri: `${this.issuer}/oauth/sessions/${id}`,
        client_name: client.name,
        client_redirect_uri: request.redirect_uri,
        scope: scopes.map(describeScope),
        is_authorization_approved: approved,
        is_id_token_issued: scopes.includes(OPENID),
        expires_in: SESSION_TTL,
      },
    };
  }

  /** A session the login page can still act on. */
  async openSession(id: string): Promise<OpenSession> {
    const session = await repository.findAuthorizationSession(this.db, id);
    if (!session) throw new SessionUnusable('This sign-in request does not exist.');
    if (session.completedAt) throw new SessionUnusable('This sign-in request has already been used.');
    if (session.expiresAt <= new Date()) throw new SessionUnusable('This sign-in request has expired.');
    return session;
  }

  /**
   * The signed-in user if they belong to the client's tenant, or, for a self-registered client
   * (which belongs to no tenant), whichever tenant they belong to.
   */
  async userOf(signedIn: SignedInUser | null, client: OAuthClient): Promise<User | null> {
    if (!signedIn || !isUuid(signedIn.userId)) return null;
    if (client.tenantId !== null && signedIn.tenantId !== client.tenantId) return null;
    const user = await repository.findUser(this.db, signedIn.userId);
    return user && user.tenantId === signedIn.tenantId ? user : null;
  }

  /**
   * Why the user may not approve the client, or null when they may: a self-registered client needs
   * the user's tenant to allow such clients (off by default), a client identified by a metadata
   * document that the tenant has not refused them (allowed by default).
   */
  async approvalRefusal(user: User, client: OAuthClient): Promise<string | null> {
    if (client.tenantId !== null) return null;
    const settings = await repository.findTenantSettings(this.db, user.tenantId);
    if (client.metadataUrl !== null) {
      if (settings?.metadataDocumentClientsAllowed ?? true) return null;
      return (
        'Your account does not allow applications identified by a client metadata document. An administrator of ' +
        'your account can allow them; until then this application cannot be given access.'
      );
    }
    if (settings?.dynamicClientsAllowed) return null;
    return (
      'Your account does not allow applications that registered themselves. An administrator of your account ' +
      'can allow them; until then this application cannot be given access.'
    );
  }

  /**
   * Checks an e-mail and password within the session's tenant, throttled per account and per client
   * address (sign-in/sign-in-throttle.ts): the same steps and answers whether or not the account exists.
   */
  async signIn(
    session: OpenSession,
    credentials: { email: string; password: string; tenant?: string },
    clientAddress: string,
  ): Promise<SignInResult> {
    const { email, password } = credentials;
    // A self-registered client belongs to no tenant: the user names theirs on the form.
    const tenantId = session.client.tenantId ?? credentials.tenant?.trim().toLowerCase() ?? '';
    if (!isUuid(tenantId)) return { kind: 'refused' };
    const normalised = normaliseEmail(email);
    const admission = await this.throttle.admit(tenantId, normalised, clientAddress);
    if (admission.kind === 'locked') return admission;
    const user = await repository.findUserByEmail(this.db, tenantId, normalised);
    const valid = await verifyPassword(password, user?.passwordHash ?? UNKNOWN_USER_HASH);
    if (user && valid) {
      await this.throttle.succeeded(admission.attempt);
      return { kind: 'signed-in', user };
    }
    const retryAfterSeconds = await this.throttle.failed(admission.attempt);
    return retryAfterSeconds === null ? { kind: 'refused' } : { kind: 'locked', retryAfterSeconds };
  }

  async hasConsent(userId: string, clientId: string, scopes: string[]): Promise<boolean> {
    const consent = await repository.findConsent(this.db, userId, clientId);
    return consent !== null && scopesCovered(scopes, consent.scopes);
  }

  /**
   * Records the user's approval and issues the code: the redirect to the client. Null if the session was used
   * meanwhile.
   */
  async approve(session: OpenSession, user: User): Promise<string | null> {
    const refusal = await this.approvalRefusal(user, session.client);
    if (refusal) throw new SessionUnusable(refusal);
    const code = await writeTransaction(this.db, async (tx) => {
      if (!(await repository.completeAuthorizationSession(tx, session.id))) return null;
      await repository.addConsent(tx, user.id, session.clientId, session.scopes);
      return this.issueCode(
        {
          client: session.client,
          userId: user.id,
          redirectUri: session.redirectUri,
          scopes: session.scopes,
          resources: session.resources,
          codeChallenge: session.codeChallenge,
          nonce: session.nonce,
        },
        tx,
      );
    });
    return code === null ? null : redirectWith(session.redirectUri, { code, state: session.state, iss: this.issuer });
  }

  /** The user said no: the redirect carrying `access_denied`. */
  async deny(session: OpenSession): Promise<string | null> {
    if (!(await repository.completeAuthorizationSession(this.db, session.id))) return null;
    return redirectWith(session.redirectUri, { error: 'access_denied', state: session.state, iss: this.issuer });
  }

  /** PKCE (RFC 7636): S256 only; required of public clients, optional for confidential ones. */
  private codeChallenge(request: AuthorizeRequest, client: OAuthClient): string | null {
    const { code_challenge: challenge, code_challenge_method: method } = request;
    if (challenge === undefined) {
      if (method !== undefined) throw oauthError('invalid_request', 'code_challenge_method without code_challenge');
      if (!client.isConfidential)
        throw oauthError('invalid_request', 'a public client must send a PKCE code_challenge (S256)');
      return null;
    }
    if (method !== 'S256') throw oauthError('invalid_request', 'code_challenge_method must be S256');
    if (!challengePattern.test(challenge))
      throw oauthError('invalid_request', 'code_challenge must be the base64url SHA-256 of the code_verifier');
    return challenge;
  }

  private async issueCode(
    grant: {
      client: OAuthClient;
      userId: string;
      redirectUri: string;
      scopes: string[];
      resources: string[];
      codeChallenge: string | null;
      nonce: string | null;
    },
    db: DbOrTx = this.db,
  ): Promise<string> {
    const code = opaqueToken();
    await repository.insertAuthorizationCode(db, {
      codeHash: tokenHash(code),
      clientId: grant.client.id,
      userId: grant.userId,
      redirectUri: grant.redirectUri,
      scopes: grant.scopes,
      resources: grant.resources,
      codeChallenge: grant.codeChallenge,
      nonce: grant.nonce,
      expiresAt: new Date(Date.now() + AUTHORIZATION_CODE_TTL * 1000),
    });
    return code;
  }
}
