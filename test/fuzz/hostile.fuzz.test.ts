/**
 * Requests an attacker chooses, sent over a real socket to the listening service: for every JSON
 * operation of openapi.yaml and for GraphQL variables, bodies nested at the depth limit, one past
 * it and 100 000 levels deep, a megabyte of distinct keys, arrays at and past the value limit, a
 * megabyte of one-character strings, megabyte strings; and query strings, forms, headers and URLs past their limits. Each must get its
 * documented status in the envelope, and while each runs a `/healthz` probe on another connection
 * must keep answering: a request that held the event loop would leave the probe unanswered until
 * it was done (the probe answers are counted, never timed).
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BODY_LIMIT_BYTES } from '../../src/app';
import { OPENAPI_FILE } from '../../src/kernel/rest/openapi-yaml';
import {
  MAX_JSON_DEPTH,
  MAX_JSON_MEMBERS,
  MAX_JSON_VALUES,
  MAX_PARAMETERS,
  MAX_PARAMETER_BRACKETS,
} from '../../src/kernel/request-limits';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { assertMatchesContract, type RestResponse } from '../helpers/rest';

// Hundreds of bodies from one address: answered at once here (see hostile-senders.test.ts for the hold).
// Registrations are limited per address; these tests send many, and the limit has tests of its own.
const t = await startTestApp({ env: { REFUSED_BODY_HOLD_MS: '0', OAUTH_REGISTRATIONS_PER_MINUTE: '1000000' } });
await t.app.listen({ host: '127.0.0.1', port: 0 });
const port = (t.app.server.address() as AddressInfo).port;
let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant(t.rest, 'Hostile');
  const proxy = await t.rest.post('/api/storage/edge/proxies', {
    token: tenant.key,
    body: { data: { key: 'shop', routes: { path: '*', origin: { uri: 'https://shop.example.com' } } } },
  });
  expect(proxy.status).toBe(201);
});

interface Sent {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One request on a connection of its own; the answer, with its JSON body parsed. */
function send({ method, path, headers = {}, body }: Sent): Promise<RestResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        const json = String(response.headers['content-type'] ?? '').includes('json') && rawBody !== '';
        resolve({
          status: response.statusCode!,
          headers: Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, String(v)])),
          body: json ? JSON.parse(rawBody) : rawBody,
          rawBody,
        });
      });
    });
    // The service may answer (413, 400) before it has read the whole body, and close.
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * Runs `hostile` while a probe asks `/healthz` again and again on another connection: the
 * hostile answer, and how many probes were answered (all 200) by the time it came.
 */
async function whileProbing<T>(hostile: () => Promise<T>): Promise<{ answer: T; probes: number }> {
  let done = false;
  let probes = 0;
  const probing = (async () => {
    // At least one probe, even when the hostile answer is quicker than the first.
    do {
      const probe = await send({ method: 'GET', path: '/healthz' });
      expect(probe.status).toBe(200);
      probes += 1;
    } while (!done);
  })();
  const answer = await hostile().finally(() => {
    done = true;
  });
  await probing;
  return { answer, probes };
}

