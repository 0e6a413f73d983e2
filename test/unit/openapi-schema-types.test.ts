import { describe, expect, it } from 'vitest';
import { withSchemaTypes } from '../../src/kernel/rest/schema-types';

const route = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A document of one component `Thing` with the given property, typed, and that property afterwards. */
function typedProperty(property: Record<string, unknown>, schemas: Record<string, unknown> = {}) {
  const document = {
    components: { schemas: { Route: route, ...schemas, Thing: { type: 'object', properties: { value: property } } } },
  };
  return (withSchemaTypes(document).components.schemas.Thing as { properties: { value: unknown } }).properties.value;
}

describe('withSchemaTypes', () => {
  it('types a union by its members, with the items of its array member beside them', () => {
    const routes = { anyOf: [ref('Route'), { type: 'array', items: ref('Route') }], description: 'One or many.' };
    expect(typedProperty(routes)).toEqual({ type: ['object', 'array'], items: ref('Route'), ...routes });
  });

  it('types a union of objects as one object, and of scalars as their types', () => {
    const group = { type: 'object', properties: { any: { type: 'array', items: ref('Route') } } };
    expect(typedProperty({ anyOf: [ref('Route'), group] })).toEqual({ type: 'object', anyOf: [ref('Route'), group] });
    const scalars = [{ type: 'string', maxLength: 200 }, { type: 'number' }, { type: 'boolean' }];
    expect(typedProperty({ anyOf: scalars })).toEqual({ type: ['string', 'number', 'boolean'], anyOf: scalars });
  });

  it('writes a reference with a description of its own as the reference beside the description', () => {
    expect(typedProperty({ allOf: [ref('Route'), { description: 'The first route.' }] })).toEqual({
      ...ref('Route'),
      description: 'The first route.',
    });
  });

  it('states every JSON type for any value, and `true` for additional properties of any value', () => {
    expect(typedProperty({ readOnly: true, description: 'Ignored.' })).toEqual({
      type: ['object', 'array', 'string', 'number', 'boolean', 'null'],
      additionalProperties: true,
      readOnly: true,
      description: 'Ignored.',
    });
    expect(typedProperty({ type: 'object', additionalProperties: {} })).toEqual({
      type: 'object',
      additionalProperties: true,
    });
  });

  it('leaves typed schemas and references as they are, down to nested ones', () => {
    const nested = { type: 'array', items: { type: 'object', properties: { id: { type: ['string', 'null'] } } } };
    expect(typedProperty(nested)).toEqual(nested);
    expect(typedProperty(ref('Route'))).toEqual(ref('Route'));
    expect(typedProperty({ type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'null' }] } })).toEqual({
      type: 'array',
      items: { type: ['string', 'null'], anyOf: [{ type: 'string' }, { type: 'null' }] },
    });
  });

  it('types the schemas of parameters, bodies and responses of the paths too', () => {
    const schema = () => ({ anyOf: [ref('Route'), { type: 'array', items: ref('Route') }] });
    const document = withSchemaTypes({
      components: { schemas: { Route: route } },
      paths: {
        '/routes': {
          post: {
            parameters: [{ name: 'q', in: 'query', schema: {} }],
            requestBody: { content: { 'application/json': { schema: schema() } } },
            responses: { '200': { description: 'ok', content: { 'application/json': { schema: schema() } } } },
          },
        },
      },
    });
    const operation = document.paths['/routes'].post;
    expect(operation.parameters[0]!.schema).toHaveProperty('type');
    expect(operation.requestBody.content['application/json'].schema).toHaveProperty('type', ['object', 'array']);
    expect(operation.responses['200'].content['application/json'].schema).toHaveProperty('type', ['object', 'array']);
  });
});
