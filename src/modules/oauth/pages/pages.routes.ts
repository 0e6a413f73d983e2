import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyFormbody from '@fastify/formbody';
import { AppError } from '../../../kernel/errors';
import { sendError, toAppError } from '../../../kernel/http-errors';
import { parseFormFields } from '../../../kernel/rest/form-body';
import { unstorableTextProblems } from '../../../kernel/validation';
import type { Services } from '../../context';
import { SessionUnusable, type OpenSession } from '../authorization.service';
import { UserInput } from '../oauth.schemas';
import { consentPage, errorPage, loginPage } from './templates';

type SessionRequest = FastifyRequest<{ Params: { id: string }; Body: Record<string, unknown> | undefined }>;

const field = (body: Record<string, unknown> | undefined, name: string) => {
  const value = body?.[name];
  return typeof value === 'string' ? value : undefined;
};

/** No user has a longer e-mail address or password: longer ones are refused before anything is counted or stored. */
const signInFieldLimits = {
  email: UserInput.shape.email.maxLength!,
  password: UserInput.shape.password.maxLength!,
  tenant: 64,
};

/** The reason of an error, without the fixed prefix of its status (`Bad request: ...; `). */
const reasonOf = (error: AppError) => error.message.replace(/^[^;]*; /, '');

/** When to come back, in the words of the login page: minutes, or hours for long locks. */
function retryMessage(seconds: number): string {
  const minutes = Math.ceil(seconds / 60);
  const wait = minutes < 120 ? `${minutes} minute${minutes === 1 ? '' : 's'}` : `${Math.ceil(minutes / 60)} hours`;
  return `Too many failed sign-in attempts. Try again in ${wait}.`;
}

/**
 * Headers of every page: never cached, never framed (clickjacking on the consent button), no
 * scripts at all. Forms may post to this service, and the consent form's redirect may go to the
 * client's redirect URI.
 */
function sendPage(reply: FastifyReply, status: number, html: string, redirectUri?: string) {
  const formTargets = ["'self'", ...(redirectUri ? [new URL(redirectUri).origin] : [])].join(' ');
  return reply
    .status(status)
    .headers({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': [
        "default-src 'none'",
        "style-src 'unsafe-inline'",
        `form-action ${formTargets}`,
        "frame-ancestors 'none'",
        "base-uri 'none'",
      ].join('; '),
      'X-Frame-Options': 'DENY',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    })
    .send(html);
}

/**
 * The login and consent page behind an authorization session's `forward_uri`, plus
 * `GET /oauth/authorize`, the browser-facing authorization endpoint that standard OAuth clients
 * send users to (it starts a session and redirects to its page). Server-rendered HTML, no scripts;
 * every form carries a CSRF token bound to the session and to a per-browser cookie.
 */