/** `{"data": …}` whose arrays nest `depth` levels in all (the outer object is the first). */
const nestedBody = (depth: number) => `{"data":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
/** Distinct keys filling a body of about `bytes`. */
const manyKeys = (bytes: number) => {
  const members: string[] = [];
  let size = 12;
  for (let index = 0; size < bytes; index += 1) {
    const member = `"k${index}":0`;
    members.push(member);
    size += member.length + 1;
  }
  return `{"data":{${members.join(',')}}}`;
};
const longArray = (items: number) => `{"data":[${new Array(items).fill('0').join(',')}]}`;
/** `{"data":["a","b",…]}`: one-character strings filling a body of about `bytes`. */
const manyStrings = (bytes: number) => `{"data":[${new Array(Math.floor((bytes - 12) / 4)).fill('"a"').join(',')}]}`;
const longString = (characters: number) => `{"data":"${'x'.repeat(characters)}"}`;

const expectDepthRefusal = (response: RestResponse) => {
  expect(response.status).toBe(400);
  expect(response.body.error.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
  expect(response.body.error.details).toEqual([
    { field: 'body', message: `nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels` },
  ]);
};

const expectShapeRefusal = (response: RestResponse, problem: 'members' | 'values') => {
  const message =
    problem === 'members'
      ? `has an object with more than ${MAX_JSON_MEMBERS} members`
      : `holds more than ${MAX_JSON_VALUES} values (array elements and object members)`;
  expect(response.status).toBe(400);
  expect(response.body.error.message).toContain(`body ${message}`);
  expect(response.body.error.details).toEqual([{ field: 'body', message }]);
};

const contract = parse(readFileSync(OPENAPI_FILE, 'utf8'));
const jsonOperations = Object.entries<Record<string, any>>(contract.paths).flatMap(([template, item]) =>
  Object.entries<any>(item)
    .filter(([, definition]) => definition?.requestBody?.content?.['application/json'])
    .map(([method, definition]) => {
      const schemes = (definition.security ?? []).flatMap((entry: object) => Object.keys(entry));
      return {
        id: definition.operationId as string,
        method: method.toUpperCase(),
        // Existing names where the fixtures have them: the body is what is under test, not the path.
        path: template.replace(/\{([^}]+)\}/g, (_, name: string) =>
          name === 'tenant_id' ? '00000000-0000-4000-8000-000000000000' : name === 'key' ? 'shop' : 'products',
        ),
        master: schemes.includes('masterKey'),
      };
    }),
);

describe('hostile JSON bodies, on every JSON operation', () => {
  it('has JSON operations to try', () => {
    expect(jsonOperations.length).toBeGreaterThan(20);
  });

  for (const operation of jsonOperations) {
    describe(`${operation.method} ${operation.path} (${operation.id})`, () => {
      const call = async (body: string) => {
        const answer = await send({
          method: operation.method,
          path: operation.path,
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${operation.master ? TEST_MASTER_KEY : tenant.key}`,
          },
          body,
        });
        await assertMatchesContract(operation.method, operation.path, answer);
        return answer;
      };

      it('takes a body nested at the limit to its own validation', async () => {
        const { answer, probes } = await whileProbing(() => call(nestedBody(MAX_JSON_DEPTH)));
        expect(answer.body?.error?.message ?? '').not.toContain('levels');
        expect(probes).toBeGreaterThan(0);
      });

      it('refuses a body one level past the limit, and one 100 000 levels deep, naming body and the limit', async () => {
        expectDepthRefusal(await call(nestedBody(MAX_JSON_DEPTH + 1)));
        const { answer, probes } = await whileProbing(() => call(nestedBody(100_000)));
        expectDepthRefusal(answer);
        expect(probes).toBeGreaterThan(0);
      });

      it('refuses a megabyte of small keys, long arrays and many small strings at the door, naming body and the limit', async () => {
        const { probes } = await whileProbing(async () => {
          expectShapeRefusal(await call(manyKeys(BODY_LIMIT_BYTES - 100)), 'members');
          expectShapeRefusal(await call(longArray(MAX_JSON_VALUES)), 'values');
          expectShapeRefusal(await call(manyStrings(BODY_LIMIT_BYTES - 100)), 'values');
        });
        expect(probes).toBeGreaterThan(0);
      });

      it('answers a megabyte string and arrays within the limits with documented statuses', async () => {
        const { probes } = await whileProbing(async () => {
          await call(longArray(MAX_JSON_VALUES - 1));
          await call(longString(BODY_LIMIT_BYTES - 100));
        });
        expect(probes).toBeGreaterThan(0);
        const tooLarge = await call(longString(BODY_LIMIT_BYTES));
        expect(tooLarge.status).toBe(413);
      });
    });
  }
});

