/**
 * The changes between two versions of an OpenAPI 3.1 document, for the clients built on the old
 * one. No maintained OpenAPI diff on npm both handles 3.1 and runs offline (openapi-diff reads
 * Swagger 2 and OpenAPI 3.0; oasdiff is a Go binary), so these rules are ours:
 *
 * - operations: removed or renamed (operationId: generated SDK methods are named by it) are
 *   breaking; added ones are safe;
 * - requests (what clients send): a new required parameter or body field, an optional one made
 *   required, a removed one (the API refuses members and query parameters it does not know), a
 *   type, enum value, media type or range no longer accepted, a new or changed pattern or format
 *   are breaking; what widens what is accepted is safe;
 * - responses (what clients read): a removed status, a removed field or one that may now be
 *   missing, a new type a field may have (such as null) are breaking; a new status or enum value
 *   is dangerous (exhaustive switches in clients); new fields are safe.
 */
import { withSchemaTypes } from '../../src/kernel/rest/schema-types';
import type { Change, Criticality } from './changes';

type Schema = Record<string, any>;
type Direction = 'request' | 'response';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const MAX_DEPTH = 30;

/** Follows local `$ref`s (`#/components/...`) within `doc`. */
function resolver(doc: Schema) {
  return function resolve(node: Schema | undefined): Schema {
    let current = node ?? {};
    for (let hops = 0; typeof current.$ref === 'string' && hops < 20; hops++) {
      current = (current.$ref as string)
        .slice(2)
        .split('/')
        .reduce((at: any, part: string) => at?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
    }
    return current ?? {};
  };
}

function operationsOf(doc: Schema) {
  const operations = new Map<string, Schema>();
  for (const [path, item] of Object.entries<Schema>(doc.paths ?? {}))
    for (const method of METHODS) if (item[method]) operations.set(`${method.toUpperCase()} ${path}`, item[method]);
  return operations;
}

const typesOf = (schema: Schema): string[] =>
  Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];