export function mountOAuthPages(app: FastifyInstance, services: Services) {
  const { authorization, browser } = services.oauth;

  const openSession = async (request: SessionRequest, reply: FastifyReply): Promise<OpenSession | null> => {
    try {
      return await authorization.openSession(request.params.id);
    } catch (error) {
      if (!(error instanceof SessionUnusable)) throw error;
      sendPage(reply, 400, errorPage('Cannot continue signing in', error.message));
      return null;
    }
  };

  const csrfRefused = (reply: FastifyReply) =>
    sendPage(
      reply,
      403,
      errorPage(
        'Cannot continue signing in',
        'The form has expired or was not sent from this page. Go back, reload and try again.',
      ),
    );

  /** A self-registered client's session: the user names their tenant on the login page. */
  const askTenant = (session: OpenSession, value = '') => (session.client.tenantId === null ? { value } : undefined);

  /** The user may not approve the client (their tenant does not allow self-registered ones): a page saying so. */
  const refusedApproval = (reply: FastifyReply, reason: string) =>
    sendPage(reply, 403, errorPage('This application cannot be given access', reason));

  const alreadyUsed = (reply: FastifyReply) =>
    sendPage(reply, 400, errorPage('Cannot continue signing in', 'This sign-in request has already been used.'));

  app.register(async (scope) => {
    await scope.register(fastifyFormbody, { parser: parseFormFields });
    // A form the parser refuses (too large, too many or repeated fields) is answered as a page too;
    // the envelope is left to what is not the sender's fault.
    scope.setErrorHandler((error, request, reply) => {
      const refused = toAppError(error);
      if (!refused || refused.status >= 500) return sendError(error, request, reply);
      reply.headers(refused.headers);
      return sendPage(reply, refused.status, errorPage('Invalid sign-in request', reasonOf(refused)));
    });
    // The text rule of every API input, answered as a page: what a page is sent reaches the database.
    scope.addHook('preHandler', async (request, reply) => {
      const { params, query, body } = request;
      const [problem] = unstorableTextProblems({ path: params, query, body });
      if (problem)
        return sendPage(reply, 400, errorPage('Invalid sign-in request', `${problem.field} ${problem.message}`));
    });

    scope.get('/oauth/authorize', async (request, reply) => {
      const query = request.query as Record<string, string | string[]>;
      // RFC 8707: `resource` is the one parameter that may be repeated.
      const repeated = Object.keys(query).find((name) => typeof query[name] !== 'string' && name !== 'resource');
      if (repeated)
        return sendPage(
          reply,
          400,
          errorPage('Invalid sign-in request', `invalid_request: ${repeated} appears more than once`),
        );
      try {
        const outcome = await authorization.authorize(
          query as Record<string, string> & { resource?: string | string[] },
          browser.signedInUser(request.headers.cookie),
        );
        return reply.redirect(outcome.kind === 'redirect' ? outcome.location : outcome.session.forward_uri, 302);
      } catch (error) {
        if (!(error instanceof AppError) || error.status !== 400) throw error;
        return sendPage(reply, 400, errorPage('Invalid sign-in request', error.message.replace(/^[^;]*; /, '')));
      }
    });

    scope.get('/oauth/sessions/:id', async (request: SessionRequest, reply) => {
      const session = await openSession(request, reply);
      if (!session) return reply;
      const browserId = browser.browserId(request.headers.cookie);
      if (browserId.setCookie) reply.header('Set-Cookie', browserId.setCookie);
      const csrf = browser.csrfToken(session.id, browserId.id);
      const user = await authorization.userOf(browser.signedInUser(request.headers.cookie), session.client);
      if (!user)
        return sendPage(
          reply,
          200,
          loginPage({ sessionId: session.id, csrf, clientName: session.client.name, askTenant: askTenant(session) }),
        );
      const refusal = await authorization.approvalRefusal(user, session.client);
      if (refusal) return refusedApproval(reply, refusal);
      if (await authorization.hasConsent(user.id, session.clientId, session.scopes)) {
        const location = await authorization.approve(session, user);
        return location ? reply.redirect(location, 303) : alreadyUsed(reply);
      }
      return sendPage(
        reply,
        200,
        consentPage({
          sessionId: session.id,
          csrf,
          clientName: session.client.name,
          email: user.email,
          scopes: session.scopes,
          ...(session.client.metadataUrl !== null
            ? { documentHost: new URL(session.client.metadataUrl).host }
            : { unverifiedHost: session.client.tenantId === null ? new URL(session.redirectUri).host : undefined }),
        }),
        session.redirectUri,
      );
    });

    scope.post('/oauth/sessions/:id/login', async (request: SessionRequest, reply) => {
      const session = await openSession(request, reply);
      if (!session) return reply;
      if (!browser.checkCsrf(session.id, request.headers.cookie, field(request.body, 'csrf_token')))
        return csrfRefused(reply);
      const typed = {
        email: field(request.body, 'email') ?? '',
        password: field(request.body, 'password') ?? '',
        tenant: field(request.body, 'tenant') ?? '',
      };
      const tooLong = (['email', 'password', 'tenant'] as const).find(
        (name) => typed[name].length > signInFieldLimits[name],
      );
      if (tooLong)
        return sendPage(
          reply,
          400,
          errorPage('Invalid sign-in request', `${tooLong} is longer than ${signInFieldLimits[tooLong]} characters`),
        );
      const result = await authorization.signIn(session, typed, request.ip);
      if (result.kind !== 'signed-in') {
        const csrf = browser.csrfToken(session.id, browser.browserId(request.headers.cookie).id);
        const locked = result.kind === 'locked';
        if (locked) reply.header('Retry-After', String(result.retryAfterSeconds));
        return sendPage(
          reply,
          locked ? 429 : 401,
          loginPage({
            sessionId: session.id,
            csrf,
            clientName: session.client.name,
            email: typed.email,
            askTenant: askTenant(session, typed.tenant),
            error: locked
              ? retryMessage(result.retryAfterSeconds)
              : session.client.tenantId === null
                ? 'Wrong account id, e-mail address or password.'
                : 'Wrong e-mail address or password.',
          }),
        );
      }
      reply.header('Set-Cookie', browser.loginCookie({ userId: result.user.id, tenantId: result.user.tenantId }));
      return reply.redirect(`/oauth/sessions/${encodeURIComponent(session.id)}`, 303);
    });

    scope.post('/oauth/sessions/:id/consent', async (request: SessionRequest, reply) => {
      const session = await openSession(request, reply);
      if (!session) return reply;
      if (!browser.checkCsrf(session.id, request.headers.cookie, field(request.body, 'csrf_token')))
        return csrfRefused(reply);
      const user = await authorization.userOf(browser.signedInUser(request.headers.cookie), session.client);
      if (!user) return reply.redirect(`/oauth/sessions/${encodeURIComponent(session.id)}`, 303);
      const decision = field(request.body, 'decision');
      if (decision !== 'approve' && decision !== 'deny') {
        return sendPage(reply, 400, errorPage('Cannot continue signing in', 'Choose Allow or Deny.'));
      }
      const refusal = decision === 'approve' ? await authorization.approvalRefusal(user, session.client) : null;
      if (refusal) return refusedApproval(reply, refusal);
      const location =
        decision === 'approve' ? await authorization.approve(session, user) : await authorization.deny(session);
      return location ? reply.redirect(location, 303) : alreadyUsed(reply);
    });
  });
}
