/**
 * The page a buyer opens from a `sandbox` redirect (`continue_url`): it shows the amount and
 * approves or declines the payment; authorizing the checkout again then answers what the buyer
 * chose. The page carries no credential: its unguessable id is the capability, as a payment
 * provider's hosted page would be.
 */
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { isUuid } from '../../kernel/ids';
import { parseFormFields } from '../../kernel/rest/form-body';
import type { Services } from '../context';
import * as repository from './payments.repository';

function sendPage(reply: FastifyReply, status: number, title: string, body: string) {
  return reply
    .status(status)
    .headers({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      'X-Frame-Options': 'DENY',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    })
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
        '<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto}' +
        'button{margin-right:1rem}</style>' +
        `</head><body><h1>${title}</h1>${body}</body></html>`,
    );
}

const STATUS_TEXT = {
  APPROVED: 'You approved this payment. Return to the store to finish the order.',
  DECLINED: 'You declined this payment. Return to the store to choose another way to pay.',
  USED: 'This payment is finished. Return to the store.',
} as const;

export function sandboxPages(app: FastifyInstance, services: Services) {
  const page = async (reply: FastifyReply, id: string, status = 200) => {
    const action = isUuid(id) ? await repository.findAction(services.db, id.toLowerCase()) : undefined;
    if (!action) return sendPage(reply, 404, 'Payment not found', '<p>No sandbox payment has this address.</p>');
    const amount = `${action.amount} ${action.currency} (minor units)`;
    if (action.status !== 'WAITING')
      return sendPage(reply, status, 'Sandbox payment', `<p>${amount}</p><p>${STATUS_TEXT[action.status]}</p>`);
    return sendPage(
      reply,
      status,
      'Sandbox payment',
      `<p>A test payment of ${amount}. No money moves.</p>` +
        `<form method="post" action="/payments/sandbox/${action.id}">` +
        `<button name="decision" value="approve">Approve</button>` +
        `<button name="decision" value="decline">Decline</button></form>`,
    );
  };

  app.register(async (scope) => {
    await scope.register(fastifyFormbody, { parser: parseFormFields });
    scope.get<{ Params: { id: string } }>('/payments/sandbox/:id', (request, reply) => page(reply, request.params.id));
    scope.post<{ Params: { id: string }; Body: Record<string, unknown> | undefined }>(
      '/payments/sandbox/:id',
      async (request, reply) => {
        const { id } = request.params;
        const decision = request.body?.decision;
        if (decision !== 'approve' && decision !== 'decline')
          return sendPage(reply, 400, 'Sandbox payment', '<p>Choose Approve or Decline.</p>');
        if (isUuid(id))
          await repository.moveAction(
            services.db,
            id.toLowerCase(),
            'WAITING',
            decision === 'approve' ? 'APPROVED' : 'DECLINED',
          );
        return page(reply, id);
      },
    );
  });
}