export function openapiChanges(oldInput: Schema, newInput: Schema): Change[] {
  // Both with a `type` in every schema, as `npm run openapi` writes it now: restating a union's
  // types, or a reference's description beside it, changes nothing for clients.
  const oldDoc = withSchemaTypes(structuredClone(oldInput));
  const newDoc = withSchemaTypes(structuredClone(newInput));
  const changes: Change[] = [];
  const add = (criticality: Criticality, location: string, message: string) =>
    changes.push({ criticality, location, message });
  const resolveOld = resolver(oldDoc);
  const resolveNew = resolver(newDoc);

  /** Compares a schema of a request (what clients send) or of a response (what they read). */
  function compareSchema(direction: Direction, oldRaw: Schema, newRaw: Schema, at: string, depth = 0): void {
    if (depth > MAX_DEPTH) return;
    const o = resolveOld(oldRaw);
    const n = resolveNew(newRaw);
    const request = direction === 'request';
    const [oldTypes, newTypes] = [typesOf(o), typesOf(n)];
    if (oldTypes.length > 0 && newTypes.length > 0) {
      for (const type of oldTypes.filter((type) => !newTypes.includes(type)))
        add(request ? 'BREAKING' : 'SAFE', at, request ? `no longer accepts ${type}` : `is no longer ${type}`);
      for (const type of newTypes.filter((type) => !oldTypes.includes(type)))
        add(request ? 'SAFE' : 'BREAKING', at, request ? `now also accepts ${type}` : `may now be ${type}`);
    }
    if (Array.isArray(o.enum) || Array.isArray(n.enum)) {
      const oldValues: unknown[] = o.enum ?? [];
      const newValues: unknown[] = n.enum ?? [];
      const removed = oldValues.filter((value) => !newValues.includes(value));
      const added = newValues.filter((value) => !oldValues.includes(value));
      if (request) {
        if (!Array.isArray(n.enum)) {
          if (oldValues.length > 0) add('SAFE', at, 'accepts any value instead of an enumeration');
        } else if (!Array.isArray(o.enum)) add('BREAKING', at, `now accepts only ${JSON.stringify(newValues)}`);
        else {
          for (const value of removed) add('BREAKING', at, `no longer accepts ${JSON.stringify(value)}`);
          for (const value of added) add('SAFE', at, `now also accepts ${JSON.stringify(value)}`);
        }
      } else {
        for (const value of added) add('DANGEROUS', at, `may now be ${JSON.stringify(value)}`);
        for (const value of removed) add('SAFE', at, `is no longer ${JSON.stringify(value)}`);
      }
    }
    if (request) {
      for (const key of ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'])
        if (n[key] !== undefined && (o[key] === undefined || n[key] < o[key]))
          add('BREAKING', at, `${key} lowered to ${n[key]}${o[key] === undefined ? '' : ` (was ${o[key]})`}`);
      for (const key of ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'])
        if (n[key] !== undefined && (o[key] === undefined || n[key] > o[key]))
          add('BREAKING', at, `${key} raised to ${n[key]}${o[key] === undefined ? '' : ` (was ${o[key]})`}`);
      for (const key of ['pattern', 'format'])
        if (n[key] !== undefined && n[key] !== o[key])
          add('BREAKING', at, `${key} ${o[key] === undefined ? 'added' : 'changed'}: ${n[key]}`);
      if (n.additionalProperties === false && o.additionalProperties !== false && o.properties)
        add('BREAKING', at, 'no longer accepts members it does not list');
    }

    const oldProperties: Schema = o.properties ?? {};
    const newProperties: Schema = n.properties ?? {};
    const oldRequired: string[] = o.required ?? [];
    const newRequired: string[] = n.required ?? [];
    for (const name of Object.keys(oldProperties)) {
      const field = `${at}.${name}`;
      if (!(name in newProperties)) {
        if (request)
          add(
            n.additionalProperties === false ? 'BREAKING' : 'SAFE',
            field,
            n.additionalProperties === false ? 'removed: clients that send it are refused' : 'removed',
          );
        else add('BREAKING', field, 'removed');
        continue;
      }
      if (request && !oldRequired.includes(name) && newRequired.includes(name)) add('BREAKING', field, 'made required');
      if (!request && oldRequired.includes(name) && !newRequired.includes(name))
        add('BREAKING', field, 'may now be missing');
      compareSchema(direction, oldProperties[name], newProperties[name], field, depth + 1);
    }
    for (const name of Object.keys(newProperties).filter((name) => !(name in oldProperties))) {
      const required = request && newRequired.includes(name);
      add(required ? 'BREAKING' : 'SAFE', `${at}.${name}`, required ? 'new required field' : 'added');
    }
    if (o.items || n.items) compareSchema(direction, o.items ?? {}, n.items ?? {}, `${at}[]`, depth + 1);
    for (const key of ['oneOf', 'anyOf', 'allOf']) {
      const oldBranches: Schema[] = o[key] ?? [];
      const newBranches: Schema[] = n[key] ?? [];
      if (oldBranches.length === newBranches.length)
        oldBranches.forEach((branch, i) => compareSchema(direction, branch, newBranches[i]!, at, depth + 1));
      else if (oldBranches.length > 0 || newBranches.length > 0)
        add('DANGEROUS', at, `${key} has ${newBranches.length} alternatives (was ${oldBranches.length})`);
    }
  }

  const [oldOperations, newOperations] = [operationsOf(oldDoc), operationsOf(newDoc)];
  for (const [key, o] of oldOperations) {
    const n = newOperations.get(key);
    if (!n) {
      add('BREAKING', key, 'operation removed');
      continue;
    }
    if (o.operationId !== n.operationId)
      add('BREAKING', key, `operationId changed from ${o.operationId} to ${n.operationId}`);

    const parameters = (doc: Schema[], resolve: (node: Schema) => Schema) =>
      new Map(doc.map((raw) => resolve(raw)).map((parameter) => [`${parameter.in} ${parameter.name}`, parameter]));
    const oldParameters = parameters(o.parameters ?? [], resolveOld);
    const newParameters = parameters(n.parameters ?? [], resolveNew);
    for (const [name, parameter] of oldParameters) {
      const next = newParameters.get(name);
      const at = `${key}: parameter ${name}`;
      if (!next) add(parameter.in === 'header' ? 'DANGEROUS' : 'BREAKING', at, 'removed');
      else {
        if (!parameter.required && next.required) add('BREAKING', at, 'made required');
        compareSchema('request', parameter.schema ?? {}, next.schema ?? {}, at);
      }
    }
    for (const [name, parameter] of newParameters)
      if (!oldParameters.has(name))
        add(
          parameter.required ? 'BREAKING' : 'SAFE',
          `${key}: parameter ${name}`,
          parameter.required ? 'new required parameter' : 'added',
        );

    const [oldBody, newBody] = [resolveOld(o.requestBody), resolveNew(n.requestBody)];
    const bodyAt = `${key}: request body`;
    if (!o.requestBody && n.requestBody) {
      if (newBody.required) add('BREAKING', bodyAt, 'now required');
      else add('SAFE', bodyAt, 'added');
    } else if (o.requestBody && !n.requestBody) add('BREAKING', bodyAt, 'removed');
    else if (o.requestBody && n.requestBody) {
      if (!oldBody.required && newBody.required) add('BREAKING', bodyAt, 'now required');
      for (const [type, media] of Object.entries<Schema>(oldBody.content ?? {})) {
        const next = newBody.content?.[type];
        if (!next) add('BREAKING', bodyAt, `${type} no longer accepted`);
        else compareSchema('request', media.schema ?? {}, next.schema ?? {}, `${bodyAt} (${type})`);
      }
      for (const type of Object.keys(newBody.content ?? {}))
        if (!oldBody.content?.[type]) add('SAFE', bodyAt, `${type} now accepted`);
    }

    const oldResponses: Schema = o.responses ?? {};
    const newResponses: Schema = n.responses ?? {};
    for (const [status, raw] of Object.entries<Schema>(oldResponses)) {
      const at = `${key}: response ${status}`;
      if (!newResponses[status]) {
        add('BREAKING', at, 'removed');
        continue;
      }
      const [oldResponse, newResponse] = [resolveOld(raw), resolveNew(newResponses[status])];
      const oldJson = oldResponse.content?.['application/json']?.schema;
      const newJson = newResponse.content?.['application/json']?.schema;
      if (oldJson && !newJson) add('BREAKING', at, 'no longer has a JSON body');
      else if (oldJson && newJson) compareSchema('response', oldJson, newJson, at);
    }
    for (const status of Object.keys(newResponses))
      if (!oldResponses[status]) add('DANGEROUS', `${key}: response ${status}`, 'new status');
  }
  for (const key of newOperations.keys()) if (!oldOperations.has(key)) add('SAFE', key, 'operation added');
  return changes;
}
