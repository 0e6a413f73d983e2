import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { get_dmmf } from '@prisma/prisma-schema-wasm';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, sql } from '../helpers/db';

/**
 * The migrations are written by hand (Prisma's schema engine cannot run here), so this test is
 * what keeps them honest: the database they produce must have exactly the tables, columns, types,
 * nullability, primary keys, unique and plain indexes, foreign keys and enums of schema.prisma.
 */

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: 'scalar' | 'object' | 'enum';
  type: string;
  isList: boolean;
  isRequired: boolean;
  isId: boolean;
  isUnique: boolean;
  nativeType: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
  primaryKey: { fields: string[] } | null;
  uniqueFields: string[][];
}
interface DmmfIndex {
  model: string;
  type: 'id' | 'unique' | 'normal';
  fields: { name: string }[];
}

const schema = readFileSync(resolve(import.meta.dirname, '../../prisma/schema.prisma'), 'utf8');
const dmmf = JSON.parse(get_dmmf(JSON.stringify({ prismaSchema: schema }))) as {
  datamodel: {
    models: DmmfModel[];
    enums: { name: string; dbName?: string | null; values: { name: string; dbName?: string | null }[] }[];
    indexes: DmmfIndex[];
  };
};

const scalarTypes: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Boolean: 'boolean',
  DateTime: 'timestamp(3) without time zone',
  Json: 'jsonb',
  Bytes: 'bytea',
  Float: 'double precision',
  Decimal: 'numeric(65,30)',
};
const nativeTypes: Record<string, (args: string[]) => string> = {
  Uuid: () => 'uuid',
  Text: () => 'text',
  Timestamptz: (args) => `timestamp(${args[0] ?? 6}) with time zone`,
  Timestamp: (args) => `timestamp(${args[0] ?? 6}) without time zone`,
  VarChar: (args) => (args[0] ? `character varying(${args[0]})` : 'character varying'),
  Char: (args) => `character(${args[0] ?? 1})`,
  Integer: () => 'integer',
  SmallInt: () => 'smallint',
  BigInt: () => 'bigint',
  Decimal: (args) => `numeric(${args.join(',')})`,
  JsonB: () => 'jsonb',
  Date: () => 'date',
};

const tableOf = (model: DmmfModel) => model.dbName ?? model.name;
const modelByName = new Map(dmmf.datamodel.models.map((m) => [m.name, m]));
const columnOf = (model: DmmfModel, fieldName: string) => {
  const field = model.fields.find((f) => f.name === fieldName)!;
  return field.dbName ?? field.name;
};

function expectedColumnType(field: DmmfField): string {
  let type: string;
  if (field.kind === 'enum') {
    const enumDef = dmmf.datamodel.enums.find((e) => e.name === field.type)!;
    type = enumDef.dbName ?? enumDef.name;
  } else if (field.nativeType) {
    type = nativeTypes[field.nativeType[0]]!(field.nativeType[1]);
  } else {
    type = scalarTypes[field.type]!;
  }
  return field.isList ? `${type}[]` : type;
}

function expectedSchema() {
  const columns: string[] = [];
  const indexes: string[] = [];
  const foreignKeys: string[] = [];
  for (const model of dmmf.datamodel.models) {
    const table = tableOf(model);
    for (const field of model.fields) {
      if (field.kind === 'object') {
        if (field.relationFromFields?.length) {
          const target = modelByName.get(field.type)!;
          foreignKeys.push(
            `${table}(${field.relationFromFields.map((f) => columnOf(model, f)).join(',')}) -> ${tableOf(target)}(${field.relationToFields!.map((f) => columnOf(target, f)).join(',')}) on delete ${(field.relationOnDelete ?? 'Restrict').toLowerCase()}`,
          );
        }
        continue;
      }
      // Prisma creates scalar lists as nullable arrays.
      const nullable = field.isList || !field.isRequired;
      columns.push(`${table}.${field.dbName ?? field.name} ${expectedColumnType(field)}${nullable ? '' : ' not null'}`);
    }
  }
  for (const index of dmmf.datamodel.indexes) {
    const model = modelByName.get(index.model)!;
    const kind = index.type === 'id' ? 'primary' : index.type === 'unique' ? 'unique' : 'index';
    indexes.push(`${tableOf(model)} ${kind} (${index.fields.map((f) => columnOf(model, f.name)).join(',')})`);
  }
  const enums = dmmf.datamodel.enums.map(
    (e) => `${e.dbName ?? e.name}: ${e.values.map((v) => v.dbName ?? v.name).join(',')}`,
  );
  return { columns: columns.sort(), indexes: indexes.sort(), foreignKeys: foreignKeys.sort(), enums: enums.sort() };
}

async function actualSchema(url: string) {
  const columns = await sql<{ c: string }>(
    url,
    `SELECT c.table_name || '.' || c.column_name || ' ' || format_type(a.atttypid, a.atttypmod) ||
            CASE WHEN c.is_nullable = 'NO' THEN ' not null' ELSE '' END AS c
       FROM information_schema.columns c
       JOIN pg_attribute a ON a.attrelid = (quote_ident(c.table_schema) || '.' || quote_ident(c.table_name))::regclass
                          AND a.attname = c.column_name
      WHERE c.table_schema = 'public' AND c.table_name <> '_prisma_migrations'`,
  );
  const indexes = await sql<{ i: string }>(
    url,
    `SELECT t.relname || ' ' || CASE WHEN ix.indisprimary THEN 'primary' WHEN ix.indisunique THEN 'unique' ELSE 'index' END ||
            ' (' || string_agg(a.attname, ',' ORDER BY k.ord) || ')' AS i
       FROM pg_index ix
       JOIN pg_class t ON t.oid = ix.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
       CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      WHERE n.nspname = 'public' AND t.relname <> '_prisma_migrations'
      GROUP BY t.relname, ix.indexrelid, ix.indisprimary, ix.indisunique`,
  );
  const foreignKeys = await sql<{ f: string }>(
    url,
    `SELECT src.relname || '(' || (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
              JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum) || ') -> ' ||
            dst.relname || '(' || (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
              JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum) || ') on delete ' ||
            CASE con.confdeltype WHEN 'c' THEN 'cascade' WHEN 'r' THEN 'restrict' WHEN 'n' THEN 'setnull' WHEN 'd' THEN 'setdefault' ELSE 'noaction' END AS f
       FROM pg_constraint con
       JOIN pg_class src ON src.oid = con.conrelid
       JOIN pg_class dst ON dst.oid = con.confrelid
       JOIN pg_namespace n ON n.oid = src.relnamespace
      WHERE con.contype = 'f' AND n.nspname = 'public'`,
  );
  const enums = await sql<{ e: string }>(
    url,
    `SELECT t.typname || ': ' || string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) AS e
       FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
       JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname = 'public' GROUP BY t.typname`,
  );
  return {
    columns: columns.map((r) => r.c).sort(),
    indexes: indexes.map((r) => r.i).sort(),
    foreignKeys: foreignKeys.map((r) => r.f).sort(),
    enums: enums.map((r) => r.e).sort(),
  };
}

describe('prisma/schema.prisma and prisma/migrations', () => {
  it('describe the same database', async () => {
    const url = await createTestDatabase();
    const actual = await actualSchema(url);
    const expected = expectedSchema();
    expect(actual.columns).toEqual(expected.columns);
    expect(actual.indexes).toEqual(expected.indexes);
    expect(actual.foreignKeys).toEqual(expected.foreignKeys);
    expect(actual.enums).toEqual(expected.enums);
  });
});
