import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { startClientSpan } from '../../kernel/tracing/http-client';
import { AddressError, PrivateAddressError, resolvePublicAddress } from '../../kernel/public-address';

export class WebhookTimeoutError extends Error {}

/** A webhook whose host does not resolve, or (the private one) resolves to a private address: nothing was sent. */
export { AddressError as WebhookAddressError, PrivateAddressError as WebhookPrivateAddressError };

const WEBHOOK = {
  what: 'webhook',
  fix: 'set BROADCAST_ALLOW_PRIVATE_WEBHOOKS=true to allow webhooks on your own network',
};

/**
 * POSTs `body` to a channel's webhook. The URL is chosen by a tenant, so its host must resolve to
 * public addresses only (unless `allowPrivate`), and the connection goes to the address checked,
 * so a second DNS answer cannot swap in an internal one. Resolves with the status and the first
 * bytes of the answer; rejects when no answer came within `timeoutMs` or there was no connection.
 * With tracing on, the request is a span whose trace context the webhook receives.
 */
export async function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowPrivate: boolean },
): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  const sent = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  const span = startClientSpan('POST', target, sent);
  if (!span) return post(target, sent, body, options);
  try {
    const answer = await post(target, sent, body, options);
    span.answered(answer.status);
    return answer;
  } catch (error) {
    span.failed(error);
    throw error;
  }
}

async function post(
  target: URL,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowPrivate: boolean },
): Promise<{ status: number; text: string }> {
  const origin = await resolvePublicAddress(target.hostname, options.allowPrivate, WEBHOOK);
  const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all)
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [origin]);
    else callback(null, origin.address, origin.family);
  };
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      target,
      {
        method: 'POST',
        headers,
        lookup,
        servername: target.hostname,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (text.length < 1000) text += chunk;
        });
        response.on('end', () => {
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 0, text: text.slice(0, 1000) });
        });
        response.on('error', reject);
      },
    );
    const timer = setTimeout(
      () => request.destroy(new WebhookTimeoutError(`no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(body);
  });
}