describe('a hostile body arriving slowly', () => {
  it('is refused once its first bytes nest too deep, before the rest is sent, and holds nothing', async () => {
    const body = nestedBody(100_000);
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const received: Buffer[] = [];
    const answered = new Promise<void>((resolve) =>
      socket.on('data', (chunk: Buffer) => {
        received.push(chunk);
        if (Buffer.concat(received).includes('"meta":null}')) resolve();
      }),
    );
    socket.on('error', () => undefined);
    socket.write(
      `POST /api/instant/indexes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tenant.key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    // The first kilobyte is already deeper than the limit; the other 195 KiB are never sent.
    socket.write(body.slice(0, 1024));
    await answered;
    expect(Buffer.concat(received).toString('utf8')).toMatch(/^HTTP\/1\.1 400 [^]*deeper than 64 levels/);
    const probe = await send({ method: 'GET', path: '/healthz' });
    expect(probe.status).toBe(200);
    socket.destroy();
  });
});

describe('hostile GraphQL variables', () => {
  const graphql = (variables: string) =>
    send({
      method: 'POST',
      path: '/graphql',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.key}` },
      body: `{"query":"query($f: InventoryFilterInput) { inventory(filters: $f) { edges { node { id } } } }","variables":${variables}}`,
    });

  it('refuses variables nested past the limit and 100 000 deep, naming body and the limit', async () => {
    for (const depth of [MAX_JSON_DEPTH, 100_000]) {
      const { answer, probes } = await whileProbing(() => graphql(`{"f":${'['.repeat(depth)}${']'.repeat(depth)}}`));
      expect(answer.status).toBe(400);
      expect(answer.body.errors[0].message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
      expect(answer.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
      expect(probes).toBeGreaterThan(0);
    }
  });

  it('takes variables nested within the limit to validation', async () => {
    // The body, the variables object and the filter object: the list inside nests to the limit.
    const depth = MAX_JSON_DEPTH - 3;
    const answer = await graphql(`{"f":{"ids":${'['.repeat(depth)}${']'.repeat(depth)}}}`);
    expect(answer.status).toBe(200);
    expect(answer.body.errors[0].message).not.toContain('levels');
  });

  it('refuses documents nested past the limit, closed or not, before they are parsed', async () => {
    const document = (depth: number, closed: boolean) =>
      `mutation { updateSalesChannel(input: ${'['.repeat(depth)}${closed ? ']'.repeat(depth) : ''}) { __typename } }`;
    for (const query of [document(MAX_JSON_DEPTH, true), document(3_000, false), document(100_000, false)]) {
      const { answer, probes } = await whileProbing(() =>
        send({
          method: 'POST',
          path: '/graphql',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.key}` },
          body: JSON.stringify({ query }),
        }),
      );
      expect(answer.status).toBe(200);
      expect(answer.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
      expect(answer.body.errors[0].message).toContain(`nests deeper than ${MAX_JSON_DEPTH} levels`);
      expect(probes).toBeGreaterThan(0);
    }
  });

  it('refuses a megabyte of keys and a list past the value limit in the variables, naming body and the limit', async () => {
    const keys = manyKeys(BODY_LIMIT_BYTES - 300).slice('{"data":'.length, -1);
    const { probes } = await whileProbing(async () => {
      for (const variables of [
        `{"f":${keys}}`,
        `{"f":{"ids":[${new Array(MAX_JSON_VALUES).fill('"x"').join(',')}]}}`,
      ]) {
        const answer = await graphql(variables);
        expect(answer.status).toBe(400);
        expect(answer.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
        expect(answer.body.errors[0].message).toMatch(/more than (1000 members|100000 values)/);
      }
    });
    expect(probes).toBeGreaterThan(0);
  });

  it('answers a long list and a long string within the limits in the variables', async () => {
    const { probes } = await whileProbing(async () => {
      for (const variables of [
        `{"f":{"ids":[${new Array(MAX_JSON_VALUES - 10).fill('"x"').join(',')}]}}`,
        `{"f":{"sku":"${'x'.repeat(BODY_LIMIT_BYTES - 300)}"}}`,
      ]) {
        const answer = await graphql(variables);
        expect(answer.status).toBe(200);
        expect(answer.body.errors ?? answer.body.data).toBeTruthy();
        // graphql-js quotes a variable's whole value in its message: the answer stays short all the same.
        expect(answer.rawBody.length).toBeLessThan(4_000);
      }
    });
    expect(probes).toBeGreaterThan(0);
  });
});

describe('hostile query strings, forms, headers and URLs', () => {
  const list = (query: string, headers: Record<string, string> = {}) =>
    send({
      method: 'GET',
      path: `/api/storage/edge/proxies?${query}`,
      headers: { authorization: `Bearer ${tenant.key}`, ...headers },
    });

  it(`refuses more than ${MAX_PARAMETERS} query parameters, and 10 000 of them`, async () => {
    const many = (count: number) => Array.from({ length: count }, (_, index) => `p${index}=1`).join('&');
    const over = await list(many(MAX_PARAMETERS + 1));
    await assertMatchesContract('GET', '/api/storage/edge/proxies', over);
    expect(over.status).toBe(400);
    expect(over.body.error.details).toEqual([
      { field: 'query', message: `has more than ${MAX_PARAMETERS} parameters` },
    ]);
    // 10 000 parameters do not fit in the 16 KiB of a request head: Node refuses them before routing.
    const { answer, probes } = await whileProbing(() => list(many(10_000)));
    expect(answer.status).toBe(431);
    expect(answer.body.error.code).toBe(431);
    expect(probes).toBeGreaterThan(0);
    // The same many parameters in a shorter form still meet the parameter limit.
    const short = await list(Array.from({ length: 5_000 }, () => 'a').join('&'));
    expect(short.status).toBe(400);
  });

  it(`refuses a parameter name nested deeper than ${MAX_PARAMETER_BRACKETS} brackets`, async () => {
    const answer = await list(`filter${'[a]'.repeat(50)}=1`);
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toContain(`deeper than ${MAX_PARAMETER_BRACKETS} brackets`);
    const document = await send({
      method: 'DELETE',
      path: `/api/instant/indexes/products/documents?filter${'[a]'.repeat(5)}=1`,
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    expect(document.status).toBe(400);
  });

  it(`refuses a form with more than ${MAX_PARAMETERS} fields`, async () => {
    const fields = Array.from({ length: 50_000 }, (_, index) => `f${index}=1`).join('&');
    const { answer, probes } = await whileProbing(() =>
      send({
        method: 'POST',
        path: '/api/oauth/introspect',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=x&${fields}`,
      }),
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error.details).toEqual([
      { field: 'body', message: `has more than ${MAX_PARAMETERS} parameters` },
    ]);
    expect(probes).toBeGreaterThan(0);
  });

  it('answers 1 000 headers as it answers one, and a head over 16 KiB with 431', async () => {
    const headers = Object.fromEntries(Array.from({ length: 1_000 }, (_, index) => [`x-h${index}`, '1']));
    const { answer, probes } = await whileProbing(() => list('', headers));
    expect(answer.status).toBe(200);
    expect(probes).toBeGreaterThan(0);
    const long = await send({ method: 'GET', path: `/api/storage/edge/proxies?q=${'x'.repeat(16 * 1024)}` });
    expect(long.status).toBe(431);
    expect(long.body.error.message).toContain('16 KiB');
  });
});
